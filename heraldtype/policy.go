package heraldtype

import "time"

// NotificationType is a declared notification type (S1.1–S1.3, S3.8): how
// its notifications default and which delivery policy applies to them.
// internal/policy documents what each field does at send time.
type NotificationType struct {
	Name string `json:"name"`
	// Channels are used when a trigger names none; empty means push.
	Channels []Channel `json:"channels,omitempty"`
	// Priority is used when a trigger names none; empty means NORMAL.
	Priority Priority `json:"priority,omitempty"`
	// DedupeWindow is how long a dedupe key blocks a repeat (S3.8).
	DedupeWindow time.Duration `json:"dedupe_window"`
	// QuietHours defers the type's deliveries inside the user's quiet
	// hours.
	QuietHours bool `json:"quiet_hours"`
	// CountsTowardCap counts the type's notifications toward the user's
	// daily cap, and blocks them once it is reached.
	CountsTowardCap bool      `json:"counts_toward_cap"`
	Guarantee       Guarantee `json:"guarantee"`
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
	OptedOutChannels []Channel `json:"opted_out_channels,omitempty"`
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
	Channels []Channel `json:"channels,omitempty"`
}

// QuietHours is a daily window, "HH:MM" local times; Start after End
// spans midnight (22:00–08:00).
type QuietHours struct {
	Start string `json:"start"`
	End   string `json:"end"`
}
