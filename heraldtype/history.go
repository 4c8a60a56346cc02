package heraldtype

import "time"

// HistoryStatus is a notification's outcome as the history reports it
// (S3.9), summarised over its deliveries.
type HistoryStatus string

const (
	// HistorySent: at least one delivery was sent.
	HistorySent HistoryStatus = "SENT"
	// HistoryFailed: every delivery ended without a send (dead, unknown,
	// skipped), and none was refused by the policy.
	HistoryFailed HistoryStatus = "FAILED"
	// HistoryRateLimited: a delivery was blocked by a rate limit, none sent.
	HistoryRateLimited HistoryStatus = "RATE_LIMITED"
	// HistoryOptedOut: a delivery was refused by the user's preferences,
	// none sent.
	HistoryOptedOut HistoryStatus = "USER_OPTED_OUT"
	// HistoryDeferred: nothing final yet and a delivery waits for the end
	// of quiet hours.
	HistoryDeferred HistoryStatus = "DEFERRED"
	// HistoryPending: nothing final yet.
	HistoryPending HistoryStatus = "PENDING"
)

// Valid reports whether s is a known status.
func (s HistoryStatus) Valid() bool {
	switch s {
	case HistorySent, HistoryFailed, HistoryRateLimited, HistoryOptedOut, HistoryDeferred, HistoryPending:
		return true
	}
	return false
}

// CodeQuietHours is the last_error_code of a delivery deferred until the
// end of the user's quiet hours (history status DEFERRED).
const CodeQuietHours = "quiet_hours"

// HistoryEntry is one notification of the history.
type HistoryEntry struct {
	NotificationID string        `json:"notification_id"`
	UserID         string        `json:"user_id"`
	Type           string        `json:"type"`
	Title          string        `json:"title,omitempty"`
	Status         HistoryStatus `json:"status"`
	// Reason is the error code that decided a status other than SENT
	// (duplicate, daily_cap, type_disabled, quiet_hours, …).
	Reason    string    `json:"reason,omitempty"`
	CreatedAt time.Time `json:"created_at"`
	// Deliveries counts the notification's deliveries by state.
	Deliveries map[DeliveryState]int `json:"deliveries"`
}

// HistoryFilter selects a page of the history. Zero fields match all.
type HistoryFilter struct {
	UserID string
	Type   string
	Status HistoryStatus
	// From and To bound created_at: From <= created_at < To.
	From, To time.Time
	Cursor   string
	// Limit defaults to 50 and is capped at 200.
	Limit int
}
