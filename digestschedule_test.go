package herald

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync/atomic"
	"testing"
	"time"

	"github.com/heraldhq/herald/heraldtype"
	"github.com/heraldhq/herald/store"
)

// Issue 36 item 2: a user's preference turns a type into a digest sent on
// the user's own schedule, in the user's time zone — here daily at 18:00
// in New York on the spring-forward day, so the digest closes at 22:00 UTC
// (18:00 EDT), not 23:00 (18:00 EST). Another user's triggers of the type
// stay plain; a critical type is never digested; a type with a window
// digest closes the scheduled user's digest at the schedule, not after
// the window; a type without digest templates renders the default message.
func TestDigestUserSchedule(t *testing.T) {
	p := newPolicyPipeline(t, func(c *Config) {
		c.Types = map[string]TypeConfig{
			"comment": {},
			"like":    commentDigest(nil),
			"alarm":   {Critical: true},
		}
	})
	p.user("u1", "America/New_York", "tok-1")
	p.user("u2", "America/New_York", "tok-2")
	daily := &heraldtype.DigestSchedule{Every: "day", At: "18:00"}
	// A schedule is validated by name.
	_, err := p.client.PutPreferences(p.ctx, "u1", Preferences{Types: map[string]TypePreference{
		"comment": {Digest: &heraldtype.DigestSchedule{Every: "day", At: "6pm"}}}})
	var he *heraldtype.Error
	if !errors.As(err, &he) || he.Code != heraldtype.EINVALID || he.Field != "types.comment.digest.at" {
		t.Fatalf("a bad schedule = %v, want invalid_argument on types.comment.digest.at", err)
	}
	if _, err := p.client.PutPreferences(p.ctx, "u1", Preferences{Types: map[string]TypePreference{
		"comment": {Digest: daily}, "like": {Digest: daily}, "alarm": {Digest: daily}}}); err != nil {
		t.Fatal(err)
	}
	if got, _ := p.client.GetPreferences(p.ctx, "u1"); got.Types["comment"].Digest == nil || *got.Types["comment"].Digest != *daily {
		t.Fatalf("stored preferences = %+v", got.Types)
	}
	p.setClock(time.Date(2026, 3, 8, 12, 0, 0, 0, time.UTC)) // 08:00 EDT, the day clocks went forward
	c := func(user string, i int) Request {
		r := comment(user, "p1", i)
		r.Title = "c" + string(rune('0'+i))
		return r
	}
	var digestID string
	for i := range 3 {
		n := p.enqueue(c("u1", i)).Notifications[0]
		if n.Digest == "" || n.Deliveries != 0 || (digestID != "" && n.Digest != digestID) {
			t.Fatalf("u1's trigger %d = %+v, want it in one digest", i, n)
		}
		digestID = n.Digest
	}
	if n := p.enqueue(c("u2", 0)).Notifications[0]; n.Digest != "" || n.Deliveries != 1 {
		t.Fatalf("u2's trigger = %+v, want a plain notification", n)
	}
	alarm := c("u1", 0)
	alarm.Type = "alarm"
	if n := p.enqueue(alarm).Notifications[0]; n.Digest != "" || n.Deliveries != 1 {
		t.Fatalf("critical trigger = %+v, want a plain notification", n)
	}
	like := c("u1", 0)
	like.Type = "like"
	likeDigest := p.enqueue(like).Notifications[0].Digest
	wantClose := time.Date(2026, 3, 8, 22, 0, 0, 0, time.UTC)
	for _, id := range []string{digestID, likeDigest} {
		if d, err := p.client.GetDigest(p.ctx, id); err != nil || !d.CloseAt.Equal(wantClose) || d.Key != "" {
			t.Fatalf("digest %s = %+v, %v; want closing at %s with no key", id, d.DigestInfo, err, wantClose)
		}
	}
	p.setClock(wantClose.Add(-time.Second))
	if n, err := p.client.runDigestsOnce(p.ctx); err != nil || n != 0 {
		t.Fatalf("before 18:00: claimed %d (%v)", n, err)
	}
	p.setClock(wantClose)
	if n, err := p.client.runDigestsOnce(p.ctx); err != nil || n != 2 {
		t.Fatalf("at 18:00: claimed %d (%v), want both digests", n, err)
	}
	d, err := p.client.GetDigest(p.ctx, digestID)
	if err != nil || d.State != store.DigestSent || d.Items != 3 {
		t.Fatalf("digest = %+v, %v", d.DigestInfo, err)
	}
	st := p.status(d.NotificationID)
	if st.Title != "c0 (+2 more)" || st.Body != "c0\nc1\nc2" || st.Source == nil || st.Source.Count != 3 {
		t.Fatalf("the default digest message = %q / %q (%+v)", st.Title, st.Body, st.Source)
	}
	// The next trigger opens the next day's digest.
	n := p.enqueue(c("u1", 4)).Notifications[0]
	if next, _ := p.client.GetDigest(p.ctx, n.Digest); n.Digest == digestID || !next.CloseAt.Equal(wantClose.Add(24*time.Hour)) {
		t.Fatalf("next digest = %+v", next.DigestInfo)
	}
}

// Issue 36 item 4: a cancel by key reaches the triggers waiting in a
// digest — the answer lists them, and the digest sent after shows only
// the others.
func TestCancelDigestedTrigger(t *testing.T) {
	p := newPipeline(t, func(c *Config) {
		c.Types = map[string]TypeConfig{"comment": commentDigest(nil)}
	})
	p.device("u1", "d1", "tok-1")
	var cancelled EnqueuedNotification
	for i := range 3 {
		r := comment("u1", "p1", i)
		if i == 1 {
			r.CancellationKey = "thread-9"
		}
		n := p.enqueue(r).Notifications[0]
		if i == 1 {
			cancelled = n
		}
	}
	res, err := p.client.Cancel(p.ctx, CancelRequest{CancellationKey: "thread-9", UserID: "u1"})
	if err != nil || len(res.DigestItems) != 1 || res.DigestItems[0] != (CancelledDigestItem{DigestID: cancelled.Digest, ID: cancelled.ID}) {
		t.Fatalf("Cancel = %+v, %v; want the digested trigger", res, err)
	}
	// An event cancels by key too, and counts the triggers it took out.
	r := comment("u1", "p1", 3)
	r.CancellationKey = "thread-10"
	p.enqueue(r)
	if out, err := p.client.Track(p.ctx, Event{Name: "thread_closed", UserID: "u1", CancellationKey: "thread-10"}); err != nil ||
		out.CancelledDigestItems != 1 || out.CancelledDeliveries != 0 {
		t.Fatalf("Track = %+v, %v; want one digested trigger cancelled", out, err)
	}
	p.clock.Advance(time.Minute)
	if n, err := p.client.runDigestsOnce(p.ctx); err != nil || n != 1 {
		t.Fatalf("claimed %d (%v)", n, err)
	}
	d, err := p.client.GetDigest(p.ctx, cancelled.Digest)
	if err != nil || d.State != store.DigestSent || d.Cancelled != 2 || len(d.Entries) != 2 {
		t.Fatalf("digest = %+v, %v", d, err)
	}
	if st := p.status(d.NotificationID); st.Title != "2 new comments" || st.Body != "a0 a2 " {
		t.Fatalf("digest message = %q / %q, want the cancelled trigger left out", st.Title, st.Body)
	}
}

// preferenceReads counts the store's GetPreferencesMany reads.
type preferenceReads struct {
	store.Store
	n atomic.Int64
}

func (r *preferenceReads) GetPreferencesMany(ctx context.Context, users []string) (map[string]heraldtype.Preferences, error) {
	r.n.Add(1)
	return r.Store.GetPreferencesMany(ctx, users)
}

// Issue 36 item 2: a trigger reads its recipients' preferences only for a
// type some user chose a digest schedule for. A schedule set on this
// instance applies to its next trigger; on another instance, to its
// triggers once its list of scheduled types is read again (2 s).
func TestDigestScheduleReadOnlyForScheduledTypes(t *testing.T) {
	var reads *preferenceReads
	p := newPolicyPipeline(t, func(c *Config) {
		reads = &preferenceReads{Store: c.Store}
		c.Store = reads
		c.Types = map[string]TypeConfig{"comment": {}, "like": {}}
	})
	other, err := NewClient(Config{Store: reads, Providers: p.client.cfg.Providers, Types: p.client.cfg.Types,
		Now: p.client.now, DisableWorkers: true, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	p.user("u1", "Asia/Seoul", "tok-1")
	trigger := func(c *Client, typ string) EnqueuedNotification {
		t.Helper()
		r := comment("u1", "p1", 0)
		r.Type = typ
		res, err := c.Enqueue(p.ctx, r)
		if err != nil {
			t.Fatal(err)
		}
		return res.Notifications[0]
	}
	wantReads := func(want int64) {
		t.Helper()
		if got := reads.n.Load(); got != want {
			t.Fatalf("preference reads = %d, want %d", got, want)
		}
	}
	if n := trigger(p.client, "comment"); n.Digest != "" {
		t.Fatalf("trigger before any schedule = %+v", n)
	}
	if n := trigger(other, "comment"); n.Digest != "" {
		t.Fatalf("the other instance's trigger before any schedule = %+v", n)
	}
	wantReads(0)
	if _, err := p.client.PutPreferences(p.ctx, "u1", Preferences{Types: map[string]TypePreference{
		"comment": {Digest: &heraldtype.DigestSchedule{Every: "day", At: "18:00"}}}}); err != nil {
		t.Fatal(err)
	}
	if n := trigger(p.client, "comment"); n.Digest == "" {
		t.Fatalf("trigger after the schedule on this instance = %+v, want it digested", n)
	}
	wantReads(1)
	if n := trigger(p.client, "like"); n.Digest != "" {
		t.Fatalf("trigger of an unscheduled type = %+v", n)
	}
	wantReads(1)
	// The other instance read its list before the schedule was set: it
	// learns of it when it reads the list again.
	if n := trigger(other, "comment"); n.Digest != "" {
		t.Fatalf("the other instance's trigger within its cache's life = %+v", n)
	}
	other.scheduledTypes.mu.Lock()
	other.scheduledTypes.expires = time.Now()
	other.scheduledTypes.mu.Unlock()
	if n := trigger(other, "comment"); n.Digest == "" {
		t.Fatalf("the other instance's trigger after its list was read again = %+v, want it digested", n)
	}
	wantReads(2)
}

// Issue 36 item 1: a digest is declared on the type, so what a rule sends
// of that type is digested too: three events for one user within the
// window are one digest, its notification sourced from the digest.
func TestRuleNotificationsJoinTheTypesDigest(t *testing.T) {
	p := newPolicyPipeline(t, func(c *Config) {
		c.Types = map[string]TypeConfig{"comment": commentDigest(nil)}
		c.Rules = RuleConfig{Pause: -1}
	})
	p.user("u1", "Asia/Seoul", "tok-u1")
	r := Rule{Name: "comments", When: heraldtype.RuleWhen{Event: "comment_added"},
		Audience: heraldtype.RuleAudience{EventUser: true},
		Notify:   heraldtype.RuleNotify{Type: "comment", Title: "New comment", Data: map[string]string{"post_id": "{{.post}}", "author": "{{.who}}"}}}
	if _, _, err := p.client.PutRule(p.ctx, r); err != nil {
		t.Fatal(err)
	}
	for i, who := range []string{"ann", "bo", "cy"} {
		if _, err := p.client.Track(p.ctx, Event{ID: fmt.Sprint("c", i), Name: "comment_added", UserID: "u1",
			Subject: fmt.Sprint("comment:", i), Data: map[string]string{"post": "p1", "who": who}}); err != nil {
			t.Fatal(err)
		}
		p.fanOut()
	}
	if sent := p.work(); sent != 0 {
		t.Fatalf("sent %d before the window ended, want none", sent)
	}
	p.clock.Advance(time.Minute)
	if n, err := p.client.runDigestsOnce(p.ctx); err != nil || n != 1 {
		t.Fatalf("claimed %d digests (%v), want 1", n, err)
	}
	if sent := p.work(); sent != 1 {
		t.Fatalf("sent %d, want the one digest", sent)
	}
	h := p.history(HistoryFilter{UserID: "u1"})
	if len(h) != 1 || h[0].Title != "3 new comments" || h[0].Source == nil || h[0].Source.Kind != heraldtype.SourceDigest ||
		h[0].Source.Count != 3 {
		t.Fatalf("history = %+v, want one digest of 3", h)
	}
}

// Issue 36: a reminder's occurrence is sent at its time, never folded into
// its type's digest — as a trigger's future send_at is not.
func TestReminderOccurrencesAreNotDigested(t *testing.T) {
	p := newReminderPipeline(t)
	if _, err := p.client.PutType(p.ctx, "cart_reminder", commentDigest(func(d *DigestConfig) { d.Key = "" })); err != nil {
		t.Fatal(err)
	}
	if _, _, err := p.client.PutReminder(p.ctx, cartReminder("cart-42")); err != nil {
		t.Fatal(err)
	}
	p.clock.Advance(time.Hour)
	if c := p.tickReminders(); c["enqueued"] != 1 {
		t.Fatalf("ticked %v, want one occurrence enqueued", c)
	}
	if page, err := p.client.ListDigests(p.ctx, DigestFilter{UserID: "u1"}); err != nil || len(page.Digests) != 0 {
		t.Fatalf("digests = %+v, %v; want none", page.Digests, err)
	}
	if sent := p.work(); sent != 1 {
		t.Fatalf("sent %d, want the occurrence", sent)
	}
}
