package store

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/heraldhq/herald/heraldtype"
)

// NotificationType is a declared notification type (S1.1–S1.3, S3.8): how
// its notifications default and which delivery policy applies to them.
// internal/policy documents what each field does at send time.
type NotificationType struct {
	Name string `json:"name"`
	// Channels are used when a trigger names none; empty means push.
	Channels []heraldtype.Channel `json:"channels,omitempty"`
	// Priority is used when a trigger names none; empty means NORMAL.
	Priority heraldtype.Priority `json:"priority,omitempty"`
	// DedupeWindow is how long a dedupe key blocks a repeat (S3.8).
	DedupeWindow time.Duration `json:"dedupe_window"`
	// QuietHours defers the type's deliveries inside the user's quiet
	// hours.
	QuietHours bool `json:"quiet_hours"`
	// CountsTowardCap counts the type's notifications toward the user's
	// daily cap, and blocks them once it is reached.
	CountsTowardCap bool                 `json:"counts_toward_cap"`
	Guarantee       heraldtype.Guarantee `json:"guarantee"`
	// Critical bypasses quiet hours and the daily cap, never an explicit
	// opt-out.
	Critical  bool      `json:"critical"`
	UpdatedAt time.Time `json:"updated_at,omitzero"`
}

// Preferences are one user's delivery preferences (S3.11).
type Preferences struct {
	UserID string `json:"user_id"`
	// Types maps a notification type to the user's choice for it; a type
	// not listed is on, on every channel.
	Types map[string]TypePreference `json:"types,omitempty"`
	// OptedOutChannels are channels the user refuses for every type.
	OptedOutChannels []heraldtype.Channel `json:"opted_out_channels,omitempty"`
	// QuietHours, when set, is a daily window in the user's time zone.
	QuietHours *QuietHours `json:"quiet_hours,omitempty"`
	// DailyCap overrides the configured daily cap; 0 keeps it.
	DailyCap  int       `json:"daily_cap,omitempty"`
	UpdatedAt time.Time `json:"updated_at,omitzero"`
	// Timezone is the user's IANA time zone, read from the user (it is not
	// stored with the preferences).
	Timezone string `json:"timezone,omitempty"`
}

// TypePreference is a user's choice for one notification type.
type TypePreference struct {
	// Disabled turns the type off for the user.
	Disabled bool `json:"disabled,omitempty"`
	// Channels, when not empty, are the only channels the type may use.
	Channels []heraldtype.Channel `json:"channels,omitempty"`
}

// QuietHours is a daily window, "HH:MM" local times; Start after End
// spans midnight (22:00–08:00).
type QuietHours struct {
	Start string `json:"start"`
	End   string `json:"end"`
}

// DecodePreferences builds a user's preferences from their stored JSON
// (nil when the user set none) and the user's time zone; both stores keep
// them so.
func DecodePreferences(userID, timezone string, stored []byte) (Preferences, error) {
	p := Preferences{UserID: userID}
	if stored != nil {
		if err := json.Unmarshal(stored, &p); err != nil {
			return p, fmt.Errorf("store: preferences of %q: %w", userID, err)
		}
		p.UpdatedAt = p.UpdatedAt.UTC()
	}
	p.Timezone = timezone
	return p, nil
}

// Policies is the part of the store the delivery policy needs. Store
// embeds it. AcquireDedupe and CountDaily make the store a policy.Limiter
// (the SQL backend; internal/policy documents their contract).
type Policies interface {
	// PutType creates or replaces a declared type; UpdatedAt = now.
	PutType(ctx context.Context, t NotificationType, now time.Time) (NotificationType, error)
	// GetType returns a type stored by PutType; ENOTFOUND otherwise.
	GetType(ctx context.Context, name string) (NotificationType, error)
	// ListTypes returns every stored type ordered by name.
	ListTypes(ctx context.Context) ([]NotificationType, error)

	// PutPreferences replaces the user's preferences; ENOTFOUND if the
	// user does not exist. The result carries the user's time zone.
	PutPreferences(ctx context.Context, p Preferences, now time.Time) (Preferences, error)
	// GetPreferences returns the user's preferences (empty ones if none
	// were stored) with the user's time zone; ENOTFOUND if the user does
	// not exist.
	GetPreferences(ctx context.Context, userID string) (Preferences, error)
	// GetPreferencesMany is GetPreferences for many users in one read, so
	// the dispatcher pays one round trip per claimed batch rather than one
	// per delivery. A user that does not exist is absent from the map.
	GetPreferencesMany(ctx context.Context, userIDs []string) (map[string]Preferences, error)

	// AcquireDedupe takes the de-duplication lock key for owner until
	// now+window if it is free or expired; ok is true when owner holds
	// it (also when it already did).
	AcquireDedupe(ctx context.Context, key, owner string, window time.Duration, now time.Time) (bool, error)
	// CountDaily counts owner once toward userID's day if fewer than limit
	// owners are counted for it; ok is true when owner is counted (also
	// when it already was). The count is kept until expireAt.
	CountDaily(ctx context.Context, userID, day, owner string, limit int, expireAt time.Time) (bool, error)
	// PrunePolicy deletes dedupe locks and daily counts expired at now
	// and returns how many rows it deleted.
	PrunePolicy(ctx context.Context, now time.Time) (int, error)

	// ListHistory lists notifications with their outcome, newest first,
	// and the cursor of the next page ("" at the end) (S3.9).
	ListHistory(ctx context.Context, f HistoryFilter) ([]HistoryEntry, string, error)
}

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
	Deliveries map[heraldtype.DeliveryState]int `json:"deliveries"`
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
