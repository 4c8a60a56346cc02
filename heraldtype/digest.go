package heraldtype

import "time"

// Digest is a notification type's digest (issue 36 item 1): the triggers
// of the type for one user and one key within Window become one
// notification, rendered from Title and Body over the items.
type Digest struct {
	// Window is how long a digest collects after it opens.
	Window time.Duration `json:"window"`
	// Key is a template over the trigger's data naming the digest a
	// trigger joins ("" : one digest per user and type).
	Key string `json:"key,omitempty"`
	// MaxItems closes a digest early when it holds this many items.
	MaxItems int `json:"max_items"`
	// First is DigestFirstCollect (the first trigger is an item too) or
	// DigestFirstImmediate (the first is sent at once and opens the
	// digest for the rest of the window).
	First string `json:"first"`
	// Title and Body are the templates of the digest's notification; they
	// see .Count, .Items (each with .Title, .Body, .Data, .CreatedAt),
	// .Key and the first item's .Title, .Body and .Data.
	Title string `json:"title,omitempty"`
	Body  string `json:"body,omitempty"`
}

// Values of Digest.First.
const (
	DigestFirstCollect   = "collect"
	DigestFirstImmediate = "immediate"
)

// SourceDigest is the Source.Kind of a digest's notification: Source.ID is
// the digest's id, Name its key and Count the triggers it gathered.
const SourceDigest = "digest"

// DigestInfo is one digest's row: whose, of which type and key, its
// state, its window and how many items it holds.
type DigestInfo struct {
	ID       string    `json:"id"`
	UserID   string    `json:"user_id"`
	Type     string    `json:"type"`
	Key      string    `json:"key"`
	State    string    `json:"state"`
	OpenedAt time.Time `json:"opened_at"`
	CloseAt  time.Time `json:"close_at"`
	// Items counts the triggers that joined, Cancelled those of them a
	// cancel took out since (issue 36 item 4): the message shows
	// Items - Cancelled.
	Items     int `json:"items"`
	Cancelled int `json:"cancelled,omitempty"`
	MaxItems  int `json:"max_items"`
	// NotificationID is the digest's notification, once sent.
	NotificationID string `json:"notification_id,omitempty"`
	// LastError says why a failed digest was not sent.
	LastError string `json:"last_error,omitempty"`
}

// DigestItem is one trigger a digest holds (GET /v1/digests/{id}): its
// place, the id it was answered with, its content and when it came.
type DigestItem struct {
	Seq       int               `json:"seq"`
	ID        string            `json:"id"`
	Title     string            `json:"title,omitempty"`
	Body      string            `json:"body,omitempty"`
	Data      map[string]string `json:"data,omitempty"`
	CreatedAt time.Time         `json:"created_at"`
}

// DigestSchedule is a user's rhythm for one notification type (issue 36
// item 2; TypePreference.Digest): the type's triggers for the user
// collect into one digest sent at the next scheduled time, on the wall
// clock of the user's time zone — every day at At, or every week on On
// at At.
type DigestSchedule struct {
	// Every is DigestEveryDay or DigestEveryWeek.
	Every string `json:"every"`
	// At is the local time "HH:MM" (24-hour).
	At string `json:"at"`
	// On is the weekday of a weekly digest ("monday" … "sunday"); empty
	// for a daily one.
	On string `json:"on,omitempty"`
}

// Values of DigestSchedule.Every.
const (
	DigestEveryDay  = "day"
	DigestEveryWeek = "week"
)

// DigestFilter selects a page of digests (GET /v1/digests), newest
// first. Zero fields match all.
type DigestFilter struct {
	UserID string
	Type   string
	// State is open, closed, sent or failed.
	State string
	// Cursor is a previous page's NextCursor.
	Cursor string
	// Limit defaults to 50 and is capped at 200.
	Limit int
}

// DigestPage is one page of digests, newest first.
type DigestPage struct {
	Digests    []DigestInfo `json:"digests"`
	NextCursor string       `json:"next_cursor,omitempty"`
}
