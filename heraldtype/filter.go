package heraldtype

import "time"

// DeliveryFilter selects deliveries for listing and bulk replay. Zero
// fields match everything.
type DeliveryFilter struct {
	State DeliveryState
	// Channel selects one channel's deliveries (push, sms, email, in_app).
	Channel        Channel
	ErrorCode      string
	Type           string
	UserID         string
	NotificationID string
	// From and To bound created_at: From <= created_at < To.
	From, To time.Time
	// Cursor is the opaque value returned with the previous page.
	Cursor string
	// Limit defaults to 50 and is capped at 1000.
	Limit int
}

// InboxFilter selects a page of an inbox.
type InboxFilter struct {
	// Unread lists only unread items.
	Unread bool
	// Archived lists archived items instead of the live inbox.
	Archived bool
	Cursor   string
	// Limit defaults to 50 and is capped at 200.
	Limit int
}

// RuleFilter selects rules. Zero fields match all.
type RuleFilter struct {
	// Source selects the rules of one source: a Kafka topic, or "http"
	// for the rules without one (POST /v1/events).
	Source string
	// Event selects the rules of one event name.
	Event string
	// Enabled keeps only the rules that are not disabled.
	Enabled bool
	Cursor  string
	// Limit defaults to 50 and is capped at 200.
	Limit int
}
