package herald

// End-to-end tests of the delivery pipeline on the real embedded store and
// the real FCM client against the in-process FCM emulator, with an injected
// clock: backoffs and Retry-After are crossed by moving the clock, never by
// sleeping.

import (
	"context"
	"encoding/json"
	"path/filepath"
	"sync"
	"testing"
	"time"

	fcmemu "github.com/heraldhq/herald/emulator/fcm"
	"github.com/heraldhq/herald/heraldtype"
	"github.com/heraldhq/herald/provider/fcm"
	"github.com/heraldhq/herald/store"
	"github.com/heraldhq/herald/store/sqlite"
)

type testClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *testClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *testClock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

type pipeline struct {
	t      *testing.T
	ctx    context.Context
	client *Client
	store  *sqlite.Store
	em     *fcmemu.Emulator
	clock  *testClock
}

func newPipeline(t *testing.T, mod func(*Config)) *pipeline {
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
	em := fcmemu.New(fcmemu.Config{Now: clock.Now, Seed: 1})
	if _, err := em.Start("127.0.0.1:0"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { em.Close() })
	push, err := fcm.New(fcm.Config{CredentialsJSON: em.ServiceAccountJSON("p"), Endpoint: em.URL()})
	if err != nil {
		t.Fatal(err)
	}
	cfg := Config{
		Store:     st,
		Providers: map[string]Provider{"fcm": push},
		Types:     map[string]TypeConfig{"nudge": {Guarantee: heraldtype.AtMostOnce}},
		Now:       clock.Now,
		Worker:    WorkerConfig{ReapInterval: time.Second},
	}
	if mod != nil {
		mod(&cfg)
	}
	c, err := NewClient(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return &pipeline{t: t, ctx: ctx, client: c, store: st, em: em, clock: clock}
}

// device registers a user (if needed) and an android device with token tok.
func (p *pipeline) device(user, dev, tok string) {
	p.t.Helper()
	if _, err := p.client.PutUser(p.ctx, user, UserInput{}); err != nil {
		p.t.Fatal(err)
	}
	if _, err := p.client.RegisterDevice(p.ctx, user, DeviceInput{DeviceID: dev, Token: tok, Platform: "android"}); err != nil {
		p.t.Fatal(err)
	}
}

func (p *pipeline) enqueue(r Request) Result {
	p.t.Helper()
	if r.Type == "" {
		r.Type = "reservation_confirmed"
	}
	if r.Title == "" {
		r.Title = "Booked"
	}
	res, err := p.client.Enqueue(p.ctx, r)
	if err != nil {
		p.t.Fatalf("enqueue: %v", err)
	}
	return res
}

// work runs worker cycles until a cycle claims nothing, and returns how many
// deliveries were claimed in all.
func (p *pipeline) work() int {
	p.t.Helper()
	total := 0
	for {
		// The elected leader reaps expired leases (here: the only
		// instance, ticked by hand like the worker, and waited for).
		if err := p.client.elector.Tick(p.ctx); err != nil {
			p.t.Fatalf("leadership: %v", err)
		}
		p.client.elector.Wait()
		n, err := p.client.runOnce(p.ctx)
		if err != nil {
			p.t.Fatalf("worker: %v", err)
		}
		if n == 0 {
			return total
		}
		total += n
	}
}

func (p *pipeline) status(id string) NotificationStatus {
	p.t.Helper()
	st, err := p.client.GetNotification(p.ctx, id)
	if err != nil {
		p.t.Fatal(err)
	}
	return st
}

func (p *pipeline) only(id string) heraldtype.Delivery {
	p.t.Helper()
	st := p.status(id)
	if len(st.Deliveries) != 1 {
		p.t.Fatalf("notification %s has %d deliveries, want 1", id, len(st.Deliveries))
	}
	return st.Deliveries[0]
}

func TestPipelineDeliversThroughFCMEmulator(t *testing.T) {
	t.Parallel()
	p := newPipeline(t, nil)
	p.device("u1", "d1", "tok-1")
	if _, err := p.client.RegisterDevice(p.ctx, "u1", DeviceInput{DeviceID: "d2", Token: "tok-2", Platform: "IOS"}); err != nil {
		t.Fatal(err)
	}
	off := false
	if _, err := p.client.RegisterDevice(p.ctx, "u1", DeviceInput{DeviceID: "d3", Token: "tok-3", Platform: "web", PushOptIn: &off}); err != nil {
		t.Fatal(err)
	}
	res := p.enqueue(Request{UserID: "u1", Body: "See you at 7", Data: map[string]string{"reservation": "42"}})
	if len(res.Notifications) != 1 || res.Notifications[0].Deliveries != 2 {
		t.Fatalf("result = %+v, want one notification with 2 deliveries (the opted-out device gets none)", res)
	}
	id := res.Notifications[0].ID
	if st := p.status(id); st.Status != heraldtype.HistoryPending {
		t.Fatalf("status before work = %s", st.Status)
	}
	if n := p.work(); n != 2 {
		t.Fatalf("claimed %d, want 2", n)
	}
	st := p.status(id)
	if st.Status != heraldtype.HistorySent || st.ChannelStatus[heraldtype.ChannelPush] != heraldtype.HistorySent {
		t.Fatalf("status = %s %v, want SENT", st.Status, st.ChannelStatus)
	}
	for _, d := range st.Deliveries {
		msgs := p.em.MessagesTo(map[string]string{"d1": "tok-1", "d2": "tok-2"}[d.DeviceID])
		if len(msgs) != 1 {
			t.Fatalf("device %s received %d messages, want 1", d.DeviceID, len(msgs))
		}
		var m struct {
			Data map[string]string `json:"data"`
		}
		if err := json.Unmarshal(msgs[0].Message, &m); err != nil {
			t.Fatal(err)
		}
		// S0.5: the app drops duplicates by data.messageId.
		if m.Data["messageId"] != d.IdempotencyKey() || m.Data["reservation"] != "42" {
			t.Errorf("data = %v, want messageId %s and the caller's data", m.Data, d.IdempotencyKey())
		}
		if len(d.Attempts) != 1 || d.Attempts[0].Outcome != heraldtype.OutcomeSent || d.Attempts[0].ProviderMessageID == "" {
			t.Errorf("timeline = %+v, want one sent attempt with the provider message id", d.Attempts)
		}
		if d.ProviderMessageID != msgs[0].MessageID && "projects/p/messages/"+msgs[0].MessageID != d.ProviderMessageID {
			t.Errorf("provider message id %q does not name the emulator's %q", d.ProviderMessageID, msgs[0].MessageID)
		}
	}
}

func TestPipelineRetryThenSuccess(t *testing.T) {
	t.Parallel()
	p := newPipeline(t, nil)
	p.device("u1", "d1", "tok-1")
	if err := p.em.FailToken("tok-1", fcmemu.TokenFault{Code: "UNAVAILABLE", Times: 1}); err != nil {
		t.Fatal(err)
	}
	id := p.enqueue(Request{UserID: "u1"}).Notifications[0].ID
	p.work()
	d := p.only(id)
	if d.State != heraldtype.StatePending || d.LastErrorCode != "UNAVAILABLE" || d.Attempt != 1 {
		t.Fatalf("after a 503: %s %s attempt %d, want pending UNAVAILABLE attempt 1", d.State, d.LastErrorCode, d.Attempt)
	}
	// S0.3 backoff: 5 s base with jitter that only adds (at most 7.5 s).
	if wait := d.RunAt.Sub(p.clock.Now()); wait < 5*time.Second || wait > 8*time.Second {
		t.Fatalf("retry scheduled in %v, want 5-7.5 s", wait)
	}
	p.clock.Advance(4 * time.Second)
	if n := p.work(); n != 0 {
		t.Fatalf("claimed %d before the backoff ended", n)
	}
	p.clock.Advance(4 * time.Second)
	p.work()
	d = p.only(id)
	if d.State != heraldtype.StateSent || len(d.Attempts) != 2 || d.Attempts[0].Outcome != heraldtype.OutcomeRetry {
		t.Fatalf("after the retry: %s with attempts %+v, want sent after retry+sent", d.State, d.Attempts)
	}
	if got := len(p.em.MessagesTo("tok-1")); got != 1 {
		t.Fatalf("emulator accepted %d messages, want 1", got)
	}
}

func TestPipelineHonoursRetryAfter(t *testing.T) {
	t.Parallel()
	p := newPipeline(t, nil)
	p.device("u1", "d1", "tok-1")
	if err := p.em.FailToken("tok-1", fcmemu.TokenFault{Code: "UNAVAILABLE", Times: 1, RetryAfterSeconds: 120}); err != nil {
		t.Fatal(err)
	}
	id := p.enqueue(Request{UserID: "u1"}).Notifications[0].ID
	p.work()
	if d := p.only(id); d.Attempts[0].RetryAfter != 120*time.Second {
		t.Fatalf("attempt Retry-After = %v, want 120 s", d.Attempts[0].RetryAfter)
	}
	p.clock.Advance(119 * time.Second)
	if n := p.work(); n != 0 {
		t.Fatalf("claimed %d before Retry-After", n)
	}
	p.clock.Advance(2 * time.Second)
	p.work()
	if d := p.only(id); d.State != heraldtype.StateSent {
		t.Fatalf("after Retry-After: %s, want sent", d.State)
	}
	if early := p.em.Stats().EarlyRetries; early != 0 {
		t.Fatalf("emulator saw %d sends earlier than its Retry-After", early)
	}
}

func TestPipelinePermanentFailureIsDeadAndReplayable(t *testing.T) {
	t.Parallel()
	p := newPipeline(t, nil)
	p.device("u1", "d1", "tok-1")
	if err := p.em.FailToken("tok-1", fcmemu.TokenFault{Code: "SENDER_ID_MISMATCH"}); err != nil {
		t.Fatal(err)
	}
	id := p.enqueue(Request{UserID: "u1"}).Notifications[0].ID
	p.work()
	d := p.only(id)
	if d.State != heraldtype.StateDead || d.LastErrorCode != "SENDER_ID_MISMATCH" || d.Attempt != 1 {
		t.Fatalf("delivery = %s %s attempt %d, want dead SENDER_ID_MISMATCH after 1 attempt", d.State, d.LastErrorCode, d.Attempt)
	}
	// The sender's configuration is at fault, not the device (S0.3 note).
	devs, _ := p.client.ListDevices(p.ctx, "u1")
	if devs[0].Status != heraldtype.DeviceActive {
		t.Fatalf("device = %s, want ACTIVE", devs[0].Status)
	}
	page, err := p.client.ListDeliveries(p.ctx, DeliveryFilter{State: heraldtype.StateDead, ErrorCode: "SENDER_ID_MISMATCH"})
	if err != nil || len(page.Deliveries) != 1 || page.Deliveries[0].ID != d.ID {
		t.Fatalf("dead letters = %+v, %v", page, err)
	}

	// S0.4, S4.6: fix the cause, replay, and the result is kept.
	p.em.ClearFaults()
	if _, err := p.client.ReplayDelivery(p.ctx, d.ID); err != nil {
		t.Fatal(err)
	}
	p.work()
	d = p.only(id)
	if d.State != heraldtype.StateSent || d.ReplayCount != 1 || d.LastReplayResult != heraldtype.StateSent {
		t.Fatalf("after replay: %s replays %d result %q, want sent 1 sent", d.State, d.ReplayCount, d.LastReplayResult)
	}
	if _, err := p.client.ReplayDelivery(p.ctx, d.ID); heraldtype.ErrorCode(err) != heraldtype.ECONFLICT {
		t.Fatalf("replaying a sent delivery: %v, want conflict", err)
	}
}

func TestPipelineUnregisteredInvalidatesTokenAndLaterSkips(t *testing.T) {
	t.Parallel()
	p := newPipeline(t, nil)
	p.device("u1", "d1", "tok-1")
	p.device("u1", "d2", "tok-2")
	if err := p.em.FailToken("tok-1", fcmemu.TokenFault{Code: "UNREGISTERED"}); err != nil {
		t.Fatal(err)
	}
	first := p.enqueue(Request{UserID: "u1"}).Notifications[0].ID
	p.work()
	if st := p.status(first); st.Status != heraldtype.HistoryPartiallySent || st.Reason != "UNREGISTERED" {
		t.Fatalf("status = %s %q, want PARTIALLY_SENT UNREGISTERED", st.Status, st.Reason)
	}
	dev, err := p.store.GetDevice(p.ctx, "d1")
	if err != nil {
		t.Fatal(err)
	}
	if dev.Status != heraldtype.DeviceInvalid || dev.InvalidatedAt == nil || dev.InvalidReason != "UNREGISTERED" {
		t.Fatalf("device = %+v, want INVALID by UNREGISTERED", dev)
	}
	second := p.enqueue(Request{UserID: "u1", Body: "again"})
	if second.Notifications[0].Deliveries != 1 {
		t.Fatalf("later notification has %d deliveries, want 1 (the invalid token is skipped)", second.Notifications[0].Deliveries)
	}
	p.work()
	if got := p.em.Stats().Rejected["UNREGISTERED"]; got != 1 {
		t.Fatalf("the dead token was tried %d times, want once", got)
	}
	// Registering a fresh token brings the device back (S0.1).
	if _, err := p.client.RegisterDevice(p.ctx, "u1", DeviceInput{DeviceID: "d1", Token: "tok-1b", Platform: "android"}); err != nil {
		t.Fatal(err)
	}
	if n := p.enqueue(Request{UserID: "u1", Body: "third"}).Notifications[0].Deliveries; n != 2 {
		t.Fatalf("after re-registration: %d deliveries, want 2", n)
	}
}

func TestPipelineInvalidatedBeforeSendIsSkipped(t *testing.T) {
	t.Parallel()
	p := newPipeline(t, nil)
	p.device("u1", "d1", "tok-1")
	id := p.enqueue(Request{UserID: "u1"}).Notifications[0].ID
	if err := p.client.DeleteDevice(p.ctx, "u1", "d1"); err != nil {
		t.Fatal(err)
	}
	p.work()
	if d := p.only(id); d.State != heraldtype.StateSkipped || d.LastErrorCode != "device_removed" {
		t.Fatalf("delivery = %s %s, want skipped device_removed", d.State, d.LastErrorCode)
	}
	if n := len(p.em.Messages()); n != 0 {
		t.Fatalf("emulator got %d messages", n)
	}
}

func TestPipelineAttemptsExhaustedEndDead(t *testing.T) {
	t.Parallel()
	p := newPipeline(t, func(c *Config) {
		// Seed 004: 1 s → 2 s → 4 s, 3 retries, is only configuration.
		c.Retry = map[heraldtype.ErrorClass]RetryPolicy{heraldtype.ClassTemporary: {Base: time.Second, Factor: 2, Max: time.Minute}}
	})
	p.device("u1", "d1", "tok-1")
	if err := p.em.FailToken("tok-1", fcmemu.TokenFault{Code: "INTERNAL"}); err != nil {
		t.Fatal(err)
	}
	id := p.enqueue(Request{UserID: "u1"}).Notifications[0].ID
	var gaps []time.Duration
	for range 4 {
		p.work()
		d := p.only(id)
		if d.State == heraldtype.StatePending {
			gaps = append(gaps, d.RunAt.Sub(p.clock.Now()))
			p.clock.Advance(d.RunAt.Sub(p.clock.Now()))
		}
	}
	d := p.only(id)
	if d.State != heraldtype.StateDead || d.LastErrorCode != "INTERNAL" || d.Attempt != 4 || len(d.Attempts) != 4 {
		t.Fatalf("delivery = %s %s attempt %d (%d rows), want dead INTERNAL after 4", d.State, d.LastErrorCode, d.Attempt, len(d.Attempts))
	}
	want := []time.Duration{time.Second, 2 * time.Second, 4 * time.Second}
	if len(gaps) != 3 {
		t.Fatalf("gaps = %v", gaps)
	}
	for i, g := range gaps {
		if g != want[i] {
			t.Errorf("retry %d after %v, want %v", i+1, g, want[i])
		}
	}
}

// TestPipelineCrashedWorkerLosesNothing: a worker claims a batch and dies
// before recording any outcome. Its leases expire; another worker reclaims
// them. Every at_least_once delivery ends sent exactly once; every
// at_most_once one ends unknown and is never sent (S1.3, S4.2).
func TestPipelineCrashedWorkerLosesNothing(t *testing.T) {
	t.Parallel()
	p := newPipeline(t, nil)
	users := make([]string, 30)
	for i := range users {
		users[i] = "u" + string(rune('a'+i%26)) + string(rune('0'+i/26))
		p.device(users[i], "d-"+users[i], "tok-"+users[i])
	}
	least := p.enqueue(Request{UserIDs: users[:20]})
	most := p.enqueue(Request{UserIDs: users[20:], Type: "nudge"})

	now := p.clock.Now()
	jobs, err := p.store.Claim(p.ctx, store.ClaimParams{Owner: "crashed", Now: now, LeaseUntil: now.Add(30 * time.Second), Limit: 100})
	if err != nil || len(jobs) != 30 {
		t.Fatalf("crashed worker claimed %d, %v", len(jobs), err)
	}
	if n := p.work(); n != 0 {
		t.Fatalf("claimed %d deliveries still leased by the crashed worker", n)
	}
	p.clock.Advance(31 * time.Second)
	if n := p.work(); n != 20 {
		t.Fatalf("reclaimed %d, want the 20 at_least_once deliveries", n)
	}
	for _, n := range least.Notifications {
		d := p.only(n.ID)
		if d.State != heraldtype.StateSent || d.Attempt != 2 {
			t.Errorf("at_least_once %s: %s attempt %d, want sent on attempt 2", n.UserID, d.State, d.Attempt)
		}
		if got := len(p.em.MessagesTo("tok-" + n.UserID)); got != 1 {
			t.Errorf("%s received %d messages, want 1", n.UserID, got)
		}
	}
	for _, n := range most.Notifications {
		if d := p.only(n.ID); d.State != heraldtype.StateUnknown {
			t.Errorf("at_most_once %s: %s, want unknown", n.UserID, d.State)
		}
		if got := len(p.em.MessagesTo("tok-" + n.UserID)); got != 0 {
			t.Errorf("at_most_once %s was sent %d times", n.UserID, got)
		}
	}
}

func TestPipelineSendAtDelaysDelivery(t *testing.T) {
	t.Parallel()
	p := newPipeline(t, nil)
	p.device("u1", "d1", "tok-1")
	at := p.clock.Now().Add(time.Hour)
	id := p.enqueue(Request{UserID: "u1", SendAt: &at}).Notifications[0].ID
	if n := p.work(); n != 0 {
		t.Fatalf("claimed %d before send_at", n)
	}
	p.clock.Advance(time.Hour)
	p.work()
	if d := p.only(id); d.State != heraldtype.StateSent {
		t.Fatalf("after send_at: %s", d.State)
	}
}

func TestEnqueueIdempotency(t *testing.T) {
	t.Parallel()
	p := newPipeline(t, nil)
	p.device("u1", "d1", "tok-1")
	r := Request{IdempotencyKey: "k1", UserID: "u1", Type: "reservation_confirmed", Title: "Booked"}

	// 20 concurrent identical triggers with one key: one notification.
	ids := make(chan string, 20)
	var wg sync.WaitGroup
	for range 20 {
		wg.Go(func() {
			res, err := p.client.Enqueue(p.ctx, r)
			if err != nil {
				t.Error(err)
				return
			}
			ids <- res.Notifications[0].ID
		})
	}
	wg.Wait()
	close(ids)
	distinct := map[string]bool{}
	for id := range ids {
		distinct[id] = true
	}
	if len(distinct) != 1 {
		t.Fatalf("20 identical triggers made %d notifications", len(distinct))
	}
	if n := p.work(); n != 1 {
		t.Fatalf("claimed %d deliveries, want 1", n)
	}

	again, err := p.client.Enqueue(p.ctx, r)
	if err != nil || !again.Replayed || !distinct[again.Notifications[0].ID] {
		t.Fatalf("replay = %+v, %v", again, err)
	}
	r.Body = "different"
	if _, err := p.client.Enqueue(p.ctx, r); heraldtype.ErrorCode(err) != heraldtype.ECONFLICT {
		t.Fatalf("same key, other body: %v, want conflict", err)
	}
}

func TestEnqueueRejectsBadInput(t *testing.T) {
	t.Parallel()
	p := newPipeline(t, nil)
	p.device("u1", "d1", "tok-1")
	long := make([]byte, 5000)
	for i := range long {
		long[i] = 'x'
	}
	many := make([]string, MaxRecipients+1)
	for i := range many {
		many[i] = "u" + string(rune(i))
	}
	past := p.clock.Now().Add(-time.Hour)
	far := p.clock.Now().Add(2 * MaxSendAhead)
	cases := []struct {
		name string
		r    Request
		code string
	}{
		{"no user", Request{Type: "t", Title: "x"}, heraldtype.EINVALID},
		{"both user fields", Request{UserID: "u1", UserIDs: []string{"u2"}, Type: "t", Title: "x"}, heraldtype.EINVALID},
		{"too many users", Request{UserIDs: many, Type: "t", Title: "x"}, heraldtype.EINVALID},
		{"duplicate users", Request{UserIDs: []string{"u1", "u1"}, Type: "t", Title: "x"}, heraldtype.EINVALID},
		{"unknown user", Request{UserID: "nobody", Type: "t", Title: "x"}, heraldtype.ENOTFOUND},
		{"no type", Request{UserID: "u1", Title: "x"}, heraldtype.EINVALID},
		{"bad type", Request{UserID: "u1", Type: "Bad Type", Title: "x"}, heraldtype.EINVALID},
		{"empty alert", Request{UserID: "u1", Type: "t"}, heraldtype.EINVALID},
		{"title too long", Request{UserID: "u1", Type: "t", Title: string(long)}, heraldtype.EINVALID},
		{"bad priority", Request{UserID: "u1", Type: "t", Title: "x", Priority: "URGENT"}, heraldtype.EINVALID},
		{"unknown channel", Request{UserID: "u1", Type: "t", Title: "x", Channels: []heraldtype.Channel{"pigeon"}}, heraldtype.EINVALID},
		{"unconfigured channel", Request{UserID: "u1", Type: "t", Title: "x", Channels: []heraldtype.Channel{"sms"}}, heraldtype.EINVALID},
		{"reserved data key", Request{UserID: "u1", Type: "t", Title: "x", Data: map[string]string{"messageId": "x"}}, heraldtype.EINVALID},
		{"send_at too far", Request{UserID: "u1", Type: "t", Title: "x", SendAt: &far}, heraldtype.EINVALID},
		{"payload over 4096 bytes", Request{UserID: "u1", Type: "t", Title: "x", Data: map[string]string{"blob": string(long)}}, heraldtype.ETOOLARGE},
		{"invalid utf-8", Request{UserID: "u1", Type: "t", Title: "\xff"}, heraldtype.EINVALID},
	}
	for _, c := range cases {
		if _, err := p.client.Enqueue(p.ctx, c.r); heraldtype.ErrorCode(err) != c.code {
			t.Errorf("%s: got %v, want %s", c.name, err, c.code)
		}
	}
	// A past send_at means now.
	if _, err := p.client.Enqueue(p.ctx, Request{UserID: "u1", Type: "t", Title: "x", SendAt: &past}); err != nil {
		t.Errorf("past send_at: %v", err)
	}
	if n := len(p.em.Messages()); n != 0 {
		t.Fatalf("rejected triggers reached the provider: %d", n)
	}
}
