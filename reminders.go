package herald

import (
	"context"
	"strconv"
	"time"

	"github.com/heraldhq/herald/heraldtype"
	"github.com/heraldhq/herald/internal/reminder"
	"github.com/heraldhq/herald/internal/schedule"
	"github.com/heraldhq/herald/store"
)

// Reminder is a repeating notification about one item of one user
// (S2.1–S2.3): GET /v1/reminders/{key}.
type Reminder = heraldtype.Reminder

// ReminderFilter selects a page of reminders (GET /v1/reminders).
type ReminderFilter = heraldtype.ReminderFilter

// ReminderRequest creates or updates a reminder: the body of
// PUT /v1/reminders/{key} (the key comes from the path).
type ReminderRequest struct {
	Key    string `json:"-"`
	UserID string `json:"user_id"`
	// The content of each occurrence, as a trigger's (Request).
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
	// QuietHours: "defer" (default) or "skip" an occurrence due in the
	// user's quiet hours.
	QuietHours string `json:"quiet_hours,omitempty"`
}

// Reminder quiet-hours modes.
const (
	QuietDefer = "defer"
	QuietSkip  = "skip"
)

// ReminderPage is one page of a reminder listing.
type ReminderPage struct {
	Reminders  []Reminder `json:"reminders"`
	NextCursor string     `json:"next_cursor,omitempty"`
}

// ReminderSelector selects reminders for a bulk cancel
// (POST /v1/reminders/cancel): every active reminder of the user, of the
// type, or both.
type ReminderSelector struct {
	UserID string `json:"user_id,omitempty"`
	Type   string `json:"type,omitempty"`
}

// PutReminder creates the reminder under r.Key or updates it (S2.3): on
// update its schedule restarts from now and its sent count is kept. It
// reports whether the reminder was created. The first occurrence is due
// at the schedule's first time after now; a schedule with none is refused.
func (c *Client) PutReminder(ctx context.Context, r ReminderRequest) (Reminder, bool, error) {
	rem, err := c.prepareReminder(ctx, r)
	if err != nil {
		return Reminder{}, false, err
	}
	out, created, err := c.store.PutReminder(ctx, rem, rem.UpdatedAt)
	if err != nil {
		return Reminder{}, false, err
	}
	c.wakeScheduler(out)
	return out, created, nil
}

// PutReminderTx is PutReminder inside the caller's own transaction (the
// kinds EnqueueTx takes): the reminder exists if and only if tx commits.
func (c *Client) PutReminderTx(ctx context.Context, tx any, r ReminderRequest) (Reminder, bool, error) {
	if tx == nil {
		return Reminder{}, false, heraldtype.Errorf(heraldtype.EINVALID, "PutReminderTx needs an open transaction")
	}
	rem, err := c.prepareReminder(ctx, r)
	if err != nil {
		return Reminder{}, false, err
	}
	return c.store.PutReminderTx(ctx, tx, rem, rem.UpdatedAt)
}

// GetReminder returns the reminder under key.
func (c *Client) GetReminder(ctx context.Context, key string) (Reminder, error) {
	if err := validID("key", key); err != nil {
		return Reminder{}, err
	}
	return c.store.GetReminder(ctx, key)
}

// CancelReminder deletes the reminder under key (DELETE
// /v1/reminders/{key}; S2.3: deleting the item deletes its reminder).
// Cancellation is synchronous: once it returns, no further occurrence is
// enqueued, not even one a scheduler has already claimed.
func (c *Client) CancelReminder(ctx context.Context, key string) error {
	if err := validID("key", key); err != nil {
		return err
	}
	return c.store.DeleteReminder(ctx, key)
}

// CancelReminderTx is CancelReminder inside the caller's transaction.
func (c *Client) CancelReminderTx(ctx context.Context, tx any, key string) error {
	if tx == nil {
		return heraldtype.Errorf(heraldtype.EINVALID, "CancelReminderTx needs an open transaction")
	}
	if err := validID("key", key); err != nil {
		return err
	}
	return c.store.DeleteReminderTx(ctx, tx, key)
}

// CancelReminders stops every active reminder sel selects (bulk cancel,
// stop reason cancelled) and returns how many it stopped. Stopped
// reminders stay readable until pruned.
func (c *Client) CancelReminders(ctx context.Context, sel ReminderSelector) (int, error) {
	if sel.UserID == "" && sel.Type == "" {
		return 0, heraldtype.FieldErrorf("user_id", "give user_id, type or both")
	}
	if sel.UserID != "" {
		if err := validID("user_id", sel.UserID); err != nil {
			return 0, err
		}
	}
	if sel.Type != "" {
		if err := validTypeName(sel.Type); err != nil {
			return 0, err
		}
	}
	n, err := c.store.StopReminders(ctx, store.ReminderSelector{UserID: sel.UserID, Type: sel.Type},
		heraldtype.StopCancelled, c.now().UTC())
	if err == nil && n > 0 {
		c.metrics.RemindersStopped.WithLabelValues(heraldtype.StopCancelled).Add(float64(n))
	}
	return n, err
}

// ListReminders lists reminders by key, a page at a time.
func (c *Client) ListReminders(ctx context.Context, f ReminderFilter) (ReminderPage, error) {
	rs, next, err := c.store.ListReminders(ctx, f)
	if err != nil {
		return ReminderPage{}, err
	}
	if rs == nil {
		rs = []Reminder{}
	}
	return ReminderPage{Reminders: rs, NextCursor: next}, nil
}

// prepareReminder validates r as a trigger of its content would be, then
// its schedule in the user's zone, and returns the row to store with its
// first due time.
func (c *Client) prepareReminder(ctx context.Context, r ReminderRequest) (Reminder, error) {
	now := c.now().UTC()
	if err := validID("key", r.Key); err != nil {
		return Reminder{}, err
	}
	if len(r.Key) > MaxKeyLength {
		return Reminder{}, heraldtype.FieldErrorf("key", "must be at most %d bytes", MaxKeyLength)
	}
	if err := validID("user_id", r.UserID); err != nil {
		return Reminder{}, err
	}
	if err := validTypeName(r.Type); err != nil {
		return Reminder{}, err
	}
	// A reminder repeats for weeks: a type nobody declared (a typo) would
	// silently run on the defaults, so it is refused.
	if _, err := c.types.Declared(ctx, r.Type); heraldtype.ErrorCode(err) == heraldtype.ENOTFOUND {
		return Reminder{}, heraldtype.FieldErrorf("type", "%q is not declared: declare it first (PUT /v1/types/%s or types: in the configuration)", r.Type, r.Type)
	} else if err != nil {
		return Reminder{}, err
	}
	// The content is validated by the trigger's own rules, once.
	trig := r.trigger("")
	if _, err := c.prepare(ctx, &trig); err != nil {
		return Reminder{}, err
	}
	switch r.QuietHours {
	case "":
		r.QuietHours = QuietDefer
	case QuietDefer, QuietSkip:
	default:
		return Reminder{}, heraldtype.FieldErrorf("quiet_hours", "must be defer or skip")
	}
	if err := c.validStop(r.Stop, now); err != nil {
		return Reminder{}, err
	}
	u, err := c.store.GetUser(ctx, r.UserID)
	if heraldtype.ErrorCode(err) == heraldtype.ENOTFOUND {
		return Reminder{}, heraldtype.FieldErrorf("user_id", "no user %q", r.UserID)
	} else if err != nil {
		return Reminder{}, err
	}
	plan, err := schedule.Compile(r.Schedule, c.zoneOf(u.Timezone))
	if err != nil {
		return Reminder{}, err
	}
	if err := c.checkSpacing(plan); err != nil {
		return Reminder{}, err
	}
	// S2.3: on update the schedule restarts from now and the sent count is
	// kept; the backoff grows with it (S2.2). A concurrent occurrence may
	// add one send between this read and the write: the next interval is
	// then one step shorter, never a repeated or skipped occurrence.
	// The id is the spread's key: an update keeps the reminder's id.
	sent, id := 0, newID(now)
	if old, err := c.store.GetReminder(ctx, r.Key); err == nil {
		sent, id = old.SentCount, old.ID
	} else if heraldtype.ErrorCode(err) != heraldtype.ENOTFOUND {
		return Reminder{}, err
	}
	next, err := plan.CheckFirst(schedule.Anchor{Key: id, Start: now}, sent)
	if err != nil {
		return Reminder{}, err
	}
	if !r.Stop.ExpiresAt.IsZero() && next.Due.After(r.Stop.ExpiresAt) {
		return Reminder{}, heraldtype.FieldErrorf("stop.expires_at", "is before the first occurrence (%s)", next.Due.Format(time.RFC3339))
	}
	return Reminder{
		Key: r.Key, ID: id, UserID: r.UserID, Type: trig.Type, Title: r.Title, Body: r.Body,
		Data: r.Data, Channels: trig.Channels, Priority: trig.Priority, DataOnly: r.DataOnly,
		Schedule: r.Schedule, Stop: r.Stop, QuietHours: r.QuietHours,
		State: heraldtype.ReminderActive, NextAt: next.Due, NextOccurrence: next.At, ScheduleStart: now, CreatedAt: now, UpdatedAt: now,
	}, nil
}

func (c *Client) validStop(s heraldtype.ReminderStop, now time.Time) error {
	if s.MaxSends < 0 || s.MaxSends > MaxReminderSends {
		return heraldtype.FieldErrorf("stop.max_sends", "must be between 0 (no limit) and %d", MaxReminderSends)
	}
	if !s.ExpiresAt.IsZero() && !s.ExpiresAt.After(now) {
		return heraldtype.FieldErrorf("stop.expires_at", "is in the past")
	}
	if s.OnEvent != "" {
		if err := validEventName("stop.on_event", s.OnEvent); err != nil {
			return err
		}
	} else if len(s.Match) > 0 {
		return heraldtype.FieldErrorf("stop.match", "needs stop.on_event")
	}
	if len(s.Match) > MaxDataEntries {
		return heraldtype.FieldErrorf("stop.match", "has %d entries; the limit is %d", len(s.Match), MaxDataEntries)
	}
	for k, v := range s.Match {
		if k == "" || len(k) > MaxDataKeyLen {
			return heraldtype.FieldErrorf("stop.match", "keys must be 1-%d bytes", MaxDataKeyLen)
		}
		if err := validText("stop.match", k+v, 4096); err != nil {
			return err
		}
	}
	return nil
}

// checkSpacing refuses a schedule whose occurrences come closer together
// than the reminders' gap (issue 31 item 6): the scheduler would pass over
// the nearer ones, so the caller is told rather than left to wonder.
func (c *Client) checkSpacing(plan *schedule.Plan) error {
	gap := c.cfg.Reminders.Gap
	if gap == 0 {
		gap = reminder.DefaultGap
	}
	d := plan.MinSpacing()
	if gap < 0 || d == 0 || d >= gap {
		return nil
	}
	field := "schedule.rrule"
	switch plan.Kind() {
	case schedule.KindBackoff:
		field = "schedule.backoff.first"
	case schedule.KindCron:
		field = "schedule.cron"
	}
	return heraldtype.FieldErrorf(field, "gives occurrences %s apart; one reminder's occurrences must be at least %s apart (reminders.gap)", d, gap)
}

// MaxReminderSends bounds stop.max_sends.
const MaxReminderSends = 10000

// zoneOf is the zone a user's schedules are evaluated in.
func (c *Client) zoneOf(tz string) string {
	if tz == "" {
		return c.cfg.DefaultTimezone
	}
	return tz
}

// trigger is the request one occurrence of r enqueues: its content, for
// the user, under the occurrence's idempotency key (S2.6).
func (r ReminderRequest) trigger(key string) Request {
	return Request{IdempotencyKey: key, UserID: r.UserID, Type: r.Type, Title: r.Title, Body: r.Body,
		Data: r.Data, Channels: r.Channels, Priority: r.Priority, DataOnly: r.DataOnly}
}

// occurrenceKey is the idempotency key of a reminder's n-th send (S2.6):
// the sent count only grows, so each occurrence has its own key for as
// long as the reminder lives, across updates.
func occurrenceKey(id string, n int) string {
	return "reminder:" + id + ":" + strconv.Itoa(n)
}

// wakeScheduler tells this instance's scheduler about a reminder due
// sooner than it planned to look.
func (c *Client) wakeScheduler(r Reminder) {
	if c.scheduler != nil {
		c.scheduler.Wake(r.NextAt)
	}
}
