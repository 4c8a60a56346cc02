package heraldclient

import (
	"context"
	"crypto/rand"
	"iter"
	"net/http"
	"net/url"
	"time"

	"github.com/heraldhq/herald/heraldtype"
)

// TriggerRequest is a trigger: one message for one user (UserID) or for
// many (UserIDs, up to 1000), of a notification type.
type TriggerRequest struct {
	// IdempotencyKey makes the trigger safe to repeat: the same key with
	// the same request answers the original notifications (Replayed);
	// with another request it is a conflict. Empty, Trigger makes a
	// random key for the call, which its retries share. It travels as the
	// Idempotency-Key header.
	IdempotencyKey string               `json:"-"`
	UserID         string               `json:"user_id,omitempty"`
	UserIDs        []string             `json:"user_ids,omitempty"`
	Type           string               `json:"type"`
	Title          string               `json:"title,omitempty"`
	Body           string               `json:"body,omitempty"`
	Data           map[string]string    `json:"data,omitempty"`
	Channels       []heraldtype.Channel `json:"channels,omitempty"`
	Priority       heraldtype.Priority  `json:"priority,omitempty"`
	// SendAt delays the first attempt; nil or past means now.
	SendAt *time.Time `json:"send_at,omitempty"`
	// DataOnly sends a data-only message the app renders itself.
	DataOnly bool `json:"data_only,omitempty"`
	// DedupeKey: a second notification of the type with the same key to
	// the same user within the type's window is not sent (it is recorded
	// rate_limited, code duplicate).
	DedupeKey string `json:"dedupe_key,omitempty"`
	// CancellationKey names the notifications for a later Cancel by key
	// (for this user or for every user), e.g. an order id.
	CancellationKey string `json:"cancellation_key,omitempty"`
}

// TriggerResult is what a trigger produced.
type TriggerResult struct {
	// ID is the notification's id when the trigger had one recipient.
	ID string `json:"id,omitempty"`
	// Notifications, one per recipient, in the order of the request.
	Notifications []EnqueuedNotification `json:"notifications"`
	// Replayed: the key matched an earlier trigger (the answer's
	// Idempotent-Replayed header); nothing new was written and these are
	// the original notifications.
	Replayed bool `json:"replayed"`
	// IdempotencyKey is the key the trigger was sent with: the request's,
	// or the one Trigger made.
	IdempotencyKey string `json:"-"`
}

// EnqueuedNotification is one notification of a TriggerResult.
type EnqueuedNotification struct {
	ID     string `json:"id"`
	UserID string `json:"user_id"`
	// Deliveries counts the deliveries recorded for it (one per channel
	// and device).
	Deliveries int `json:"deliveries"`
	// Digest, when the type is a digest, is the id of the digest the
	// trigger joined: it has no deliveries of its own and is sent with
	// the digest.
	Digest string `json:"digest,omitempty"`
}

// NotificationStatus is a notification with its status, and every
// delivery with every attempt (its timeline).
type NotificationStatus struct {
	heraldtype.Notification
	// Status sums up the deliveries: PENDING, DEFERRED, SENT,
	// PARTIALLY_SENT, CANCELLED, RATE_LIMITED, USER_OPTED_OUT or FAILED.
	Status heraldtype.HistoryStatus `json:"status"`
	// Reason is the error code that decided Status.
	Reason string `json:"reason,omitempty"`
	// ChannelStatus is the same rule per channel asked for.
	ChannelStatus map[heraldtype.Channel]heraldtype.HistoryStatus `json:"channel_status"`
	Deliveries    []heraldtype.Delivery                           `json:"deliveries"`
	// Escalations are the notification's escalation steps (pending,
	// fired or stopped, with why); none when its type has no escalation.
	Escalations []heraldtype.Escalation `json:"escalations,omitempty"`
}

// HistoryPage is one page of notifications, newest first.
type HistoryPage struct {
	Notifications []heraldtype.HistoryEntry `json:"notifications"`
	// NextCursor reads the next page; empty on the last.
	NextCursor string `json:"next_cursor,omitempty"`
}

// NewIdempotencyKey returns a random key (128 bits, base32 text) for a trigger.
func NewIdempotencyKey() string {
	return rand.Text()
}

// Trigger records a trigger's notifications (POST /v1/notifications) and
// returns once they are durable; delivery happens later. Every call
// carries an Idempotency-Key — the request's, or a random one made once
// for the call — so the retries of a call whose answer was lost are
// answered with the first trigger's notifications, never a second
// trigger. To make a trigger safe across processes (a job that may run
// twice), set IdempotencyKey from something the job knows (an order id).
func (c *Client) Trigger(ctx context.Context, r TriggerRequest) (TriggerResult, error) {
	key := r.IdempotencyKey
	if key == "" {
		key = NewIdempotencyKey()
	}
	var out TriggerResult
	res, err := c.do(ctx, call{method: http.MethodPost, path: "/v1/notifications", body: r, out: &out,
		header: http.Header{"Idempotency-Key": {key}}, safe: true})
	if err != nil {
		return TriggerResult{}, err
	}
	out.IdempotencyKey = key
	if res.header.Get("Idempotent-Replayed") == "true" {
		out.Replayed = true
	}
	return out, nil
}

// CancelRequest selects what Cancel cancels: NotificationID, or every
// notification triggered with CancellationKey — UserID's only when it is
// set, every user's otherwise.
type CancelRequest struct {
	NotificationID  string `json:"notification_id,omitempty"`
	CancellationKey string `json:"cancellation_key,omitempty"`
	UserID          string `json:"user_id,omitempty"`
}

// What a cancel did with a delivery (CancelledDelivery.Outcome).
const (
	CancelCancelled = "cancelled" // never sent
	CancelSent      = "sent"      // sent before the answer
	CancelNotSent   = "not_sent"  // ended otherwise (dead, skipped, …)
	CancelInFlight  = "in_flight" // still being sent when the server's cancel_wait ran out
)

// CancelResult is what a cancel found and decided: every delivery of the
// selected notifications with its outcome, and the counts of each.
type CancelResult struct {
	NotificationIDs []string            `json:"notification_ids"`
	Cancelled       int                 `json:"cancelled"`
	Sent            int                 `json:"sent"`
	NotSent         int                 `json:"not_sent"`
	InFlight        int                 `json:"in_flight"`
	Deliveries      []CancelledDelivery `json:"deliveries"`
	// DigestItems are the selected triggers that were waiting in a digest
	// not yet sent: each was taken out of its digest.
	DigestItems []CancelledDigestItem `json:"digest_items"`
}

// CancelledDigestItem is a digested trigger a cancel took out of its
// digest: the digest and the id the trigger was answered with.
type CancelledDigestItem struct {
	DigestID string `json:"digest_id"`
	ID       string `json:"id"`
}

// CancelledDelivery is one delivery of a CancelResult.
type CancelledDelivery struct {
	ID             int64                    `json:"id"`
	NotificationID string                   `json:"notification_id"`
	Channel        heraldtype.Channel       `json:"channel"`
	State          heraldtype.DeliveryState `json:"state"`
	// Outcome is CancelCancelled, CancelSent, CancelNotSent or
	// CancelInFlight.
	Outcome string `json:"outcome"`
}

// Cancel cancels notifications not yet sent (POST
// /v1/notifications/cancel) and returns once each delivery of them was
// either sent before the answer or will never be sent: the server waits
// for a delivery being sent. Cancelling again changes nothing, so a
// retried call is safe.
func (c *Client) Cancel(ctx context.Context, r CancelRequest) (CancelResult, error) {
	var out CancelResult
	_, err := c.do(ctx, call{method: http.MethodPost, path: "/v1/notifications/cancel", body: r, out: &out, safe: true})
	return out, err
}

// GetNotification reads a notification with its status, deliveries and
// attempts (GET /v1/notifications/{id}).
func (c *Client) GetNotification(ctx context.Context, id string) (NotificationStatus, error) {
	var n NotificationStatus
	_, err := c.do(ctx, call{method: http.MethodGet, path: pathf("/v1/notifications/%s", id), out: &n})
	return n, err
}

// ListNotifications reads one page of the notification history, newest
// first (GET /v1/notifications, or GET /v1/users/{id}/notifications when
// f.UserID is set): by type, status and creation time.
func (c *Client) ListNotifications(ctx context.Context, f heraldtype.HistoryFilter) (HistoryPage, error) {
	path := "/v1/notifications"
	if f.UserID != "" {
		path = pathf("/v1/users/%s/notifications", f.UserID)
	}
	q := newQuery().str("type", f.Type).str("status", string(f.Status)).time("from", f.From).time("to", f.To).
		str("cursor", f.Cursor).limit(f.Limit)
	var page HistoryPage
	_, err := c.do(ctx, call{method: http.MethodGet, path: path, query: url.Values(q), out: &page})
	return page, err
}

// UserNotifications reads one page of a user's notifications (GET
// /v1/users/{id}/notifications): what a user token may read of its own.
func (c *Client) UserNotifications(ctx context.Context, userID string, f heraldtype.HistoryFilter) (HistoryPage, error) {
	f.UserID = userID
	if userID == "" {
		return HistoryPage{}, &Error{Code: CodeInvalidArgument, Field: "id", Message: "id: is required"}
	}
	return c.ListNotifications(ctx, f)
}

// Notifications walks the whole history that f selects, page by page
// from f.Cursor (f.Limit is the page size).
func (c *Client) Notifications(ctx context.Context, f heraldtype.HistoryFilter) iter.Seq2[heraldtype.HistoryEntry, error] {
	return walk(ctx, f.Cursor, func(ctx context.Context, cursor string) ([]heraldtype.HistoryEntry, string, error) {
		f.Cursor = cursor
		p, err := c.ListNotifications(ctx, f)
		return p.Notifications, p.NextCursor, err
	})
}
