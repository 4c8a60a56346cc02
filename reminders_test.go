package herald

// Reminders end to end on the embedded store with an injected clock
// (issue 19; S2.1–S2.7): the Client's API, the scheduler ticked by hand,
// the delivery pipeline to the FCM emulator.

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/heraldhq/herald/heraldtype"
	"github.com/heraldhq/herald/internal/reminder"
	"github.com/heraldhq/herald/store"
)

func newReminderPipeline(t *testing.T) *pipeline {
	t.Helper()
	p := newPipeline(t, func(c *Config) {
		c.Types["cart_reminder"] = TypeConfig{}
		c.Types["digest"] = TypeConfig{}
		c.Logger = slog.New(slog.DiscardHandler)
	})
	p.device("u1", "d1", "tok-1")
	// Schedules work in whole seconds.
	p.clock.now = p.clock.now.Truncate(time.Second)
	return p
}

// tickReminders runs the scheduler until nothing more is due.
func (p *pipeline) tickReminders() reminder.Counts {
	p.t.Helper()
	total := reminder.Counts{}
	for {
		c, full, err := p.client.scheduler.Tick(p.ctx)
		if err != nil {
			p.t.Fatalf("scheduler: %v", err)
		}
		for k, v := range c {
			total[k] += v
		}
		if !full {
			return total
		}
	}
}

func (p *pipeline) reminder(key string) Reminder {
	p.t.Helper()
	r, err := p.client.GetReminder(p.ctx, key)
	if err != nil {
		p.t.Fatal(err)
	}
	return r
}

func cartReminder(key string) ReminderRequest {
	return ReminderRequest{Key: key, UserID: "u1", Type: "cart_reminder", Title: "Still thinking?", Body: "Your cart is waiting",
		Schedule: heraldtype.Schedule{Backoff: &heraldtype.Backoff{First: heraldtype.Duration(time.Hour), Factor: 2,
			Max: heraldtype.Duration(48 * time.Hour)}}}
}

// S2.2, S2.3: a backoff reminder fires after first, then after first·2,
// …; each occurrence is one notification under reminder:{id}:{n}, sent
// through the pipeline; an update restarts the schedule from now and keeps
// the sent count.
func TestReminderBackoffFiresEachOccurrenceOnce(t *testing.T) {
	p := newReminderPipeline(t)
	start := p.clock.Now()
	r, created, err := p.client.PutReminder(p.ctx, cartReminder("cart-42"))
	if err != nil || !created {
		t.Fatalf("put: created %v err %v", created, err)
	}
	if !r.NextAt.Equal(start.Add(time.Hour)) || r.SentCount != 0 || r.State != heraldtype.ReminderActive {
		t.Fatalf("new reminder: next %v sent %d state %s", r.NextAt, r.SentCount, r.State)
	}
	if c := p.tickReminders(); c["enqueued"] != 0 {
		t.Fatalf("nothing is due yet, the scheduler enqueued %d", c["enqueued"])
	}
	p.clock.Advance(time.Hour)
	if c := p.tickReminders(); c["enqueued"] != 1 {
		t.Fatalf("enqueued %d, want 1 (%v)", c["enqueued"], c)
	}
	r = p.reminder("cart-42")
	if r.SentCount != 1 || r.LastNotificationID == "" || !r.NextAt.Equal(p.clock.Now().Add(2*time.Hour)) {
		t.Fatalf("after the first occurrence: sent %d last %q next %v (now %v)", r.SentCount, r.LastNotificationID, r.NextAt, p.clock.Now())
	}
	n := p.status(r.LastNotificationID)
	if n.IdempotencyKey != "reminder:"+r.ID+":1" || n.Type != "cart_reminder" || n.Title != "Still thinking?" {
		t.Fatalf("occurrence notification: key %q type %q title %q", n.IdempotencyKey, n.Type, n.Title)
	}
	// Issue 19 item 8: the timeline names the reminder it came from.
	if src := n.Source; src == nil || *src != (heraldtype.Source{Kind: heraldtype.SourceReminder, ID: r.ID, Name: "cart-42", Occurrence: "n1"}) {
		t.Fatalf("occurrence notification's source: %+v", src)
	}
	if got := p.work(); got != 1 {
		t.Fatalf("worker sent %d, want 1", got)
	}
	if msgs := p.em.Messages(); len(msgs) != 1 {
		t.Fatalf("emulator got %d messages, want 1", len(msgs))
	}
	// A second tick at the same time sends nothing more.
	if c := p.tickReminders(); c["enqueued"] != 0 {
		t.Fatalf("the same occurrence was enqueued again: %v", c)
	}
	// S2.3: an update keeps sent_count and restarts from now: the next
	// interval is first·factor^sent_count = 2 h from now.
	p.clock.Advance(30 * time.Minute)
	up := cartReminder("cart-42")
	up.Title = "Last chance"
	r2, created, err := p.client.PutReminder(p.ctx, up)
	if err != nil || created {
		t.Fatalf("update: created %v err %v", created, err)
	}
	if r2.ID != r.ID || r2.SentCount != 1 || !r2.NextAt.Equal(p.clock.Now().Add(2*time.Hour)) || r2.Title != "Last chance" {
		t.Fatalf("after update: id %s→%s sent %d next %v", r.ID, r2.ID, r2.SentCount, r2.NextAt)
	}
	p.clock.Advance(2 * time.Hour)
	p.tickReminders()
	r3 := p.reminder("cart-42")
	if r3.SentCount != 2 {
		t.Fatalf("sent %d, want 2", r3.SentCount)
	}
	if n := p.status(r3.LastNotificationID); n.IdempotencyKey != "reminder:"+r.ID+":2" || n.Title != "Last chance" {
		t.Fatalf("second occurrence: key %q title %q", n.IdempotencyKey, n.Title)
	}
}

// Issue 19 item 3: max_sends, expires_at and an event stop a reminder, and
// say why.
func TestReminderStopConditions(t *testing.T) {
	p := newReminderPipeline(t)
	max := cartReminder("max")
	max.Stop.MaxSends = 2
	if _, _, err := p.client.PutReminder(p.ctx, max); err != nil {
		t.Fatal(err)
	}
	exp := cartReminder("exp")
	exp.UserID = "u2"
	exp.Stop.ExpiresAt = p.clock.Now().Add(150 * time.Minute) // after 1 h, before 1 h + 2 h
	if _, err := p.client.PutUser(p.ctx, "u2", UserInput{}); err != nil {
		t.Fatal(err)
	}
	if _, _, err := p.client.PutReminder(p.ctx, exp); err != nil {
		t.Fatal(err)
	}
	for range 4 {
		p.clock.Advance(4 * time.Hour)
		p.tickReminders()
	}
	if r := p.reminder("max"); r.State != heraldtype.ReminderStopped || r.StopReason != heraldtype.StopMaxSends || r.SentCount != 2 || !r.NextAt.IsZero() {
		t.Fatalf("max_sends: state %s reason %q sent %d next %v", r.State, r.StopReason, r.SentCount, r.NextAt)
	}
	if r := p.reminder("exp"); r.State != heraldtype.ReminderStopped || r.StopReason != heraldtype.StopExpired || r.SentCount != 1 {
		t.Fatalf("expires_at: state %s reason %q sent %d", r.State, r.StopReason, r.SentCount)
	}
}

// Issue 19 item 3: an event stops the matching reminders synchronously;
// one that does not match (another item) keeps going.
func TestReminderStoppedByEvent(t *testing.T) {
	p := newReminderPipeline(t)
	for _, item := range []string{"42", "43"} {
		r := cartReminder("cart-" + item)
		r.Stop = heraldtype.ReminderStop{OnEvent: "checkout_completed", Match: map[string]string{"item_id": item}}
		if _, _, err := p.client.PutReminder(p.ctx, r); err != nil {
			t.Fatal(err)
		}
	}
	res, err := p.client.Track(p.ctx, Event{Name: "checkout_completed", UserID: "u1", Data: map[string]string{"item_id": "42"}})
	if err != nil || res.StoppedReminders != 1 {
		t.Fatalf("track: %+v %v", res, err)
	}
	if r := p.reminder("cart-42"); r.State != heraldtype.ReminderStopped || r.StopReason != heraldtype.StopEvent {
		t.Fatalf("cart-42: %s %q", r.State, r.StopReason)
	}
	p.clock.Advance(2 * time.Hour)
	p.tickReminders()
	if r := p.reminder("cart-42"); r.SentCount != 0 {
		t.Fatalf("a stopped reminder was sent %d times", r.SentCount)
	}
	if r := p.reminder("cart-43"); r.State != heraldtype.ReminderActive || r.SentCount != 1 {
		t.Fatalf("cart-43 (another item): %s sent %d", r.State, r.SentCount)
	}
	// Without the event's user no reminder is stopped: the event names
	// whose (an event about a product alone is for the rules).
	if out, err := p.client.Track(p.ctx, Event{Name: "checkout_completed"}); err != nil || out.StoppedReminders != 0 {
		t.Fatalf("an event without user_id: %+v %v", out, err)
	}
	if r := p.reminder("cart-43"); r.State != heraldtype.ReminderActive {
		t.Fatalf("cart-43 after an event of nobody: %s", r.State)
	}
}

// Issue 19 item 3: a cancel committed between the scheduler's claim and
// its enqueue wins: nothing is sent.
func TestReminderCancelBetweenClaimAndEnqueue(t *testing.T) {
	for _, how := range []string{"delete", "event", "bulk"} {
		t.Run(how, func(t *testing.T) {
			p := newReminderPipeline(t)
			r := cartReminder("cart-42")
			r.Stop.OnEvent = "checkout_completed"
			if _, _, err := p.client.PutReminder(p.ctx, r); err != nil {
				t.Fatal(err)
			}
			p.clock.Advance(time.Hour)
			sch, err := reminder.New(reminder.Config{Store: p.store, Owner: "s1", Now: p.clock.Now,
				Build: func(ctx context.Context, o reminder.Firing) (*store.EnqueueParams, error) {
					// The claim is taken; the cancel commits before the fire.
					var err error
					switch how {
					case "delete":
						err = p.client.CancelReminder(ctx, "cart-42")
					case "event":
						_, err = p.client.Track(ctx, Event{Name: "checkout_completed", UserID: "u1"})
					case "bulk":
						_, err = p.client.CancelReminders(ctx, ReminderSelector{UserID: "u1"})
					}
					if err != nil {
						return nil, err
					}
					return p.client.buildOccurrence(ctx, o)
				}})
			if err != nil {
				t.Fatal(err)
			}
			c, _, err := sch.Tick(p.ctx)
			if err != nil {
				t.Fatal(err)
			}
			if c["enqueued"] != 0 || c["raced"] != 1 {
				t.Fatalf("counts %v, want the fire refused (raced)", c)
			}
			if got := p.work(); got != 0 {
				t.Fatalf("%d deliveries went out after the cancel", got)
			}
		})
	}
}

// S2.4: a scheduler that dies between its claim and its commit loses
// nothing and repeats nothing: its successor claims the reminder once the
// lease ends and fires the occurrence once.
func TestReminderCrashBetweenClaimAndCommit(t *testing.T) {
	p := newReminderPipeline(t)
	if _, _, err := p.client.PutReminder(p.ctx, cartReminder("cart-42")); err != nil {
		t.Fatal(err)
	}
	p.clock.Advance(time.Hour)
	now := p.clock.Now()
	claims, err := p.store.ClaimReminders(p.ctx, store.ReminderClaimParams{Owner: "dead", Now: now, LeaseUntil: now.Add(30 * time.Second), Limit: 10})
	if err != nil || len(claims) != 1 {
		t.Fatalf("claim: %d %v", len(claims), err)
	}
	// The dead scheduler's lease holds it back …
	if c := p.tickReminders(); c["claimed"] != 0 {
		t.Fatalf("a leased reminder was claimed again: %v", c)
	}
	// … until it ends.
	p.clock.Advance(31 * time.Second)
	c := p.tickReminders()
	if c["enqueued"] != 1 || c["rescued"] != 1 {
		t.Fatalf("after the lease: %v", c)
	}
	// The dead scheduler's late fire is refused.
	res, err := p.store.FireReminders(p.ctx, "dead", []store.ReminderFire{{ID: claims[0].ID, Version: claims[0].Version,
		NextAt: now.Add(time.Hour)}}, p.clock.Now())
	if err != nil || res[0].Applied {
		t.Fatalf("late fire of the dead scheduler: %+v %v", res, err)
	}
	if r := p.reminder("cart-42"); r.SentCount != 1 {
		t.Fatalf("sent %d, want 1", r.SentCount)
	}
}

// S2.5: two reminders of one user due together: one is sent, the other
// moves past the gap by a bounded deterministic jitter, then is sent.
func TestReminderCollisionGap(t *testing.T) {
	p := newReminderPipeline(t)
	for _, k := range []string{"a", "b"} {
		if _, _, err := p.client.PutReminder(p.ctx, cartReminder(k)); err != nil {
			t.Fatal(err)
		}
	}
	p.clock.Advance(time.Hour)
	c := p.tickReminders()
	if c["enqueued"] != 1 || c["collided"] != 1 {
		t.Fatalf("counts %v, want one sent and one moved", c)
	}
	var moved Reminder
	for _, k := range []string{"a", "b"} {
		if r := p.reminder(k); r.SentCount == 0 {
			moved = r
		}
	}
	gap := reminder.DefaultGap
	if d := moved.NextAt.Sub(p.clock.Now()); d < gap || d > 2*gap {
		t.Fatalf("moved by %v, want within [gap, 2·gap] = [%v, %v]", d, gap, 2*gap)
	}
	p.clock.Advance(2 * gap)
	if c := p.tickReminders(); c["enqueued"] != 1 {
		t.Fatalf("the moved reminder: %v", c)
	}
}

// Issue 19 item 9: bad input names its field; nothing is stored.
func TestReminderBadInput(t *testing.T) {
	p := newReminderPipeline(t)
	past := p.clock.Now().Add(-time.Hour)
	cases := []struct {
		name  string
		mod   func(*ReminderRequest)
		field string
	}{
		{"no key", func(r *ReminderRequest) { r.Key = "" }, "key"},
		{"no user", func(r *ReminderRequest) { r.UserID = "" }, "user_id"},
		{"unknown user", func(r *ReminderRequest) { r.UserID = "nobody" }, "user_id"},
		{"undeclared type", func(r *ReminderRequest) { r.Type = "cart_remnider" }, "type"},
		{"long title", func(r *ReminderRequest) { r.Title = strings.Repeat("x", 2001) }, "title"},
		{"empty channels", func(r *ReminderRequest) { r.Channels = []heraldtype.Channel{"pidgeon"} }, "channels"},
		{"no schedule", func(r *ReminderRequest) { r.Schedule = heraldtype.Schedule{} }, "schedule"},
		{"factor below 1", func(r *ReminderRequest) { r.Schedule.Backoff.Factor = 0.5 }, "schedule.backoff.factor"},
		{"max below first", func(r *ReminderRequest) { r.Schedule.Backoff.Max = heraldtype.Duration(time.Minute) }, "schedule.backoff.max"},
		{"bad rrule", func(r *ReminderRequest) { r.Schedule = heraldtype.Schedule{RRule: "FREQ=SOMETIMES"} }, "schedule.rrule"},
		{"bad cron", func(r *ReminderRequest) { r.Schedule = heraldtype.Schedule{Cron: "61 * * * *"} }, "schedule.cron"},
		{"bad zone", func(r *ReminderRequest) {
			r.Schedule = heraldtype.Schedule{Cron: "0 9 * * *", TimeZone: "Mars/Olympus"}
		}, "schedule.time_zone"},
		{"at in the past", func(r *ReminderRequest) { r.Schedule = heraldtype.Schedule{At: past} }, "schedule.at"},
		{"expired", func(r *ReminderRequest) { r.Stop.ExpiresAt = past }, "stop.expires_at"},
		{"negative max_sends", func(r *ReminderRequest) { r.Stop.MaxSends = -1 }, "stop.max_sends"},
		{"match without event", func(r *ReminderRequest) { r.Stop.Match = map[string]string{"a": "b"} }, "stop.match"},
		{"quiet hours", func(r *ReminderRequest) { r.QuietHours = "sometimes" }, "quiet_hours"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := cartReminder("bad")
			tc.mod(&r)
			_, _, err := p.client.PutReminder(p.ctx, r)
			var he *heraldtype.Error
			if !errors.As(err, &he) || he.Code != heraldtype.EINVALID || !strings.HasPrefix(he.Field, tc.field) {
				t.Fatalf("err %v, want EINVALID on %s", err, tc.field)
			}
		})
	}
	if _, err := p.client.GetReminder(p.ctx, "bad"); heraldtype.ErrorCode(err) != heraldtype.ENOTFOUND {
		t.Fatalf("a refused reminder was stored: %v", err)
	}
}

// S2.5: an occurrence due in the user's quiet hours is not sent when the
// reminder says "skip"; the next one is scheduled, the sent count stays.
func TestReminderQuietHoursSkip(t *testing.T) {
	p := newReminderPipeline(t)
	// Quiet all day but one minute, in the user's zone (Asia/Seoul).
	now := p.clock.Now().In(time.FixedZone("KST", 9*3600))
	start := now.Add(-time.Minute).Format("15:04")
	end := now.Add(-2 * time.Minute).Format("15:04")
	if _, err := p.client.PutPreferences(p.ctx, "u1", Preferences{QuietHours: &heraldtype.QuietHours{Start: start, End: end}}); err != nil {
		t.Fatal(err)
	}
	r := cartReminder("quiet")
	r.QuietHours = QuietSkip
	if _, _, err := p.client.PutReminder(p.ctx, r); err != nil {
		t.Fatal(err)
	}
	p.clock.Advance(time.Hour)
	c := p.tickReminders()
	if c["enqueued"] != 0 || c["skipped_quiet_hours"] != 1 {
		t.Fatalf("counts %v, want the occurrence skipped", c)
	}
	got := p.reminder("quiet")
	if got.SentCount != 0 || got.State != heraldtype.ReminderActive || !got.NextAt.After(p.clock.Now()) {
		t.Fatalf("after the skip: sent %d state %s next %v", got.SentCount, got.State, got.NextAt)
	}
}

// The scheduler runs by itself on a started Client (the leader's daemon):
// a one-shot reminder two seconds ahead is enqueued without any hand
// ticking, and then stops as completed.
func TestReminderSchedulerRunsOnAStartedClient(t *testing.T) {
	p := newPipeline(t, func(c *Config) {
		c.Types["cart_reminder"] = TypeConfig{Channels: []heraldtype.Channel{heraldtype.ChannelInApp}}
		c.Logger = slog.New(slog.DiscardHandler)
		c.Now = time.Now
	})
	if _, err := p.client.PutUser(p.ctx, "u1", UserInput{}); err != nil {
		t.Fatal(err)
	}
	at := time.Now().Add(2 * time.Second).UTC()
	if _, _, err := p.client.PutReminder(p.ctx, ReminderRequest{Key: "once", UserID: "u1", Type: "cart_reminder",
		Title: "hi", Schedule: heraldtype.Schedule{At: at}}); err != nil {
		t.Fatal(err)
	}
	if err := p.client.Start(p.ctx); err != nil {
		t.Fatal(err)
	}
	defer p.client.Stop(context.Background())
	deadline := time.Now().Add(30 * time.Second)
	for {
		r := p.reminder("once")
		if r.State == heraldtype.ReminderStopped {
			if r.LastSentAt.Before(at) {
				t.Fatalf("fired at %v, before it was due at %v", r.LastSentAt, at)
			}
			if r.StopReason != heraldtype.StopCompleted || r.SentCount != 1 || r.LastNotificationID == "" {
				t.Fatalf("after its one occurrence: %+v", r)
			}
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the started Client never fired the reminder: %+v", r)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
