package herald

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/heraldhq/herald/heraldtype"
	"github.com/heraldhq/herald/store"
)

// Receipts from the app (issue 35 item 1). An app reports what happened to
// a push on the device — delivered, opened, dismissed, clicked — naming
// it by the data.messageId Herald sent with it (S0.5): the delivery's
// idempotency key, "<notification id>.<delivery id>". Each receipt lands
// on its delivery's timeline once (the stores' unique index decides); the
// in-app inbox records its read-state the same way when an item is marked
// (store.Channels). Escalation and the engagement counters will read
// these rows; nothing here moves a delivery.

// RecordOwnReceipts records the app's receipts for its user (a user
// token's sub): a message of another user is answered not_found, exactly
// as one Herald does not have, so an answer reveals nothing about other
// users' messages.
func (c *Client) RecordOwnReceipts(ctx context.Context, userID string, rs []heraldtype.Receipt) (heraldtype.ReceiptsResult, error) {
	if err := validID("user_id", userID); err != nil {
		return heraldtype.ReceiptsResult{}, err
	}
	return c.recordReceipts(ctx, userID, rs)
}

// RecordReceipts records receipts for any user's messages (a server
// relaying its apps' receipts).
//
// A batch holds 1 to Limits.MaxReceipts receipts; one that is malformed
// (an event that is not delivered, opened, dismissed or clicked, a message
// id that is not a messageId Herald sends, an action over 64 bytes) refuses
// the batch with invalid_argument naming it (receipts[2].event). A receipt
// whose message Herald does not have — never had, deleted after the
// retention period, another user's — is not an error: it is answered and
// counted not_found. A receipt the delivery's timeline already has is a
// duplicate and changes nothing, so a retried batch is harmless. A
// receipt's time after now is taken as now, one before the message's
// creation as its creation (device clocks drift both ways).
func (c *Client) RecordReceipts(ctx context.Context, rs []heraldtype.Receipt) (heraldtype.ReceiptsResult, error) {
	return c.recordReceipts(ctx, "", rs)
}

func (c *Client) recordReceipts(ctx context.Context, userID string, rs []heraldtype.Receipt) (heraldtype.ReceiptsResult, error) {
	if len(rs) == 0 || len(rs) > c.cfg.Limits.MaxReceipts {
		return heraldtype.ReceiptsResult{}, heraldtype.FieldErrorf("receipts", "must hold 1 to %d receipts, not %d", c.cfg.Limits.MaxReceipts, len(rs))
	}
	now := c.now().UTC()
	in := make([]store.Receipt, len(rs))
	for i, r := range rs {
		sr, err := storeReceipt(i, r, userID, now)
		if err != nil {
			return heraldtype.ReceiptsResult{}, err
		}
		in[i] = sr
	}
	results, err := c.store.RecordReceipts(ctx, in)
	if err != nil {
		return heraldtype.ReceiptsResult{}, err
	}
	out := heraldtype.ReceiptsResult{Results: make([]heraldtype.ReceiptOutcome, len(rs))}
	for i, res := range results {
		out.Results[i] = heraldtype.ReceiptOutcome{MessageID: rs[i].MessageID, Event: rs[i].Event, Result: res}
		switch res {
		case heraldtype.ReceiptRecorded:
			out.Recorded++
		case heraldtype.ReceiptDuplicate:
			out.Duplicate++
		default:
			out.NotFound++
		}
		c.metrics.Receipts.WithLabelValues(string(rs[i].Event), string(res)).Inc()
	}
	return out, nil
}

// storeReceipt checks the i-th receipt of a batch and makes it the store's:
// the delivery its message id names, the time clamped to now.
func storeReceipt(i int, r heraldtype.Receipt, userID string, now time.Time) (store.Receipt, error) {
	field := func(name string) string { return fmt.Sprintf("receipts[%d].%s", i, name) }
	notificationID, deliveryID, ok := parseMessageID(r.MessageID)
	switch {
	case r.MessageID == "":
		return store.Receipt{}, heraldtype.FieldErrorf(field("message_id"), "is required")
	case !ok:
		return store.Receipt{}, heraldtype.FieldErrorf(field("message_id"), "is not a message id Herald sends (the push data's messageId, \"<notification id>.<number>\")")
	case !r.Event.AppEvent():
		return store.Receipt{}, heraldtype.FieldErrorf(field("event"), "must be delivered, opened, dismissed or clicked, not %q", r.Event)
	case len(r.Action) > heraldtype.MaxReceiptActionLen:
		return store.Receipt{}, heraldtype.FieldErrorf(field("action"), "is %d bytes; the limit is %d", len(r.Action), heraldtype.MaxReceiptActionLen)
	}
	if err := validIdentifierText(field("action"), r.Action, heraldtype.MaxReceiptActionLen); err != nil {
		return store.Receipt{}, err
	}
	at := r.At.UTC()
	if r.At.IsZero() || at.After(now) {
		at = now
	}
	return store.Receipt{DeliveryID: deliveryID, NotificationID: notificationID, UserID: userID,
		Event: r.Event, Action: r.Action, At: at}, nil
}

// parseMessageID splits a messageId (heraldtype.DeliveryKey) into its
// notification id and delivery id.
func parseMessageID(s string) (string, int64, bool) {
	if len(s) > MaxIDLength+20 {
		return "", 0, false
	}
	i := strings.LastIndexByte(s, '.')
	if i <= 0 {
		return "", 0, false
	}
	id, err := strconv.ParseInt(s[i+1:], 10, 64)
	if err != nil || id <= 0 || strconv.FormatInt(id, 10) != s[i+1:] || validID("message_id", s[:i]) != nil {
		return "", 0, false
	}
	return s[:i], id, true
}
