package heraldtype

import "time"

// HistoryStatus is a notification's status, summarised over its
// deliveries (S3.9): the one vocabulary of GET /v1/notifications/{id},
// the history lists and their status filter, over all of a
// notification's deliveries or over one channel's (issue 22). The rule
// that decides it, and its order, is store/rules.StatusRules; the table
// of delivery-state mixes → status is in docs/ARCHITECTURE.md.
type HistoryStatus string

const (
	// HistoryPending: a delivery is still pending or leased, none of them
	// waiting for the end of quiet hours.
	HistoryPending HistoryStatus = "PENDING"
	// HistoryDeferred: a pending delivery waits for the end of the user's
	// quiet hours (reason quiet_hours).
	HistoryDeferred HistoryStatus = "DEFERRED"
	// HistorySent: every delivery is final and one was sent; none died or
	// ended unknown (opted-out, rate-limited or skipped siblings are
	// deliberate decisions, visible per channel).
	HistorySent HistoryStatus = "SENT"
	// HistoryPartiallySent: every delivery is final, one was sent and
	// another is dead or unknown (reason: its error code).
	HistoryPartiallySent HistoryStatus = "PARTIALLY_SENT"
	// HistoryRateLimited: every delivery is final, none was sent, and one
	// was blocked by a rate limit (reason duplicate or daily_cap).
	HistoryRateLimited HistoryStatus = "RATE_LIMITED"
	// HistoryOptedOut: every delivery is final, none was sent or rate
	// limited, and one was refused by the user's preferences (reason e.g.
	// type_disabled).
	HistoryOptedOut HistoryStatus = "USER_OPTED_OUT"
	// HistoryFailed: there is no delivery (reason no_deliveries), or every
	// one ended dead, unknown or skipped (reason: the greatest error code).
	HistoryFailed HistoryStatus = "FAILED"
	// HistoryCancelled: every delivery is final, none was sent, and one
	// was cancelled before it was sent (reason cancelled).
	HistoryCancelled HistoryStatus = "CANCELLED"
)

// HistoryStatuses lists every status, in the order of the lifecycle.
var HistoryStatuses = []HistoryStatus{HistoryPending, HistoryDeferred, HistorySent, HistoryPartiallySent,
	HistoryCancelled, HistoryRateLimited, HistoryOptedOut, HistoryFailed}

// Valid reports whether s is a known status.
func (s HistoryStatus) Valid() bool {
	switch s {
	case HistoryPending, HistoryDeferred, HistorySent, HistoryPartiallySent, HistoryCancelled, HistoryRateLimited,
		HistoryOptedOut, HistoryFailed:
		return true
	}
	return false
}

// CodeQuietHours is the last_error_code of a delivery deferred until the
// end of the user's quiet hours (status DEFERRED).
const CodeQuietHours = "quiet_hours"

// CodeNoDeliveries is the reason of a notification, or of one of its
// channels, that has no delivery at all (status FAILED): e.g. push to a
// user without a usable device, or a channel without a provider.
const CodeNoDeliveries = "no_deliveries"

// CodeCancelled is the last_error_code of a cancelled delivery, and the
// reason of a notification or channel whose status is CANCELLED.
const CodeCancelled = "cancelled"

// HistoryEntry is one notification of the history.
type HistoryEntry struct {
	NotificationID string `json:"notification_id"`
	UserID         string `json:"user_id"`
	Type           string `json:"type"`
	Title          string `json:"title,omitempty"`
	// Channels are the channels the notification asked for.
	Channels []Channel     `json:"channels"`
	Status   HistoryStatus `json:"status"`
	// Reason is the error code that decided a status other than SENT or
	// PENDING (duplicate, daily_cap, type_disabled, quiet_hours,
	// no_deliveries, a provider's code, …).
	Reason string `json:"reason,omitempty"`
	// ChannelStatus is the same rule applied to each channel the
	// notification asked for, over that channel's deliveries: e.g.
	// {"in_app":"SENT","push":"DEFERRED"} — the inbox has it, the phone
	// gets it when quiet hours end. A channel without deliveries is
	// FAILED.
	ChannelStatus map[Channel]HistoryStatus `json:"channel_status"`
	CreatedAt     time.Time                 `json:"created_at"`
	// Source is what made the notification when a trigger did not: a
	// digest (its count of triggers), an escalation step, a reminder, a
	// campaign or a rule.
	Source *Source `json:"source,omitempty"`
	// Deliveries counts the notification's deliveries by state.
	Deliveries map[DeliveryState]int `json:"deliveries"`
}

// HistoryFilter selects a page of the history. Zero fields match all.
type HistoryFilter struct {
	UserID string
	Type   string
	// Status selects one status; Client.ListHistory takes it in any case.
	Status HistoryStatus
	// From and To bound created_at: From <= created_at < To.
	From, To time.Time
	Cursor   string
	// Limit defaults to 50 and is capped at 200.
	Limit int
}
