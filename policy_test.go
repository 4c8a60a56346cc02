package herald

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"sync"
	"testing"
	"time"

	fcmemu "github.com/heraldhq/herald/emulator/fcm"
	"github.com/heraldhq/herald/heraldtype"
	"github.com/heraldhq/herald/provider/fcm"
	"github.com/heraldhq/herald/store/sqlite"
)

// newPolicyPipeline is newPipeline with an emulator that accepts any
// OAuth token: these tests move the clock by hours and days, past the
// lifetime of the token the FCM client fetched at the start.
func newPolicyPipeline(t *testing.T, mod func(*Config)) *pipeline {
	t.Helper()
	ctx := t.Context()
	st, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "herald.db"), sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	if err := st.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	clock := &testClock{now: time.Now().UTC().Truncate(time.Millisecond)}
	em := fcmemu.New(fcmemu.Config{Now: clock.Now, Seed: 1, AcceptAnyToken: true})
	if _, err := em.Start("127.0.0.1:0"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { em.Close() })
	push, err := fcm.New(fcm.Config{CredentialsJSON: em.ServiceAccountJSON("p"), Endpoint: em.URL()})
	if err != nil {
		t.Fatal(err)
	}
	cfg := Config{Store: st, Providers: map[string]Provider{"fcm": push},
		Types: map[string]TypeConfig{"nudge": {Guarantee: heraldtype.AtMostOnce}}, Now: clock.Now,
		Logger: slog.New(slog.DiscardHandler)}
	if mod != nil {
		mod(&cfg)
	}
	c, err := NewClient(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return &pipeline{t: t, ctx: ctx, client: c, store: st, em: em, clock: clock}
}

func (p *pipeline) setClock(t time.Time) {
	p.clock.mu.Lock()
	defer p.clock.mu.Unlock()
	p.clock.now = t
}

// user creates a user in tz with one android device whose token is tok.
func (p *pipeline) user(id, tz, tok string) {
	p.t.Helper()
	if _, err := p.client.PutUser(p.ctx, id, UserInput{Timezone: tz}); err != nil {
		p.t.Fatal(err)
	}
	if _, err := p.client.RegisterDevice(p.ctx, id, DeviceInput{DeviceID: "dev-" + id, Token: tok, Platform: "android"}); err != nil {
		p.t.Fatal(err)
	}
}

func (p *pipeline) history(f HistoryFilter) []HistoryEntry {
	p.t.Helper()
	page, err := p.client.ListHistory(p.ctx, f)
	if err != nil {
		p.t.Fatal(err)
	}
	return page.Notifications
}

// S3.13 exit criterion: a duplicate within 1 h is blocked — and recorded.
func TestPolicyDuplicateWithinAnHourIsBlocked(t *testing.T) {
	p := newPolicyPipeline(t, nil)
	p.user("u1", "Asia/Seoul", "tok-1")
	first := p.enqueue(Request{UserID: "u1", Type: "price_drop", DedupeKey: "product-7"})
	p.work()
	p.clock.Advance(59 * time.Minute)
	dup := p.enqueue(Request{UserID: "u1", Type: "price_drop", DedupeKey: "product-7"})
	other := p.enqueue(Request{UserID: "u1", Type: "price_drop", DedupeKey: "product-8"})
	p.work()
	if d := p.only(first.Notifications[0].ID); d.State != heraldtype.StateSent {
		t.Fatalf("first = %s", d.State)
	}
	d := p.only(dup.Notifications[0].ID)
	if d.State != heraldtype.StateRateLimited || d.LastErrorCode != "duplicate" || d.LastError == "" {
		t.Fatalf("duplicate = %s/%s %q, want rate_limited/duplicate", d.State, d.LastErrorCode, d.LastError)
	}
	if d := p.only(other.Notifications[0].ID); d.State != heraldtype.StateSent {
		t.Fatalf("another key = %s, want sent", d.State)
	}
	if n := len(p.em.MessagesTo("tok-1")); n != 2 {
		t.Fatalf("the phone got %d messages, want 2", n)
	}
	h := p.history(HistoryFilter{UserID: "u1", Status: heraldtype.HistoryRateLimited})
	if len(h) != 1 || h[0].NotificationID != dup.Notifications[0].ID || h[0].Reason != "duplicate" {
		t.Fatalf("history = %+v", h)
	}
	// After the window the key may be used again.
	p.clock.Advance(time.Hour)
	again := p.enqueue(Request{UserID: "u1", Type: "price_drop", DedupeKey: "product-7"})
	p.work()
	if d := p.only(again.Notifications[0].ID); d.State != heraldtype.StateSent {
		t.Fatalf("after the window = %s %s %s, want sent", d.State, d.LastErrorCode, d.LastError)
	}
}

// Issue 4: 50 concurrent identical triggers produce exactly one delivery.
func TestPolicyConcurrentIdenticalTriggersSendOnce(t *testing.T) {
	p := newPolicyPipeline(t, nil)
	p.user("u1", "Asia/Seoul", "tok-1")
	const n = 50
	var wg sync.WaitGroup
	errs := make(chan error, n)
	ids := make(chan string, n)
	for range n {
		wg.Go(func() {
			res, err := p.client.Enqueue(p.ctx, Request{UserID: "u1", Type: "back_in_stock", Title: "Back!", DedupeKey: "product-7"})
			if err != nil {
				errs <- err
				return
			}
			ids <- res.Notifications[0].ID
		})
	}
	wg.Wait()
	close(errs)
	close(ids)
	for err := range errs {
		t.Fatal(err)
	}
	p.work()
	sent, limited := 0, 0
	for id := range ids {
		switch d := p.only(id); d.State {
		case heraldtype.StateSent:
			sent++
		case heraldtype.StateRateLimited:
			limited++
		default:
			t.Fatalf("delivery of %s is %s", id, d.State)
		}
	}
	if sent != 1 || limited != n-1 || len(p.em.MessagesTo("tok-1")) != 1 {
		t.Fatalf("sent %d, rate limited %d, phone got %d; want 1, %d, 1", sent, limited, len(p.em.MessagesTo("tok-1")), n-1)
	}
}

// S3.13 exit criterion: the 11th capped notification of a user's local day
// is blocked; the count resets at the user's own midnight.
func TestPolicyDailyCapPerLocalDay(t *testing.T) {
	p := newPolicyPipeline(t, func(c *Config) {
		c.Types = map[string]TypeConfig{"promo": {CountsTowardCap: &capped}, "alarm": {CountsTowardCap: &capped, Critical: true}}
	})
	p.user("ny", "America/New_York", "tok-ny")
	p.user("seoul", "Asia/Seoul", "tok-seoul")
	// 23:30 on Nov 21 in New York is 13:30 on Nov 22 in Seoul.
	p.setClock(time.Date(2026, 11, 22, 4, 30, 0, 0, time.UTC))
	var last map[string]string
	for i := range 11 {
		last = map[string]string{}
		for _, u := range []string{"ny", "seoul"} {
			last[u] = p.enqueue(Request{UserID: u, Type: "promo", Title: fmt.Sprint("deal ", i)}).Notifications[0].ID
		}
		p.work()
	}
	for _, u := range []string{"ny", "seoul"} {
		d := p.only(last[u])
		if d.State != heraldtype.StateRateLimited || d.LastErrorCode != "daily_cap" {
			t.Fatalf("%s: 11th = %s/%s, want rate_limited/daily_cap", u, d.State, d.LastErrorCode)
		}
		if n := len(p.em.MessagesTo("tok-" + u)); n != 10 {
			t.Fatalf("%s got %d, want 10", u, n)
		}
	}
	// Critical bypasses the cap.
	alarm := p.enqueue(Request{UserID: "ny", Type: "alarm", Title: "fire"})
	p.work()
	if d := p.only(alarm.Notifications[0].ID); d.State != heraldtype.StateSent {
		t.Fatalf("critical over the cap = %s, want sent", d.State)
	}
	// An hour later it is a new day in New York, not in Seoul.
	p.clock.Advance(time.Hour)
	ny := p.enqueue(Request{UserID: "ny", Type: "promo", Title: "new day"})
	seoul := p.enqueue(Request{UserID: "seoul", Type: "promo", Title: "same day"})
	p.work()
	if d := p.only(ny.Notifications[0].ID); d.State != heraldtype.StateSent {
		t.Fatalf("New York after its midnight = %s, want sent", d.State)
	}
	if d := p.only(seoul.Notifications[0].ID); d.State != heraldtype.StateRateLimited {
		t.Fatalf("Seoul on the same day = %s, want rate_limited", d.State)
	}
}

// Issue 39 item 3: the worker counts a claimed batch's daily caps in one
// call, in the order it claimed them. Twelve capped notifications of one
// user claimed together: the first ten are sent, the 11th and 12th are
// blocked (S3.8), as if counted one by one.
func TestPolicyDailyCapWithinOneBatch(t *testing.T) {
	p := newPolicyPipeline(t, func(c *Config) { c.Types = map[string]TypeConfig{"promo": {CountsTowardCap: &capped}} })
	p.user("u1", "Asia/Seoul", "tok-1")
	var ids []string
	for i := range 12 {
		ids = append(ids, p.enqueue(Request{UserID: "u1", Type: "promo", Title: fmt.Sprint("deal ", i)}).Notifications[0].ID)
	}
	if n, err := p.client.runOnce(p.ctx); err != nil || n != 12 {
		t.Fatalf("one claim took %d deliveries, %v; want all 12", n, err)
	}
	for i, id := range ids {
		want, code := heraldtype.StateSent, ""
		if i >= 10 {
			want, code = heraldtype.StateRateLimited, "daily_cap"
		}
		if d := p.only(id); d.State != want || d.LastErrorCode != code {
			t.Fatalf("notification %d of the batch: %s/%s, want %s/%s", i+1, d.State, d.LastErrorCode, want, code)
		}
	}
	if n := len(p.em.MessagesTo("tok-1")); n != 10 {
		t.Fatalf("the phone got %d, want 10", n)
	}
}

// Quiet hours defer (not drop) and then pass, in the user's zone, across
// the March DST change: 23:00 EST to 08:00 EDT is 8 hours, not 9.
func TestPolicyQuietHoursDeferAcrossDST(t *testing.T) {
	p := newPolicyPipeline(t, func(c *Config) {
		c.Types = map[string]TypeConfig{"alarm": {Critical: true}}
	})
	p.user("u1", "America/New_York", "tok-1")
	if _, err := p.client.PutPreferences(p.ctx, "u1", Preferences{QuietHours: &QuietHours{Start: "22:00", End: "08:00"}}); err != nil {
		t.Fatal(err)
	}
	p.setClock(time.Date(2026, 3, 8, 4, 0, 0, 0, time.UTC)) // 23:00 EST, Mar 7
	nudge := p.enqueue(Request{UserID: "u1", Type: "promo", Title: "psst"})
	alarm := p.enqueue(Request{UserID: "u1", Type: "alarm", Title: "fire"})
	p.work()
	d := p.only(nudge.Notifications[0].ID)
	wantUntil := time.Date(2026, 3, 8, 12, 0, 0, 0, time.UTC) // 08:00 EDT
	if d.State != heraldtype.StatePending || !d.RunAt.Equal(wantUntil) || d.Attempt != 0 {
		t.Fatalf("deferred = %s run_at %v attempt %d, want pending until %v", d.State, d.RunAt, d.Attempt, wantUntil)
	}
	if h := p.history(HistoryFilter{Status: heraldtype.HistoryDeferred}); len(h) != 1 || h[0].Reason != "quiet_hours" {
		t.Fatalf("history = %+v", h)
	}
	if d := p.only(alarm.Notifications[0].ID); d.State != heraldtype.StateSent {
		t.Fatalf("critical in quiet hours = %s, want sent", d.State)
	}
	p.setClock(wantUntil.Add(-time.Second))
	p.work()
	if len(p.em.MessagesTo("tok-1")) != 1 {
		t.Fatal("the deferred notification was sent inside quiet hours")
	}
	p.setClock(wantUntil)
	p.work()
	if d := p.only(nudge.Notifications[0].ID); d.State != heraldtype.StateSent || d.Attempt != 1 {
		t.Fatalf("after quiet hours = %s attempt %d, want sent on its first attempt", d.State, d.Attempt)
	}
	outs := []heraldtype.AttemptOutcome{}
	for _, a := range p.only(nudge.Notifications[0].ID).Attempts {
		outs = append(outs, a.Outcome)
	}
	if fmt.Sprint(outs) != "[deferred sent]" {
		t.Fatalf("timeline = %v, want [deferred sent]", outs)
	}
}

// An opt-out is recorded as USER_OPTED_OUT with its reason; a critical
// type bypasses the user's opt-outs (issue 22).
func TestPolicyOptOutIsRecorded(t *testing.T) {
	p := newPolicyPipeline(t, func(c *Config) {
		c.Types = map[string]TypeConfig{"alarm": {Critical: true}}
	})
	p.user("u1", "Asia/Seoul", "tok-1")
	_, err := p.client.PutPreferences(p.ctx, "u1", Preferences{Types: map[string]TypePreference{
		"promo": {Disabled: true}, "alarm": {Disabled: true}, "order": {Channels: []heraldtype.Channel{heraldtype.ChannelEmail}}}})
	if err != nil {
		t.Fatal(err)
	}
	for typ, code := range map[string]string{"promo": "type_disabled", "order": "channel_disabled"} {
		res := p.enqueue(Request{UserID: "u1", Type: typ, Title: "x"})
		p.work()
		d := p.only(res.Notifications[0].ID)
		if d.State != heraldtype.StateOptedOut || d.LastErrorCode != code {
			t.Fatalf("%s: %s/%s, want opted_out/%s", typ, d.State, d.LastErrorCode, code)
		}
	}
	if len(p.em.MessagesTo("tok-1")) != 0 {
		t.Fatal("an opted-out notification was sent")
	}
	if h := p.history(HistoryFilter{UserID: "u1", Status: heraldtype.HistoryOptedOut}); len(h) != 2 {
		t.Fatalf("history has %d opted-out entries, want 2", len(h))
	}
	res := p.enqueue(Request{UserID: "u1", Type: "alarm", Title: "x"})
	p.work()
	if d := p.only(res.Notifications[0].ID); d.State != heraldtype.StateSent {
		t.Fatalf("critical type the user turned off: %s/%s, want sent", d.State, d.LastErrorCode)
	}
}

// failingLimiter is a policy store that is down.
type failingLimiter struct{}

func (failingLimiter) AcquireDedupe(context.Context, string, string, time.Duration, time.Time) (bool, error) {
	return false, errors.New("redis: connection refused")
}

func (failingLimiter) CountDaily(context.Context, string, string, string, int, time.Time) (bool, error) {
	return false, errors.New("redis: connection refused")
}

// S1.3: when the policy store fails nothing is sent blind; the delivery
// waits for it.
func TestPolicyFailsClosed(t *testing.T) {
	p := newPolicyPipeline(t, func(c *Config) { c.PolicyLimiter = failingLimiter{} })
	p.user("u1", "Asia/Seoul", "tok-1")
	res := p.enqueue(Request{UserID: "u1", Type: "price_drop", DedupeKey: "product-7"})
	p.work()
	d := p.only(res.Notifications[0].ID)
	if d.State != heraldtype.StatePending || d.Attempt != 0 || d.LastErrorCode != "policy_error" ||
		len(d.Attempts) != 1 || d.Attempts[0].Outcome != heraldtype.OutcomePolicyError {
		t.Fatalf("delivery = %+v", d)
	}
	if len(p.em.MessagesTo("tok-1")) != 0 {
		t.Fatal("a notification was sent while the policy store failed")
	}
}

// Unknown types are accepted with the defaults; declared ones override
// them, and the API's declaration overrides the configuration file's.
func TestTypesUnknownAcceptedAndDeclared(t *testing.T) {
	p := newPolicyPipeline(t, nil)
	p.user("u1", "Asia/Seoul", "tok-1")
	got, err := p.client.GetType(p.ctx, "whatever")
	if err != nil || got.Source != TypeSourceDefault || got.CountsTowardCap != nil || !got.QuietHours || got.DedupeWindow != "1h0m0s" {
		t.Fatalf("undeclared type = %+v, %v", got, err)
	}
	if got, err := p.client.GetType(p.ctx, "nudge"); err != nil || got.Source != TypeSourceConfig || got.Guarantee != heraldtype.AtMostOnce {
		t.Fatalf("configured type = %+v, %v", got, err)
	}
	no := false
	put, err := p.client.PutType(p.ctx, "nudge", TypeConfig{Priority: "high", DedupeWindow: "2h", QuietHours: &no,
		Channels: []heraldtype.Channel{heraldtype.ChannelInApp}})
	if err != nil || put.Source != TypeSourceAPI || put.Priority != heraldtype.PriorityHigh || put.Guarantee != heraldtype.AtLeastOnce {
		t.Fatalf("PutType = %+v, %v", put, err)
	}
	res := p.enqueue(Request{UserID: "u1", Type: "nudge", Title: "hi"})
	n, err := p.client.store.GetNotification(p.ctx, res.Notifications[0].ID)
	if err != nil || n.Priority != heraldtype.PriorityHigh || len(n.Channels) != 1 || n.Channels[0] != heraldtype.ChannelInApp {
		t.Fatalf("notification of a declared type = %+v, %v", n, err)
	}
	list, err := p.client.ListTypes(p.ctx)
	if err != nil || len(list) != 1 || list[0].Name != "nudge" || list[0].Source != TypeSourceAPI {
		t.Fatalf("ListTypes = %+v, %v", list, err)
	}
	for _, bad := range []TypeConfig{{DedupeWindow: "soon"}, {Guarantee: "exactly_once"}, {Priority: "urgent"},
		{Channels: []heraldtype.Channel{"fax"}}} {
		if _, err := p.client.PutType(p.ctx, "x", bad); heraldtype.ErrorCode(err) != heraldtype.EINVALID {
			t.Errorf("PutType(%+v) = %v, want invalid_argument", bad, err)
		}
	}
	if _, err := p.client.Enqueue(p.ctx, Request{UserID: "u1", Type: "x", Title: "x", DedupeKey: "a\x01b"}); heraldtype.ErrorCode(err) != heraldtype.EINVALID {
		t.Fatalf("a dedupe key with a control character: %v, want invalid_argument", err)
	}
}
