package herald

import (
	"context"
	"strconv"

	"github.com/heraldhq/herald/heraldtype"
	"github.com/heraldhq/herald/store/rules"
)

// NotificationStatus is a notification with its status and its timeline:
// every delivery and every attempt of each (GET /v1/notifications/{id}).
// Status, Reason and ChannelStatus are those of the history (S3.9) — one
// vocabulary, one rule (store/rules.StatusRules), so the detail and the
// lists never disagree (issue 22).
type NotificationStatus struct {
	heraldtype.Notification
	// Status sums up all the notification's deliveries: PENDING,
	// DEFERRED, SENT, PARTIALLY_SENT, RATE_LIMITED, USER_OPTED_OUT or
	// FAILED.
	Status heraldtype.HistoryStatus `json:"status"`
	// Reason is the error code that decided Status (quiet_hours,
	// duplicate, type_disabled, no_deliveries, a provider's code, …).
	Reason string `json:"reason,omitempty"`
	// ChannelStatus is the same rule per channel the notification asked
	// for: {"in_app":"SENT","push":"DEFERRED"}.
	ChannelStatus map[heraldtype.Channel]heraldtype.HistoryStatus `json:"channel_status"`
	Deliveries    []heraldtype.Delivery                           `json:"deliveries"`
	// Escalations are the notification's escalation steps, pending, fired
	// or stopped, with why (issue 36 item 3); none when its type has no
	// escalation.
	Escalations []heraldtype.Escalation `json:"escalations,omitempty"`
}

// GetNotification returns a notification with its status, deliveries and
// attempts.
func (c *Client) GetNotification(ctx context.Context, id string) (NotificationStatus, error) {
	if err := validID("id", id); err != nil {
		return NotificationStatus{}, err
	}
	n, err := c.store.GetNotification(ctx, id)
	if err != nil {
		return NotificationStatus{}, err
	}
	ds, err := c.store.ListNotificationDeliveries(ctx, id)
	if err != nil {
		return NotificationStatus{}, err
	}
	if ds == nil {
		ds = []heraldtype.Delivery{}
	}
	es, err := c.store.ListEscalations(ctx, id)
	if err != nil {
		return NotificationStatus{}, err
	}
	st, reason, perChannel := rules.DeliveriesStatus(n.Channels, ds)
	return NotificationStatus{Notification: n, Status: st, Reason: reason, ChannelStatus: perChannel, Deliveries: ds,
		Escalations: es}, nil
}

// DeliveryFilter selects deliveries (GET /v1/deliveries).
type DeliveryFilter = heraldtype.DeliveryFilter

// DeliveryPage is one page of a delivery listing.
type DeliveryPage struct {
	Deliveries []heraldtype.Delivery `json:"deliveries"`
	// NextCursor fetches the next page; empty on the last page.
	NextCursor string `json:"next_cursor,omitempty"`
}

// ListDeliveries lists deliveries newest first, e.g. the dead letters
// (state=dead) by error code, type, user and time (S0.4).
func (c *Client) ListDeliveries(ctx context.Context, f DeliveryFilter) (DeliveryPage, error) {
	if err := validFilter(&f); err != nil {
		return DeliveryPage{}, err
	}
	ds, next, err := c.store.ListDeliveries(ctx, f)
	if err != nil {
		return DeliveryPage{}, err
	}
	if ds == nil {
		ds = []heraldtype.Delivery{}
	}
	return DeliveryPage{Deliveries: ds, NextCursor: next}, nil
}

func validFilter(f *DeliveryFilter) error {
	if f.State != "" && !f.State.Valid() {
		return heraldtype.FieldErrorf("state", "unknown state %q", f.State)
	}
	switch f.Channel {
	case "", heraldtype.ChannelPush, heraldtype.ChannelSMS, heraldtype.ChannelEmail, heraldtype.ChannelInApp:
	default:
		return heraldtype.FieldErrorf("channel", "unknown channel %q (known: push, sms, email, in_app)", f.Channel)
	}
	if f.Limit < 0 || f.Limit > 1000 {
		return heraldtype.FieldErrorf("limit", "must be between 1 and 1000")
	}
	if !f.From.IsZero() && !f.To.IsZero() && !f.From.Before(f.To) {
		return heraldtype.FieldErrorf("from", "must be before to")
	}
	for field, v := range map[string]string{"error_code": f.ErrorCode, "type": f.Type, "user_id": f.UserID, "notification_id": f.NotificationID, "cursor": f.Cursor} {
		if err := validText(field, v, 256); err != nil {
			return err
		}
	}
	return nil
}

// ReplayDelivery sends a dead or unknown delivery again (S0.4, S4.6). Its
// replay count goes up, and its next outcome is kept as the last replay
// result.
func (c *Client) ReplayDelivery(ctx context.Context, id int64) (heraldtype.Delivery, error) {
	if id <= 0 {
		return heraldtype.Delivery{}, heraldtype.FieldErrorf("id", "must be a positive delivery id")
	}
	d, err := c.store.ReplayDelivery(ctx, id, c.now().UTC())
	if err != nil {
		return heraldtype.Delivery{}, err
	}
	if c.worker != nil {
		c.worker.Notify()
	}
	return d, nil
}

// MaxBulkReplay bounds one bulk replay; run it again for more.
const MaxBulkReplay = 10000

// ReplayDeliveries replays every dead or unknown delivery matching f, at
// most MaxBulkReplay, and returns how many.
func (c *Client) ReplayDeliveries(ctx context.Context, f DeliveryFilter) (int, error) {
	if f.State != "" && f.State != heraldtype.StateDead && f.State != heraldtype.StateUnknown {
		return 0, heraldtype.FieldErrorf("state", "only dead or unknown deliveries can be replayed")
	}
	f.Cursor, f.Limit = "", 0
	if err := validFilter(&f); err != nil {
		return 0, err
	}
	n, err := c.store.ReplayDeliveries(ctx, f, c.now().UTC(), MaxBulkReplay)
	if err != nil {
		return 0, err
	}
	if n > 0 && c.worker != nil {
		c.worker.Notify()
	}
	return n, nil
}

// CountReplayDeliveries is ReplayDeliveries' dry run: how many dead or
// unknown deliveries matching f a replay would take — at most
// MaxBulkReplay, with capped true when more match (a replay takes the
// oldest MaxBulkReplay; the next one the rest). It counts through the
// dead-letters index and stops at the cap.
func (c *Client) CountReplayDeliveries(ctx context.Context, f DeliveryFilter) (n int, capped bool, err error) {
	if f.State != "" && f.State != heraldtype.StateDead && f.State != heraldtype.StateUnknown {
		return 0, false, heraldtype.FieldErrorf("state", "only dead or unknown deliveries can be replayed")
	}
	f.Cursor, f.Limit = "", 0
	if err := validFilter(&f); err != nil {
		return 0, false, err
	}
	n, err = c.store.CountReplayable(ctx, f, MaxBulkReplay)
	if err != nil {
		return 0, false, err
	}
	if n > MaxBulkReplay {
		return MaxBulkReplay, true, nil
	}
	return n, false, nil
}

// ParseDeliveryID parses a delivery id from a path or argument.
func ParseDeliveryID(s string) (int64, error) {
	id, err := strconv.ParseInt(s, 10, 64)
	if err != nil || id <= 0 {
		return 0, heraldtype.FieldErrorf("id", "%q is not a delivery id", s)
	}
	return id, nil
}
