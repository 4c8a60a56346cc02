package heraldtype

import "time"

// ReceiptEvent is what a receipt says happened to a message on the user's
// side (issue 35 item 1): the app reports the first four about a push
// (POST /v1/receipts), the inbox records seen, read, clicked and archived
// when the user marks an item (its read-state is the same kind of record). A delivery's
// timeline holds each event at most once (Delivery.Receipts).
type ReceiptEvent string

const (
	// ReceiptDelivered: the message reached the device.
	ReceiptDelivered ReceiptEvent = "delivered"
	// ReceiptOpened: the user opened the message (tapped the notification;
	// an e-mail's open pixel was fetched, or one of its links followed).
	ReceiptOpened ReceiptEvent = "opened"
	// ReceiptDismissed: the user swiped the notification away.
	ReceiptDismissed ReceiptEvent = "dismissed"
	// ReceiptClicked: the user chose one of the message's actions (a
	// button, a link): Receipt.Action names it — for an e-mail, the link
	// followed.
	ReceiptClicked ReceiptEvent = "clicked"
	// ReceiptSeen: the in-app inbox item was shown to the user (the app
	// marked it seen, or the user clicked it).
	ReceiptSeen ReceiptEvent = "seen"
	// ReceiptRead: the user marked the in-app inbox item read.
	ReceiptRead ReceiptEvent = "read"
	// ReceiptArchived: the user archived the in-app inbox item.
	ReceiptArchived ReceiptEvent = "archived"
)

// AppReceiptEvents are the events an app reports with a receipt; the
// inbox's own (seen, read, archived; clicked too) are recorded by marking
// the item.
var AppReceiptEvents = []ReceiptEvent{ReceiptDelivered, ReceiptOpened, ReceiptDismissed, ReceiptClicked}

// AppEvent reports whether e is one of AppReceiptEvents.
func (e ReceiptEvent) AppEvent() bool {
	switch e {
	case ReceiptDelivered, ReceiptOpened, ReceiptDismissed, ReceiptClicked:
		return true
	}
	return false
}

// MaxReceiptActionLen bounds the action of a receipt an app reports, in
// bytes.
const MaxReceiptActionLen = 64

// MaxReceiptLinkLen bounds the action of an e-mail's clicked receipt: the
// link that was followed (issue 35 item 2), at most as long as the links
// e-mail tracking rewrites. The stores hold any action to it.
const MaxReceiptLinkLen = 2048

// Receipt is one report of an app about a message it received: the
// message's messageId (the push data's data.messageId, Delivery.
// IdempotencyKey), the event and when it happened.
type Receipt struct {
	// MessageID is the push's data.messageId: "<notification id>.<delivery
	// id>" (DeliveryKey).
	MessageID string `json:"message_id"`
	// Event is one of AppReceiptEvents.
	Event ReceiptEvent `json:"event"`
	// At is when it happened on the device. Zero: when Herald receives
	// it. A time after that (a device clock ahead) is taken as that; a
	// time before the message was created (a clock behind) as its
	// creation: a receipt is never recorded outside the message's life.
	At time.Time `json:"at,omitzero"`
	// Action names what was clicked (a notification button's id), at most
	// MaxReceiptActionLen bytes; "" for none.
	Action string `json:"action,omitempty"`
}

// DeliveryReceipt is a receipt on a delivery's timeline
// (Delivery.Receipts).
type DeliveryReceipt struct {
	Event  ReceiptEvent `json:"event"`
	At     time.Time    `json:"at"`
	Action string       `json:"action,omitempty"`
}

// ReceiptResult is what became of one receipt of a batch.
type ReceiptResult string

const (
	// ReceiptRecorded: the receipt is now on its delivery's timeline.
	ReceiptRecorded ReceiptResult = "recorded"
	// ReceiptDuplicate: the delivery's timeline already had this event;
	// nothing changed.
	ReceiptDuplicate ReceiptResult = "duplicate"
	// ReceiptNotFound: no message has this id for the caller — none ever
	// had it, it was deleted after the retention period, or it is another
	// user's (answered alike, so that an answer reveals nothing). Counted,
	// not an error: an app that reports late is not at fault.
	ReceiptNotFound ReceiptResult = "not_found"
)

// ReceiptResults lists every result.
var ReceiptResults = []ReceiptResult{ReceiptRecorded, ReceiptDuplicate, ReceiptNotFound}

// ReceiptOutcome is one receipt's result, in the order of the batch.
type ReceiptOutcome struct {
	MessageID string        `json:"message_id"`
	Event     ReceiptEvent  `json:"event"`
	Result    ReceiptResult `json:"result"`
}

// ReceiptsResult answers a batch of receipts: how many had each result,
// and each receipt's own.
type ReceiptsResult struct {
	Recorded  int              `json:"recorded"`
	Duplicate int              `json:"duplicate"`
	NotFound  int              `json:"not_found"`
	Results   []ReceiptOutcome `json:"results"`
}
