package store

import (
	"time"

	"github.com/heraldhq/herald/heraldtype"
)

// CancelParams selects the notifications a cancel ends (issue 36 item 4):
// NotificationIDs, or every notification of CancellationKey — of UserID
// only when it is set, of every user otherwise. Exactly one of the two
// selections is set (the caller validates).
type CancelParams struct {
	NotificationIDs []string
	CancellationKey string
	UserID          string
	// Reason is the error text of the cancelled deliveries and of their
	// attempt rows: what cancelled them.
	Reason string
	Now    time.Time
}

// CancelResult is what one CancelNotifications did and found, in one
// transaction: the notifications selected, and every delivery of them as
// the cancel left it.
type CancelResult struct {
	// NotificationIDs are the selected notifications, in id order.
	NotificationIDs []string
	// Deliveries are their deliveries after the cancel, in id order.
	Deliveries []CancelDelivery
	// DigestItems are the digested triggers this call took out of digests
	// not yet sent (issue 36 item 4): by the key, or by the ids the
	// triggers were answered with. They are marked cancelled in the
	// transaction, so no digest's message shows them. In (digest, item)
	// order.
	DigestItems []CancelledDigestItem
}

// CancelledDigestItem is one digested trigger a cancel took out of its
// digest.
type CancelledDigestItem struct {
	DigestID string
	ItemID   string
}

// CancelDelivery is one delivery of a cancelled notification.
type CancelDelivery struct {
	ID             int64
	NotificationID string
	Channel        heraldtype.Channel
	State          heraldtype.DeliveryState
	// Cancelled says this call moved it from pending to cancelled.
	Cancelled bool
	// LeaseUntil is when its lease ends, while it is leased (in flight).
	LeaseUntil time.Time
}

// CheckCancel validates p as every store's CancelNotifications expects
// it: exactly one selection, and a user only with a key.
func CheckCancel(p CancelParams) error {
	switch {
	case len(p.NotificationIDs) > 0 && (p.CancellationKey != "" || p.UserID != ""):
		return heraldtype.FieldErrorf("notification_id", "give a notification id or a cancellation key, not both")
	case len(p.NotificationIDs) == 0 && p.CancellationKey == "":
		if p.UserID != "" {
			return heraldtype.FieldErrorf("cancellation_key", "is required with user_id")
		}
		return heraldtype.FieldErrorf("notification_id", "give a notification id or a cancellation key")
	}
	return nil
}
