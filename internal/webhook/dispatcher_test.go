package webhook_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/netip"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	emulator "github.com/heraldhq/herald/emulator/webhook"
	"github.com/heraldhq/herald/heraldtype"
	"github.com/heraldhq/herald/internal/outbound"
	"github.com/heraldhq/herald/internal/webhook"
	"github.com/heraldhq/herald/store"
	"github.com/heraldhq/herald/store/sqlite"
)

// The dispatcher against the webhook receiver emulator, which checks
// every signature with its own code (issue 35 item 4): what is sent, the
// retries, the order per notification, 410, redirects and the guard.

const testSecret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"

// clock is a settable clock shared by the dispatcher and the receiver,
// so signatures stay within the receiver's tolerance as it moves.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *clock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.now }
func (c *clock) Add(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
}

type harness struct {
	t     *testing.T
	ctx   context.Context
	store store.Store
	recv  *emulator.Emulator
	clock *clock
	d     *webhook.Dispatcher
}

// loopback lets the guard reach the emulator, as callout.allow would.
var loopback = []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}

func newHarness(t *testing.T, mod func(*webhook.Config)) *harness {
	t.Helper()
	ctx := t.Context()
	s, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "herald.db"), sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	if err := s.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	c := &clock{now: time.Now().UTC().Truncate(time.Second)}
	recv, err := emulator.New(emulator.Config{Secrets: []string{testSecret}, Now: c.Now})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := recv.Start("127.0.0.1:0"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { recv.Close() })
	cfg := webhook.Config{Store: s, Client: outbound.New(outbound.Config{Allow: loopback}), Owner: "test",
		Now: c.Now, Jitter: func() float64 { return 1 }, Timeout: 2 * time.Second}
	if mod != nil {
		mod(&cfg)
	}
	d, err := webhook.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return &harness{t: t, ctx: ctx, store: s, recv: recv, clock: c, d: d}
}

func (h *harness) endpoint(id string) {
	h.t.Helper()
	now := h.clock.Now()
	err := h.store.CreateWebhookEndpoint(h.ctx, store.WebhookEndpoint{WebhookEndpoint: heraldtype.WebhookEndpoint{ID: id,
		URL: h.recv.URL() + "/hooks/" + id, Enabled: true, CreatedAt: now, UpdatedAt: now}, Secret: testSecret})
	if err != nil {
		h.t.Fatal(err)
	}
}

func (h *harness) event(id, key string) {
	h.t.Helper()
	_, err := h.store.AddWebhookEvents(h.ctx, []store.WebhookEvent{{EventID: id, Type: heraldtype.WebhookDeliveryFinished,
		OrderingKey: key, Data: []byte(`{"delivery_id":1,"state":"sent"}`), At: h.clock.Now()}})
	if err != nil {
		h.t.Fatal(err)
	}
}

func (h *harness) run() int {
	h.t.Helper()
	n, err := h.d.RunOnce(h.ctx)
	if err != nil {
		h.t.Fatal(err)
	}
	return n
}

func (h *harness) messages(endpoint string) []heraldtype.WebhookMessage {
	h.t.Helper()
	ms, err := h.store.ListWebhookMessages(h.ctx, store.WebhookMessageFilter{EndpointID: endpoint, Limit: 100})
	if err != nil {
		h.t.Fatal(err)
	}
	return ms
}

func (h *harness) endpointRow(id string) store.WebhookEndpoint {
	h.t.Helper()
	e, err := h.store.GetWebhookEndpoint(h.ctx, id)
	if err != nil {
		h.t.Fatal(err)
	}
	return e
}

// received is the ids the receiver accepted (204), in order.
func (h *harness) received() []string {
	var ids []string
	for _, m := range h.recv.Messages() {
		if m.Status == http.StatusNoContent {
			ids = append(ids, m.ID)
		}
	}
	return ids
}

func TestDispatcherSendsSignedMessages(t *testing.T) {
	h := newHarness(t, nil)
	h.endpoint("crm")
	h.event("evt_1", "n1")
	if n := h.run(); n != 1 {
		t.Fatalf("claimed %d, want 1", n)
	}
	got := h.recv.Messages()
	if len(got) != 1 || !got[0].Verified || got[0].Status != http.StatusNoContent || got[0].ID != "evt_1" ||
		got[0].Path != "/hooks/crm" || got[0].Type != heraldtype.WebhookDeliveryFinished {
		t.Fatalf("received %+v", got)
	}
	var body struct {
		Type      string          `json:"type"`
		Timestamp time.Time       `json:"timestamp"`
		Data      json.RawMessage `json:"data"`
	}
	if err := json.Unmarshal(got[0].Body, &body); err != nil || string(body.Data) != `{"delivery_id":1,"state":"sent"}` ||
		!body.Timestamp.Equal(h.clock.Now()) {
		t.Fatalf("body %s: %+v, %v", got[0].Body, body, err)
	}
	// Sent at its first attempt from the log: the cursor passed it, and
	// nothing more was written for it (no status kept).
	if ms := h.messages("crm"); ms[0].State != heraldtype.WebhookSent || ms[0].Attempt != 1 {
		t.Fatalf("after the send: %+v", ms[0])
	}
	if h.run() != 0 {
		t.Fatal("a sent message was claimed again")
	}
}

// A failure is retried after the backoff, with the same id and body;
// the receiver sees one accepted message.
func TestDispatcherRetriesWithBackoff(t *testing.T) {
	var (
		mu       sync.Mutex
		outcomes []string
	)
	h := newHarness(t, func(c *webhook.Config) {
		c.RetryBase = 10 * time.Second
		c.Observe = func(eventType, outcome string, _ time.Duration) {
			mu.Lock()
			outcomes = append(outcomes, eventType+":"+outcome)
			mu.Unlock()
		}
	})
	h.endpoint("crm")
	if err := h.recv.FailPath("/hooks/crm", emulator.PathFault{Status: 503, Times: 2}); err != nil {
		t.Fatal(err)
	}
	h.event("evt_1", "n1")
	h.run()
	m := h.messages("crm")[0]
	if m.State != heraldtype.WebhookPending || m.LastStatus != 503 || m.LastError != "answered 503" {
		t.Fatalf("after a 503: %+v", m)
	}
	// Full jitter with the jitter at its top: the first retry waits the
	// base, the second twice that.
	if want := h.clock.Now().Add(10 * time.Second); !m.RunAt.Equal(want) {
		t.Fatalf("first retry at %v, want %v", m.RunAt, want)
	}
	if h.run() != 0 {
		t.Fatal("retried before its time")
	}
	h.clock.Add(10 * time.Second)
	h.run()
	if m = h.messages("crm")[0]; !m.RunAt.Equal(h.clock.Now().Add(20 * time.Second)) {
		t.Fatalf("second retry at %v, want now+20s", m.RunAt)
	}
	h.clock.Add(20 * time.Second)
	h.run()
	if m = h.messages("crm")[0]; m.State != heraldtype.WebhookSent || m.Attempt != 3 {
		t.Fatalf("third attempt: %+v", m)
	}
	if ids := h.received(); len(ids) != 1 || ids[0] != "evt_1" {
		t.Fatalf("accepted %v", ids)
	}
	mu.Lock()
	got := strings.Join(outcomes, " ")
	mu.Unlock()
	if want := "delivery.finished:retried delivery.finished:retried delivery.finished:sent"; got != want {
		t.Fatalf("observed %q, want %q", got, want)
	}
	if e := h.endpointRow("crm"); e.FailingSince != nil {
		t.Fatalf("failing_since after a success = %v", e.FailingSince)
	}
}

// A Retry-After longer than the backoff is honoured.
func TestDispatcherHonoursRetryAfter(t *testing.T) {
	h := newHarness(t, nil)
	h.endpoint("crm")
	if err := h.recv.FailPath("/hooks/crm", emulator.PathFault{Status: 429, Times: 1, RetryAfterSeconds: 120}); err != nil {
		t.Fatal(err)
	}
	h.event("evt_1", "n1")
	h.run()
	if m := h.messages("crm")[0]; !m.RunAt.Equal(h.clock.Now().Add(120 * time.Second)) {
		t.Fatalf("retry at %v, want the Retry-After's 120 s", m.RunAt)
	}
	h.clock.Add(120 * time.Second)
	h.run()
	if st := h.recv.Stats(); st.EarlyRetries != 0 || st.Accepted != 1 {
		t.Fatalf("stats %+v", st)
	}
}

// A notification's events arrive in order: the second waits while the
// first is retried, and another notification's event is not held.
func TestDispatcherKeepsOrderPerNotification(t *testing.T) {
	h := newHarness(t, func(c *webhook.Config) { c.RetryBase = time.Minute })
	h.endpoint("crm")
	if err := h.recv.SetFaults(emulator.Faults{Down: true}); err != nil {
		t.Fatal(err)
	}
	h.event("evt_a1", "n1")
	h.event("evt_a2", "n1")
	h.event("evt_b1", "n2")
	// One stream batch: a1 and b1 fail, a2 waits behind a1 (copied to
	// the retry table with it, due after it).
	if n := h.run(); n != 3 {
		t.Fatalf("took %d events, want the three", n)
	}
	h.recv.ClearFaults()
	if err := h.recv.FailPath("/hooks/crm", emulator.PathFault{Status: 500, Times: 1}); err != nil {
		t.Fatal(err)
	}
	for range 5 {
		h.clock.Add(time.Minute)
		h.run()
	}
	ids := h.received()
	pos := map[string]int{}
	for i, id := range ids {
		pos[id] = i
	}
	if len(ids) != 3 || pos["evt_a1"] > pos["evt_a2"] {
		t.Fatalf("accepted %v: want all three, a1 before a2", ids)
	}
	// The receiver down was a failure without a status.
	for _, m := range h.messages("crm") {
		if m.State != heraldtype.WebhookSent {
			t.Fatalf("not sent: %+v", m)
		}
	}
}

// 410 Gone disables the endpoint at once; its messages are held, not
// dropped, and flow once it is enabled again.
func TestDispatcherDisablesOnGone(t *testing.T) {
	h := newHarness(t, nil)
	h.endpoint("crm")
	if err := h.recv.FailPath("/hooks/crm", emulator.PathFault{Status: 410, Times: 1}); err != nil {
		t.Fatal(err)
	}
	h.event("evt_1", "n1")
	h.run()
	e := h.endpointRow("crm")
	if e.Enabled || !strings.Contains(e.DisabledReason, "410") {
		t.Fatalf("after 410: %+v", e.WebhookEndpoint)
	}
	h.clock.Add(time.Hour)
	if h.run() != 0 {
		t.Fatal("a disabled endpoint's message was sent")
	}
	on := true
	if _, err := h.store.UpdateWebhookEndpoint(h.ctx, "crm", store.WebhookEndpointUpdate{Enabled: &on}, h.clock.Now()); err != nil {
		t.Fatal(err)
	}
	h.run()
	if ids := h.received(); len(ids) != 1 || ids[0] != "evt_1" {
		t.Fatalf("after re-enabling: %v", ids)
	}
}

// A redirect is a failure, never followed.
func TestDispatcherDoesNotFollowRedirects(t *testing.T) {
	h := newHarness(t, nil)
	h.endpoint("crm")
	if err := h.recv.FailPath("/hooks/crm", emulator.PathFault{Status: 302}); err != nil {
		t.Fatal(err)
	}
	h.event("evt_1", "n1")
	h.run()
	m := h.messages("crm")[0]
	if m.State != heraldtype.WebhookPending || !strings.Contains(m.LastError, "redirect") {
		t.Fatalf("after a redirect: %+v", m)
	}
	if n := len(h.recv.Messages()); n != 1 {
		t.Fatalf("the receiver saw %d requests, want 1 (no redirect followed)", n)
	}
}

// A message is dead once it has failed for retry_for; an endpoint failing
// for disable_after is disabled.
func TestDispatcherGivesUp(t *testing.T) {
	h := newHarness(t, func(c *webhook.Config) {
		c.RetryBase, c.RetryMaxDelay, c.RetryFor, c.DisableAfter = time.Minute, time.Hour, 3*time.Hour, 2*time.Hour
	})
	h.endpoint("crm")
	if err := h.recv.SetFaults(emulator.Faults{Down: true}); err != nil {
		t.Fatal(err)
	}
	h.event("evt_1", "n1")
	for range 20 {
		h.run()
		h.clock.Add(30 * time.Minute)
	}
	e := h.endpointRow("crm")
	if e.Enabled || !strings.Contains(e.DisabledReason, "2h0m0s") {
		t.Fatalf("after two hours of failures: %+v", e.WebhookEndpoint)
	}
	// Re-enabled, the message dies at the end of its window.
	on := true
	if _, err := h.store.UpdateWebhookEndpoint(h.ctx, "crm", store.WebhookEndpointUpdate{Enabled: &on}, h.clock.Now()); err != nil {
		t.Fatal(err)
	}
	h.run()
	ms := h.messages("crm")
	if ms[0].State != heraldtype.WebhookDead || ms[0].LastStatus != 0 || ms[0].LastError == "" {
		t.Fatalf("after the window: %+v", ms[0])
	}
}

// Without an allowed network the guard refuses the loopback receiver.
func TestDispatcherGoesThroughTheGuard(t *testing.T) {
	h := newHarness(t, func(c *webhook.Config) { c.Client = outbound.New(outbound.Config{}) })
	h.endpoint("crm")
	h.event("evt_1", "n1")
	h.run()
	m := h.messages("crm")[0]
	if m.State != heraldtype.WebhookPending || !strings.HasPrefix(m.LastError, "refused") {
		t.Fatalf("to loopback without an allow-list: %+v", m)
	}
	if n := len(h.recv.Messages()); n != 0 {
		t.Fatalf("the receiver saw %d requests", n)
	}
}

// During a rotation both secrets sign: a receiver holding either accepts.
func TestDispatcherSignsWithBothSecretsDuringRotation(t *testing.T) {
	h := newHarness(t, nil)
	h.endpoint("crm")
	const next = "whsec_C2FVsBQIhrscChlQIMV+b5sSYspob7oD"
	if _, err := h.store.RotateWebhookSecret(h.ctx, "crm", next, h.clock.Now().Add(time.Hour), h.clock.Now()); err != nil {
		t.Fatal(err)
	}
	h.event("evt_1", "n1")
	h.run()
	// The receiver holds only the old secret.
	if got := h.recv.Messages(); len(got) != 1 || !got[0].Verified || got[0].Status != http.StatusNoContent {
		t.Fatalf("received %+v", got)
	}
	// A receiver with only the new one accepts it too.
	recv2, err := emulator.New(emulator.Config{Secrets: []string{next}, Now: h.clock.Now})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := recv2.Start("127.0.0.1:0"); err != nil {
		t.Fatal(err)
	}
	defer recv2.Close()
	url := recv2.URL() + "/hooks/crm"
	if _, err := h.store.UpdateWebhookEndpoint(h.ctx, "crm", store.WebhookEndpointUpdate{URL: &url}, h.clock.Now()); err != nil {
		t.Fatal(err)
	}
	h.event("evt_2", "n2")
	h.run()
	if got := recv2.Messages(); len(got) != 1 || !got[0].Verified {
		t.Fatalf("the new secret's receiver got %+v", got)
	}
}

// hangingStore's claim blocks until its context ends, as a call on a
// connection cut mid-call does.
type hangingStore struct{ calls chan struct{} }

func (s hangingStore) ClaimWebhookMessages(ctx context.Context, _ store.WebhookClaim) ([]store.WebhookJob, error) {
	s.calls <- struct{}{}
	<-ctx.Done()
	return nil, ctx.Err()
}

func (hangingStore) FinishWebhookMessage(context.Context, store.WebhookFinish) (bool, bool, error) {
	return false, false, nil
}

func (hangingStore) FinishWebhooksSent(context.Context, []store.WebhookFinish) (int, error) {
	return 0, nil
}

func (hangingStore) CountWebhookMessagesPending(context.Context, int) (int, error) { return 0, nil }

func (hangingStore) ClaimWebhookStream(context.Context, store.WebhookStreamClaim) (*store.WebhookStream, error) {
	return nil, nil
}

func (hangingStore) AdvanceWebhookStream(context.Context, store.WebhookStreamAdvance) (bool, bool, error) {
	return false, false, nil
}

// A claim hung on a dead connection neither outlives Stop (it is
// cancelled) nor holds the loop past StoreTimeout: the partition e2e
// test found an instance whose stop waited 25 s on the dispatcher's claim.
func TestDispatcherStopCancelsAHungClaim(t *testing.T) {
	t.Parallel()
	st := hangingStore{calls: make(chan struct{}, 8)}
	d, err := webhook.New(webhook.Config{Store: st, Client: outbound.New(outbound.Config{Allow: loopback}), Owner: "test",
		PollInterval: time.Millisecond, StoreTimeout: 50 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	d.Start(t.Context())
	// The store timeout ends each hung claim: the loop claims again.
	for range 2 {
		select {
		case <-st.calls:
		case <-time.After(5 * time.Second):
			t.Fatal("the loop did not claim again after a hung claim's store timeout")
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	start := time.Now()
	if err := d.Stop(ctx); err != nil {
		t.Fatalf("Stop = %v after %v, want nil at once", err, time.Since(start))
	}
}

// failingSent is a store whose record of a sent batch fails, as a lost
// connection would: the retry table's batched outcome and the stream's
// advance.
type failingSent struct{ store.Store }

func (failingSent) FinishWebhooksSent(context.Context, []store.WebhookFinish) (int, error) {
	return 0, errors.New("connection reset")
}

func (failingSent) AdvanceWebhookStream(context.Context, store.WebhookStreamAdvance) (bool, bool, error) {
	return false, false, errors.New("connection reset")
}

// A stream's sent batch that fails to record leaves the cursor where it
// was and the stream leased: at the lease's end the events are claimed
// and sent again with the same ids — at least once, never lost (issue 35
// items 4 and 5).
func TestDispatcherResendsWhenTheSentBatchIsNotRecorded(t *testing.T) {
	h := newHarness(t, func(c *webhook.Config) { c.Store = failingSent{c.Store.(store.Store)} })
	h.endpoint("crm")
	h.event("evt_1", "n1")
	h.event("evt_2", "n2")
	if n := h.run(); n != 2 {
		t.Fatalf("claimed %d, want 2", n)
	}
	if ms := h.messages("crm"); ms[0].State != heraldtype.WebhookPending || ms[1].State != heraldtype.WebhookPending {
		t.Fatalf("after the failed record: %+v", ms)
	}
	if h.run() != 0 {
		t.Fatal("a leased stream was claimed again before its lease ended")
	}
	d, err := webhook.New(webhook.Config{Store: h.store, Client: outbound.New(outbound.Config{Allow: loopback}), Owner: "test",
		Now: h.clock.Now, Timeout: 2 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	h.clock.Add(time.Hour)
	if n, err := d.RunOnce(h.ctx); err != nil || n != 2 {
		t.Fatalf("after the lease: claimed %d, %v; want 2", n, err)
	}
	for _, m := range h.messages("crm") {
		if m.State != heraldtype.WebhookSent {
			t.Fatalf("after the resend: %+v", m)
		}
	}
	if got := h.received(); len(got) != 4 {
		t.Fatalf("received %v, want each of evt_1 and evt_2 twice", got)
	}
}
