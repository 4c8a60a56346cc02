package herald

import (
	"context"
	"time"

	"github.com/heraldhq/herald/heraldtype"
	"github.com/heraldhq/herald/internal/policy"
	"github.com/heraldhq/herald/internal/reminder"
	"github.com/heraldhq/herald/store"
)

// reminderNamespace scopes the occurrences' idempotency keys
// (reminder:{id}:{n}) apart from every API key's triggers.
const reminderNamespace = "herald.reminders"

// newScheduler builds the reminder scheduler, a leader-only service.
func (c *Client) newScheduler() (*reminder.Scheduler, error) {
	rc := c.cfg.Reminders
	return reminder.New(reminder.Config{
		Store: c.store, Build: c.buildOccurrence, InQuietHours: c.inQuietHours,
		Owner: c.cfg.Owner, DefaultZone: c.cfg.DefaultTimezone,
		Lease: rc.Lease, BatchSize: rc.BatchSize, Gap: rc.Gap, Poll: rc.PollInterval,
		Now: c.cfg.Now, Metrics: c.metrics, Logger: c.Logger(ComponentReminder), Tracer: c.tracer,
	})
}

// buildOccurrence makes the trigger of one occurrence of a reminder: its
// content for its user, validated and routed like any trigger, under the
// occurrence's idempotency key (S2.6).
func (c *Client) buildOccurrence(ctx context.Context, f reminder.Firing) (*store.EnqueueParams, error) {
	r := f.Claim.Reminder
	req := ReminderRequest{UserID: r.UserID, Type: r.Type, Title: r.Title, Body: r.Body, Data: r.Data,
		Channels: r.Channels, Priority: r.Priority, DataOnly: r.DataOnly}.trigger(occurrenceKey(r.ID, f.N))
	req.IdempotencyNamespace = reminderNamespace
	p, err := c.prepare(ctx, &req)
	if err != nil {
		return nil, err
	}
	// An occurrence is sent at its scheduled time, never folded into a
	// digest (issue 36): as a trigger's future send_at is not. PostgreSQL
	// writes a batch of occurrences set-based, which a digest's join
	// (read, then write) cannot be.
	p.Digest = nil
	// The timeline names the reminder and the occurrence (issue 19 item 8).
	src := &heraldtype.Source{Kind: heraldtype.SourceReminder, ID: r.ID, Name: r.Key, Occurrence: f.Occurrence.ID()}
	for i := range p.Notifications {
		p.Notifications[i].Source = src
	}
	stampTrace(ctx, &p) // the batch's span (internal/reminder/tracing.go)
	return &p, nil
}

// inQuietHours reports whether t falls in the quiet hours of the claim's
// user for its type, by the policy's own rule (S3.11, S2.5).
func (c *Client) inQuietHours(ctx context.Context, cl store.ReminderClaim, t time.Time) (bool, error) {
	typ, err := c.types.Type(ctx, cl.Type)
	if err != nil {
		return false, err
	}
	if !typ.QuietHours || typ.Critical {
		return false, nil
	}
	prefs, err := c.store.GetPreferences(ctx, cl.UserID)
	if heraldtype.ErrorCode(err) == heraldtype.ENOTFOUND {
		return false, nil
	} else if err != nil {
		return false, err
	}
	if prefs.QuietHours == nil {
		return false, nil
	}
	w, err := policy.ParseQuietHours(*prefs.QuietHours)
	if err != nil {
		return false, err
	}
	loc, err := loadTimezone("timezone", c.zoneOf(prefs.Timezone))
	if err != nil {
		return false, err
	}
	_, in := w.Until(t, loc)
	return in, nil
}
