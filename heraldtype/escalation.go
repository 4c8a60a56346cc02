package heraldtype

import "time"

// EscalationStep is one step of a notification type's escalation (issue
// 36 item 3): when none of the notification's messages so far has had
// the receipt Unless within After of the notification's send, the step
// sends the notification again on Channels.
type EscalationStep struct {
	// After is how long after the notification's send the step waits.
	After time.Duration `json:"after"`
	// Unless is the receipt that makes the step unnecessary: read (the
	// inbox), opened, delivered or clicked.
	Unless ReceiptEvent `json:"unless"`
	// Channels are the channels the step sends on.
	Channels []Channel `json:"channels"`
}

// EscalationEvents are the receipts an escalation step may wait for.
var EscalationEvents = []ReceiptEvent{ReceiptRead, ReceiptOpened, ReceiptDelivered, ReceiptClicked}

// SourceEscalation is the Source.Kind of a notification an escalation
// step sent: Source.ID is the escalated notification's id, Count the
// step (1 for the first).
const SourceEscalation = "escalation"

// States of an escalation step: pending until it is due; then fired (it
// sent its channels) or stopped (a receipt came first, or the
// notification was cancelled).
const (
	EscalationPending = "pending"
	EscalationFired   = "fired"
	EscalationStopped = "stopped"
)

// Decision codes an escalation step leaves on a notification's timeline
// (its Reason says why).
const (
	CodeEscalated         = "escalated"
	CodeEscalationStopped = "escalation_stopped"
)

// Escalation is one escalation step of a notification
// (GET /v1/notifications/{id}: escalations).
type Escalation struct {
	// Step is the step's place, from 1.
	Step     int          `json:"step"`
	DueAt    time.Time    `json:"due_at"`
	Unless   ReceiptEvent `json:"unless"`
	Channels []Channel    `json:"channels"`
	// State is pending, fired or stopped.
	State string `json:"state"`
	// DecidedAt is when it fired or stopped.
	DecidedAt time.Time `json:"decided_at,omitzero"`
	// Reason says why it stopped (the receipt, a cancel) or what it
	// fired.
	Reason string `json:"reason,omitempty"`
	// NotificationID is the notification the step sent, once fired.
	NotificationID string `json:"notification_id,omitempty"`
}
