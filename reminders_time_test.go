package herald

// Issue 30 item 6 (S2.3's immediate first occurrence) and issue 31 item 6
// (one reminder's occurrences at least reminders.gap apart), through the
// Client and the scheduler ticked by hand.

import (
	"errors"
	"log/slog"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/heraldhq/herald/heraldtype"
)

// An immediate reminder is due at registration: the first tick sends it,
// sent_count counts it, and the backoff then waits its first interval. An
// update with immediately sends again at once (S2.3: next = now) unless the
// last send is nearer than the gap, when the send moves past the gap.
func TestReminderImmediately(t *testing.T) {
	p := newReminderPipeline(t)
	req := cartReminder("cart-now")
	req.Schedule.Immediately = true
	r, _, err := p.client.PutReminder(p.ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	if !r.NextAt.Equal(p.clock.Now()) || r.SentCount != 0 {
		t.Fatalf("registered: next %v (now %v), sent %d", r.NextAt, p.clock.Now(), r.SentCount)
	}
	if c := p.tickReminders(); c["enqueued"] != 1 {
		t.Fatalf("first tick: %v, want the immediate occurrence enqueued", c)
	}
	r = p.reminder("cart-now")
	if r.SentCount != 1 || !r.NextAt.Equal(p.clock.Now().Add(time.Hour)) {
		t.Fatalf("after the immediate send: sent %d, next %v, want 1 and an hour from now", r.SentCount, r.NextAt)
	}
	if n := p.status(r.LastNotificationID); n.IdempotencyKey != "reminder:"+r.ID+":1" {
		t.Fatalf("immediate occurrence's key %q", n.IdempotencyKey)
	}
	// An update ten seconds later: due now, but moved past the gap from
	// the last send.
	p.clock.Advance(10 * time.Second)
	if _, _, err := p.client.PutReminder(p.ctx, req); err != nil {
		t.Fatal(err)
	}
	if c := p.tickReminders(); c["enqueued"] != 0 || c["collided"] != 1 {
		t.Fatalf("update within the gap: %v, want moved", c)
	}
	p.clock.Advance(2 * time.Minute)
	if c := p.tickReminders(); c["enqueued"] != 1 {
		t.Fatalf("after the gap: %v", c)
	}
	r = p.reminder("cart-now")
	// The immediate send does not grow the backoff: the wait after send 2
	// is first·factor¹, the one the update started with.
	if r.SentCount != 2 || !r.NextAt.Equal(p.clock.Now().Add(2*time.Hour)) {
		t.Fatalf("after the update's send: sent %d, next in %v", r.SentCount, r.NextAt.Sub(p.clock.Now()))
	}
	// A campaign takes no immediately: a run is started by hand.
	_, _, err = p.client.PutCampaign(p.ctx, CampaignRequest{Name: "weekly", Type: "digest", Title: "t",
		Schedule: heraldtype.Schedule{Cron: "0 9 * * *", Immediately: true}, Audience: heraldtype.Audience{All: true}})
	var he *heraldtype.Error
	if !errors.As(err, &he) || he.Field != "schedule.immediately" {
		t.Fatalf("campaign with immediately: %v", err)
	}
}

// A schedule whose occurrences come closer than reminders.gap is refused
// when saved, naming its field; with the gap off it is taken.
func TestReminderRefusesScheduleBelowGap(t *testing.T) {
	p := newReminderPipeline(t)
	for _, s := range []heraldtype.Schedule{
		{RRule: "FREQ=DAILY;BYHOUR=9;BYMINUTE=0;BYSECOND=" + seconds(60)},
		{RRule: "FREQ=DAILY;BYHOUR=9;BYMINUTE=0;BYSECOND=0,30"},
	} {
		req := cartReminder("fast")
		req.Schedule = s
		_, _, err := p.client.PutReminder(p.ctx, req)
		var he *heraldtype.Error
		if !errors.As(err, &he) || he.Code != heraldtype.EINVALID || he.Field != "schedule.rrule" || !strings.Contains(he.Message, "1m0s apart") {
			t.Fatalf("%s: %v, want schedule.rrule refused below the gap", s.RRule, err)
		}
	}
	req := cartReminder("minutely")
	req.Schedule = heraldtype.Schedule{Cron: "* * * * *"}
	if _, _, err := p.client.PutReminder(p.ctx, req); err != nil {
		t.Fatalf("a minutely cron is exactly the default gap: %v", err)
	}
	off := newPipeline(t, func(c *Config) {
		c.Types["cart_reminder"] = TypeConfig{}
		c.Logger = slog.New(slog.DiscardHandler)
		c.Reminders.Gap = -1
	})
	off.device("u1", "d1", "tok-1")
	req = cartReminder("fast")
	req.Schedule = heraldtype.Schedule{RRule: "FREQ=DAILY;BYHOUR=9;BYMINUTE=0;BYSECOND=0,30"}
	if _, _, err := off.client.PutReminder(off.ctx, req); err != nil {
		t.Fatalf("gap off: %v", err)
	}
}

// The scheduler keeps the gap between a reminder's own occurrences where
// the saved schedule's spacing is not enough: on Lord Howe's
// spring-forward day a rule at 02:15 and 02:40 fires at 02:40 and at
// 02:45 (the shifted 02:15), five minutes apart — with a ten-minute gap
// the second is passed over. A schedule stored before the save-time check
// (every second from 09:00 to 09:23) fires once per gap.
func TestReminderOwnOccurrencesKeepTheGap(t *testing.T) {
	p := newPipeline(t, func(c *Config) {
		c.Types["cart_reminder"] = TypeConfig{}
		c.Logger = slog.New(slog.DiscardHandler)
		c.Reminders.Gap = 10 * time.Minute
	})
	p.device("u1", "d1", "tok-1")
	lh, err := time.LoadLocation("Australia/Lord_Howe")
	if err != nil {
		t.Fatal(err)
	}
	p.clock.now = time.Date(2026, 10, 3, 12, 0, 0, 0, lh).UTC()
	req := cartReminder("lh")
	req.Schedule = heraldtype.Schedule{RRule: "FREQ=DAILY;BYHOUR=2;BYMINUTE=15,40", TimeZone: "Australia/Lord_Howe"}
	if _, _, err := p.client.PutReminder(p.ctx, req); err != nil {
		t.Fatal(err)
	}
	var sent []string
	for end := p.clock.Now().Add(40 * time.Hour); p.clock.Now().Before(end); p.clock.Advance(time.Minute) {
		before := p.reminder("lh").SentCount
		if c := p.tickReminders(); c["enqueued"] > 0 && p.reminder("lh").SentCount > before {
			sent = append(sent, p.clock.Now().In(lh).Format("01-02 15:04"))
		}
	}
	if got, want := strings.Join(sent, " "), "10-04 02:40 10-05 02:15 10-05 02:40"; got != want {
		t.Fatalf("sent at %s, want %s", got, want)
	}

	// A schedule saved before the check existed, written to the store as is.
	if err := p.client.CancelReminder(p.ctx, "lh"); err != nil {
		t.Fatal(err)
	}
	now := time.Date(2026, 11, 25, 8, 59, 0, 0, time.UTC)
	p.clock.now = now
	fast := heraldtype.Reminder{Key: "fast", ID: "rem-fast", UserID: "u1", Type: "cart_reminder", Title: "t",
		Schedule:   heraldtype.Schedule{RRule: "FREQ=DAILY;BYHOUR=9;BYMINUTE=" + seconds(24) + ";BYSECOND=" + seconds(60), TimeZone: "UTC", CatchUp: heraldtype.CatchUpAll},
		QuietHours: QuietDefer, State: heraldtype.ReminderActive, NextAt: now.Add(time.Minute), NextOccurrence: now.Add(time.Minute),
		ScheduleStart: now, CreatedAt: now, UpdatedAt: now}
	if _, _, err := p.store.PutReminder(p.ctx, fast, now); err != nil {
		t.Fatal(err)
	}
	sends := 0
	for range 25 * 60 / 5 {
		p.clock.Advance(5 * time.Second)
		sends += p.tickReminders()["enqueued"]
	}
	if r := p.reminder("fast"); sends != 3 || r.SentCount != 3 {
		t.Fatalf("every-second schedule sent %d (sent_count %d) in 25 minutes, want 3 (09:00, 09:10, 09:20)", sends, r.SentCount)
	}
}

// seconds lists 0..n-1 for BYSECOND.
func seconds(n int) string {
	s := make([]string, n)
	for i := range s {
		s[i] = strconv.Itoa(i)
	}
	return strings.Join(s, ",")
}
