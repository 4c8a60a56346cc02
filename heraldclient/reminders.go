package heraldclient

import (
	"context"
	"iter"
	"net/http"
	"net/url"

	"github.com/heraldhq/herald/heraldtype"
)

// ReminderRequest is a reminder: a message sent to one user on a
// schedule until it stops (the body of PutReminder; its key is the path's).
type ReminderRequest struct {
	UserID string `json:"user_id"`
	// The content of each occurrence, as a trigger's.
	Type     string               `json:"type"`
	Title    string               `json:"title,omitempty"`
	Body     string               `json:"body,omitempty"`
	Data     map[string]string    `json:"data,omitempty"`
	Channels []heraldtype.Channel `json:"channels,omitempty"`
	Priority heraldtype.Priority  `json:"priority,omitempty"`
	DataOnly bool                 `json:"data_only,omitempty"`
	// Schedule says when occurrences are due, in the user's time zone
	// unless it names its own.
	Schedule heraldtype.Schedule `json:"schedule"`
	// Stop says when the reminder stops by itself.
	Stop heraldtype.ReminderStop `json:"stop,omitzero"`
	// QuietHours: QuietDefer (the default) or QuietSkip an occurrence due
	// in the user's quiet hours.
	QuietHours string `json:"quiet_hours,omitempty"`
}

// What a reminder does with an occurrence due in quiet hours.
const (
	QuietDefer = "defer"
	QuietSkip  = "skip"
)

// ReminderSelector selects the active reminders CancelReminders stops:
// the user's, the type's, or both.
type ReminderSelector struct {
	UserID string `json:"user_id,omitempty"`
	Type   string `json:"type,omitempty"`
}

// ReminderPage is one page of reminders.
type ReminderPage struct {
	Reminders  []heraldtype.Reminder `json:"reminders"`
	NextCursor string                `json:"next_cursor,omitempty"`
}

// PutReminder creates the reminder under key or replaces it (PUT
// /v1/reminders/{key}); created says which. On replace its schedule
// restarts from now and its sent count is kept.
func (c *Client) PutReminder(ctx context.Context, key string, r ReminderRequest) (rem heraldtype.Reminder, created bool, err error) {
	res, err := c.do(ctx, call{method: http.MethodPut, path: pathf("/v1/reminders/%s", key), body: r, out: &rem})
	return rem, err == nil && res.status == http.StatusCreated, err
}

// GetReminder reads a reminder (GET /v1/reminders/{key}).
func (c *Client) GetReminder(ctx context.Context, key string) (heraldtype.Reminder, error) {
	var rem heraldtype.Reminder
	_, err := c.do(ctx, call{method: http.MethodGet, path: pathf("/v1/reminders/%s", key), out: &rem})
	return rem, err
}

// CancelReminder stops a reminder (DELETE /v1/reminders/{key}); it is
// kept, stopped, for its history.
func (c *Client) CancelReminder(ctx context.Context, key string) error {
	_, err := c.do(ctx, call{method: http.MethodDelete, path: pathf("/v1/reminders/%s", key)})
	return err
}

// CancelReminders stops every active reminder sel selects (POST
// /v1/reminders/cancel) and returns how many. Stopping what is stopped
// changes nothing, so the call is retried.
func (c *Client) CancelReminders(ctx context.Context, sel ReminderSelector) (int, error) {
	var out struct {
		Cancelled int `json:"cancelled"`
	}
	_, err := c.do(ctx, call{method: http.MethodPost, path: "/v1/reminders/cancel", body: sel, out: &out, safe: true})
	return out.Cancelled, err
}

// ListReminders reads one page of reminders (GET /v1/reminders, or GET
// /v1/users/{id}/reminders when f.UserID is set): by type, state and due
// time.
func (c *Client) ListReminders(ctx context.Context, f heraldtype.ReminderFilter) (ReminderPage, error) {
	path := "/v1/reminders"
	if f.UserID != "" {
		path = pathf("/v1/users/%s/reminders", f.UserID)
	}
	q := newQuery().str("type", f.Type).str("state", string(f.State)).time("due_before", f.DueBefore).
		str("cursor", f.Cursor).limit(f.Limit)
	var page ReminderPage
	_, err := c.do(ctx, call{method: http.MethodGet, path: path, query: url.Values(q), out: &page})
	return page, err
}

// Reminders walks every reminder f selects.
func (c *Client) Reminders(ctx context.Context, f heraldtype.ReminderFilter) iter.Seq2[heraldtype.Reminder, error] {
	return walk(ctx, f.Cursor, func(ctx context.Context, cursor string) ([]heraldtype.Reminder, string, error) {
		f.Cursor = cursor
		p, err := c.ListReminders(ctx, f)
		return p.Reminders, p.NextCursor, err
	})
}
