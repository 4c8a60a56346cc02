package heraldtype

import "time"

// ReminderState is where a reminder is in its life (S2).
type ReminderState string

const (
	// ReminderActive: the reminder has a next occurrence at NextAt.
	ReminderActive ReminderState = "active"
	// ReminderStopped: no occurrence will be sent again; StopReason says
	// why. A stopped reminder is kept (for GET and the lists) until it is
	// deleted or pruned.
	ReminderStopped ReminderState = "stopped"
)

// Stop reasons of a reminder.
const (
	StopMaxSends  = "max_sends" // Stop.MaxSends occurrences were sent
	StopExpired   = "expired"   // the next occurrence would fall after Stop.ExpiresAt
	StopEvent     = "event"     // an event named Stop.OnEvent arrived (POST /v1/events)
	StopCancelled = "cancelled" // cancelled by an operator (bulk cancel)
	StopCompleted = "completed" // the schedule has no further occurrence
	StopUserGone  = "user_gone" // the user no longer exists
	StopRejected  = "rejected"  // an occurrence could not be enqueued for a reason a retry cannot fix
)

// ReminderStop says when a reminder stops by itself (issue 19 item 3).
type ReminderStop struct {
	// MaxSends stops the reminder after that many occurrences were sent
	// (0: no limit).
	MaxSends int `json:"max_sends,omitempty"`
	// ExpiresAt stops it before an occurrence due after this time.
	ExpiresAt time.Time `json:"expires_at,omitzero"`
	// OnEvent stops it when an event of this name arrives for its user
	// (and, when Match is set, whose data has every one of those fields
	// with that value).
	OnEvent string            `json:"on_event,omitempty"`
	Match   map[string]string `json:"match,omitempty"`
}

// Reminder is a repeating notification about one item of one user, under
// the caller's key (S2.1–S2.3).
type Reminder struct {
	// Key is the caller's item key; ID is Herald's id of this reminder,
	// kept across updates, part of each occurrence's idempotency key.
	Key    string `json:"key"`
	ID     string `json:"id"`
	UserID string `json:"user_id"`
	// The content of each occurrence, as a trigger's.
	Type     string            `json:"type"`
	Title    string            `json:"title,omitempty"`
	Body     string            `json:"body,omitempty"`
	Data     map[string]string `json:"data,omitempty"`
	Channels []Channel         `json:"channels,omitempty"`
	Priority Priority          `json:"priority,omitempty"`
	DataOnly bool              `json:"data_only,omitempty"`

	Schedule Schedule     `json:"schedule"`
	Stop     ReminderStop `json:"stop,omitzero"`
	// QuietHours is what an occurrence due in the user's quiet hours
	// does: "defer" (the default: the pipeline holds it until they end)
	// or "skip" (the occurrence is not sent; the next one is scheduled).
	QuietHours string `json:"quiet_hours,omitempty"`

	State      ReminderState `json:"state"`
	StopReason string        `json:"stop_reason,omitempty"`
	StoppedAt  time.Time     `json:"stopped_at,omitzero"`
	// NextAt is when the next occurrence is due (zero once stopped);
	// NextOccurrence its nominal time, earlier than NextAt by its spread
	// or a move past a collision (S2.5).
	NextAt         time.Time `json:"next_at,omitzero"`
	NextOccurrence time.Time `json:"next_occurrence,omitzero"`
	// ScheduleStart is when the schedule last (re)started: the creation or
	// the last update (S2.3), an RRULE's DTSTART.
	ScheduleStart time.Time `json:"schedule_start"`
	// SentCount counts the occurrences sent (enqueued) so far; an update
	// keeps it (S2.3) and the backoff grows with it (S2.2).
	SentCount          int       `json:"sent_count"`
	LastNotificationID string    `json:"last_notification_id,omitempty"`
	LastSentAt         time.Time `json:"last_sent_at,omitzero"`
	CreatedAt          time.Time `json:"created_at"`
	UpdatedAt          time.Time `json:"updated_at"`
	// Version changes with every write of the reminder: a fire or a stop
	// guarded by it changes nothing when the reminder moved on.
	Version int64 `json:"-"`
}

// ReminderFilter selects a page of reminders. Zero fields match all.
type ReminderFilter struct {
	UserID string
	Type   string
	State  ReminderState
	// DueBefore selects active reminders with NextAt < DueBefore.
	DueBefore time.Time
	Cursor    string
	// Limit defaults to 50 and is capped at 200.
	Limit int
}
