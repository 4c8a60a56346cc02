package store

import (
	"cmp"
	"slices"
	"time"

	"github.com/heraldhq/herald/heraldtype"
)

// Receipt is one receipt of the user's side about a delivery (issue 35
// item 1), as Store.RecordReceipts records it: an OutcomeReceipt attempt
// row on the delivery's timeline — its attempt the delivery's current
// one, its error code the event, its error the action — at most once per
// delivery and event. Like a provider report it is a timeline write, not
// a move of Moves: no delivery changes state.
type Receipt struct {
	// DeliveryID and NotificationID name the delivery, as its
	// data.messageId does (heraldtype.DeliveryKey): both must match, so a
	// guessed delivery id alone names nothing.
	DeliveryID     int64
	NotificationID string
	// UserID, when set, is the only user whose delivery the receipt may
	// name (a user token's sub); another user's delivery is answered
	// ReceiptNotFound, as a missing one. "" for a server key: any user.
	UserID string
	Event  heraldtype.ReceiptEvent
	Action string
	// At is when it happened; the stores record no earlier time than the
	// delivery's creation (a device clock behind). The caller clamps the
	// other side (no later than it received the receipt).
	At time.Time
}

// SplitReceipts moves the receipt rows a store read with a delivery's
// attempts (OutcomeReceipt) to its Receipts, keeping both in order. Both
// stores call it on every delivery they read, before LateReport.
func SplitReceipts(d *heraldtype.Delivery) {
	if !slices.ContainsFunc(d.Attempts, func(a heraldtype.Attempt) bool { return a.Outcome == heraldtype.OutcomeReceipt }) {
		return
	}
	attempts := d.Attempts[:0]
	for _, a := range d.Attempts {
		if a.Outcome != heraldtype.OutcomeReceipt {
			attempts = append(attempts, a)
			continue
		}
		d.Receipts = append(d.Receipts, heraldtype.DeliveryReceipt{Event: heraldtype.ReceiptEvent(a.ErrorCode), At: a.At, Action: a.Error})
	}
	if len(attempts) == 0 {
		attempts = nil
	}
	d.Attempts = attempts
}

// MaxReceiptBatch bounds one RecordReceipts call, whatever the caller's
// own bound (herald.Limits.MaxReceipts).
const MaxReceiptBatch = 10000

// CheckReceipts is the argument check of Store.RecordReceipts, which every
// store calls first.
func CheckReceipts(rs []Receipt) error {
	if len(rs) > MaxReceiptBatch {
		return heraldtype.FieldErrorf("receipts", "holds %d receipts, over %d", len(rs), MaxReceiptBatch)
	}
	for _, r := range rs {
		switch {
		case r.DeliveryID <= 0:
			return heraldtype.FieldErrorf("delivery_id", "must be positive")
		case r.NotificationID == "":
			return heraldtype.FieldErrorf("notification_id", "is required")
		case r.Event == "" || len(r.Event) > 32:
			return heraldtype.FieldErrorf("event", "must be a receipt event")
		case len(r.Action) > heraldtype.MaxReceiptLinkLen:
			return heraldtype.FieldErrorf("action", "is over %d bytes", heraldtype.MaxReceiptLinkLen)
		case r.At.IsZero():
			return heraldtype.FieldErrorf("at", "is required")
		}
	}
	return nil
}

// ReceiptOrder is the order a store writes a batch's receipts in: by
// delivery, then by event in the order of a message's life (delivered,
// opened, clicked, dismissed, read, archived), so that two batches naming
// the same receipts in other orders take the unique index's entries in
// one order and cannot deadlock each other on PostgreSQL, and a batch's
// receipts of one delivery read on its timeline (in write order) as they
// happen. It returns the indexes of rs.
func ReceiptOrder(rs []Receipt) []int {
	order := make([]int, len(rs))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int {
		ea, eb := rs[a].Event, rs[b].Event
		return cmp.Or(cmp.Compare(rs[a].DeliveryID, rs[b].DeliveryID), cmp.Compare(lifeOrder(ea), lifeOrder(eb)), cmp.Compare(ea, eb))
	})
	return order
}

// lifeOrder ranks an event in the order of a message's life; an event
// the vocabulary lacks comes last.
func lifeOrder(e heraldtype.ReceiptEvent) int {
	if i := slices.Index(receiptLife, e); i >= 0 {
		return i
	}
	return len(receiptLife)
}

var receiptLife = []heraldtype.ReceiptEvent{heraldtype.ReceiptDelivered, heraldtype.ReceiptOpened, heraldtype.ReceiptClicked,
	heraldtype.ReceiptDismissed, heraldtype.ReceiptRead, heraldtype.ReceiptArchived}
