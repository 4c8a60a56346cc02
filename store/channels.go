package store

import (
	"context"
	"time"

	"github.com/heraldhq/herald/heraldtype"
)

// Channel delivery rules for Enqueue, beyond push (S3.6, S4.5):
//
//   - sms / email: when EnqueueParams.ChannelProviders names a provider for
//     the channel, one delivery to the user's phone / e-mail address
//     (Delivery.Address, captured now). A user without that address gets
//     a skipped delivery with error code "no_address"; an address
//     suppressed on that channel a skipped delivery with code
//     "suppressed" — never a silent drop.
//   - in_app, due now: one InboxItem for the user (returned in
//     EnqueueResult.Inbox) and one delivery with channel in_app, provider
//     "inbox", already sent (attempt 1, a sent attempt row, provider
//     message id = the item id): the inbox is written in the trigger's own
//     transaction, so it is the record the user is guaranteed to see. When
//     the user's preferences, as read in that transaction, refuse it
//     (heraldtype.Preferences.Refusal; never for a Notification.Critical
//     one), no item and an opted_out delivery with the refusal's code and
//     reason and an opted_out attempt row (issue 22).
//   - in_app, scheduled (SendAt after Now): no item yet; one pending
//     delivery due at SendAt, at_least_once. The worker completes it with
//     InboxSent, which writes the item then (issue 22).
//
// EnqueuedNotification.Deliveries counts every delivery row created,
// skipped ones included. Inbox items are deleted with their notification
// by PruneFinished.
//
// These rules, the push delivery rules (store.go) and the notification
// status (rules.StatusRules) are implemented once, for every store, in
// store/rules.

// InboxProvider is the provider name of in-app deliveries.
const InboxProvider = "inbox"

// Skip codes Enqueue records on deliveries it could not address.
const (
	CodeNoAddress  = "no_address"
	CodeSuppressed = "suppressed"
)

// Channels is the part of the store the non-push channels need. Store
// embeds it.
type Channels interface {
	// ListInbox returns the user's inbox newest first (archived items only
	// if f.Archived), the cursor of the next page ("" at the end) and the
	// user's unread count (unarchived, unread). ENOTFOUND if the user does
	// not exist.
	ListInbox(ctx context.Context, userID string, f heraldtype.InboxFilter) (items []heraldtype.InboxItem, next string, unread int, err error)
	// InboxSince returns up to limit unarchived items of the user with id >
	// afterID, oldest first: what a real-time stream missed.
	InboxSince(ctx context.Context, userID string, afterID int64, limit int) ([]heraldtype.InboxItem, error)
	// InboxState returns the user's unread and unseen counts
	// (rules.InboxStateSQL): what the real-time stream's state event
	// carries. An unknown user has none of either.
	InboxState(ctx context.Context, userID string) (heraldtype.InboxState, error)
	// MarkInboxRead marks the user's items among ids read (read_at = now if
	// unset) and returns how many changed; other users' ids are ignored.
	// Each item it marks also gets its read receipt on its delivery's
	// timeline (rules.InboxReceiptSQL, once per delivery), in the same
	// transaction: the inbox's read-state is a receipt (issue 35 item 1).
	MarkInboxRead(ctx context.Context, userID string, ids []int64, now time.Time) (int, error)
	// MarkAllInboxRead marks every unread item of the user read, with
	// their read receipts as MarkInboxRead.
	MarkAllInboxRead(ctx context.Context, userID string, now time.Time) (int, error)
	// ArchiveInboxItem archives one of the user's items; ENOTFOUND if the
	// user has no such item. The item's delivery gets its archived receipt
	// (at the item's first archived_at) in the same transaction.
	ArchiveInboxItem(ctx context.Context, userID string, id int64, now time.Time) error
	// MarkInboxSeen marks the user's items among ids seen (seen_at = now
	// if unset) and returns how many changed; other users' ids are
	// ignored. Each item it marks gets its seen receipt, in the same
	// transaction, as MarkInboxRead's read receipt.
	MarkInboxSeen(ctx context.Context, userID string, ids []int64, now time.Time) (int, error)
	// ClickInboxItem records that the user clicked one of their items
	// (action: what was clicked, "" for the item itself); ENOTFOUND if
	// the user has no such item. A click marks the item seen and read
	// too; each of clicked_at, seen_at and read_at is set only the first
	// time, and the item's delivery gets each of the three receipts once
	// (the clicked one with the first click's action), in the same
	// transaction.
	ClickInboxItem(ctx context.Context, userID string, id int64, action string, now time.Time) error

	// ListSuppressions lists suppressed addresses of a channel ("" for
	// all), newest first.
	ListSuppressions(ctx context.Context, channel heraldtype.Channel) ([]heraldtype.Suppression, error)
	// DeleteSuppression lifts a suppression (the address opted in again);
	// ENOTFOUND if there is none.
	DeleteSuppression(ctx context.Context, channel heraldtype.Channel, address string) error
}

// InboxNotifier is an optional capability of a store shared by several
// instances (PostgreSQL): the returned channel receives the id of every
// user who got a new inbox item on any instance, so the instance holding
// that user's real-time stream pushes it (S3.6). An empty user id means
// any user may have new items (sent when the listener (re)connects, or
// when a slow consumer's queue overflowed): the consumer re-checks every
// stream it holds. Closed when ctx ends.
type InboxNotifier interface {
	InboxEvents(ctx context.Context) <-chan string
}
