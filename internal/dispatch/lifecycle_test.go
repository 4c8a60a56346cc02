package dispatch

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/heraldhq/herald/heraldtype"
	"github.com/heraldhq/herald/store"
)

// blocking is a sender whose sends wait for release (or their context) and
// that counts sends in flight.
type blocking struct {
	started chan string
	release chan struct{}
	mu      sync.Mutex
	cur     int
	max     int
	keys    map[string]int
}

func newBlocking() *blocking {
	return &blocking{started: make(chan string, 1000), release: make(chan struct{}), keys: make(map[string]int)}
}

func (b *blocking) Send(ctx context.Context, m *heraldtype.Message) (string, error) {
	b.mu.Lock()
	b.cur++
	b.max = max(b.max, b.cur)
	b.keys[m.Key]++
	b.mu.Unlock()
	defer func() {
		b.mu.Lock()
		b.cur--
		b.mu.Unlock()
	}()
	b.started <- m.Key
	select {
	case <-b.release:
		return "pm-" + m.Key, nil
	case <-ctx.Done():
		return "", ctx.Err()
	}
}

func (b *blocking) inFlight() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.cur
}

func startWorker(t *testing.T, h *harness) {
	t.Helper()
	if err := h.w.Start(context.Background()); err != nil {
		t.Fatalf("Start: %v", err)
	}
	t.Cleanup(func() { _ = h.w.Stop(context.Background()) })
}

func stopWorker(t *testing.T, h *harness) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := h.w.Stop(ctx); err != nil {
		t.Fatalf("Stop: %v", err)
	}
}

func TestLifecycleErrors(t *testing.T) {
	t.Parallel()
	h := newHarness(t, nil, nil)
	if err := h.w.Stop(context.Background()); err != nil {
		t.Fatalf("Stop before Start: %v", err)
	}
	if err := h.w.Start(context.Background()); err == nil {
		t.Fatal("Start after Stop succeeded")
	}

	h = newHarness(t, nil, nil)
	startWorker(t, h)
	if err := h.w.Start(context.Background()); err == nil {
		t.Error("second Start succeeded")
	}
	if _, err := h.w.RunOnce(context.Background()); err == nil {
		t.Error("RunOnce while started succeeded")
	}
	var wg sync.WaitGroup
	for range 3 {
		wg.Go(func() { _ = h.w.Stop(context.Background()) })
	}
	wg.Wait()
	stopWorker(t, h) // idempotent
}

// Notify wakes an idle claim loop at once; PollInterval is an hour here.
func TestNotifyWakesLoop(t *testing.T) {
	t.Parallel()
	h := newHarness(t, map[string]Sender{"fcm": okSender()}, func(c *Config) { c.PollInterval = time.Hour })
	startWorker(t, h)
	eventually(t, "the first claim", func() bool {
		h.store.mu.Lock()
		defer h.store.mu.Unlock()
		return h.store.claimCalls > 0
	})
	id := h.add(fakeDelivery{})
	h.w.Notify()
	eventually(t, "the notified delivery to be sent", func() bool { return h.store.get(id).State == heraldtype.StateSent })
	stopWorker(t, h)
}

// An idle loop wakes at the next run_at when it is sooner than the poll.
func TestIdleWakesAtNextRunAt(t *testing.T) {
	t.Parallel()
	h := newHarness(t, map[string]Sender{"fcm": okSender()}, func(c *Config) {
		c.PollInterval = time.Hour
		c.Now = time.Now
	})
	id := h.store.add(fakeDelivery{runAt: time.Now().Add(50 * time.Millisecond)})
	startWorker(t, h)
	eventually(t, "the scheduled delivery to be sent", func() bool { return h.store.get(id).State == heraldtype.StateSent })
	stopWorker(t, h)
}

// nextClaimStore is a store.NextClaimer: its claims report the next run_at,
// and it counts the NextRunAt calls the worker then no longer needs.
type nextClaimStore struct {
	*fakeStore
	nextRunAtCalls atomic.Int64

	mu     sync.Mutex
	claims []claimCall
}

// claimCall is one claim the worker made: with the next run_at or not,
// and whether it came back full.
type claimCall struct {
	withNext, full bool
}

func (s *nextClaimStore) log(withNext bool, n, limit int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.claims = append(s.claims, claimCall{withNext: withNext, full: n == limit})
}

// Claim is the plain claim, without the next run_at.
func (s *nextClaimStore) Claim(ctx context.Context, p store.ClaimParams) ([]heraldtype.Job, error) {
	jobs, err := s.fakeStore.Claim(ctx, p)
	if err == nil {
		s.log(false, len(jobs), p.Limit)
	}
	return jobs, err
}

func (s *nextClaimStore) ClaimNext(ctx context.Context, p store.ClaimParams) ([]heraldtype.Job, time.Time, bool, error) {
	jobs, err := s.fakeStore.Claim(ctx, p)
	if err != nil {
		return nil, time.Time{}, false, err
	}
	s.log(true, len(jobs), p.Limit)
	next, ok, err := s.fakeStore.NextRunAt(ctx)
	return jobs, next, ok, err
}

func (s *nextClaimStore) NextRunAt(ctx context.Context) (time.Time, bool, error) {
	s.nextRunAtCalls.Add(1)
	return s.fakeStore.NextRunAt(ctx)
}

// With a store.NextClaimer the idle loop wakes at the run_at its claim
// reported, without a NextRunAt round trip of its own.
func TestIdleWakesAtRunAtReportedByClaim(t *testing.T) {
	t.Parallel()
	ns := &nextClaimStore{fakeStore: newFakeStore()}
	h := newHarness(t, map[string]Sender{"fcm": okSender()}, func(c *Config) {
		c.Store = ns
		c.PollInterval = time.Hour
		c.Now = time.Now
	})
	h.store = ns.fakeStore
	id := h.store.add(fakeDelivery{runAt: time.Now().Add(50 * time.Millisecond)})
	startWorker(t, h)
	eventually(t, "the scheduled delivery to be sent", func() bool { return h.store.get(id).State == heraldtype.StateSent })
	stopWorker(t, h)
	if n := ns.nextRunAtCalls.Load(); n != 0 {
		t.Fatalf("NextRunAt called %d times; the claims reported the next run_at", n)
	}
}

// After a full batch the worker claims without asking for the next
// run_at (its next claim is probably full too, and PostgreSQL pays for
// that question); after a short one it asks, and when a plain claim
// comes back short it reads NextRunAt before it sleeps.
func TestNextRunAtOnlyAfterShortClaims(t *testing.T) {
	t.Parallel()
	ns := &nextClaimStore{fakeStore: newFakeStore()}
	h := newHarness(t, map[string]Sender{"fcm": okSender()}, func(c *Config) {
		c.Store = ns
		c.BatchSize = 2
		c.Concurrency = 8
		c.PollInterval = time.Hour
		c.Now = time.Now
	})
	h.store = ns.fakeStore
	var ids []int64
	for range 5 {
		ids = append(ids, h.store.add(fakeDelivery{runAt: time.Now()}))
	}
	ids = append(ids, h.store.add(fakeDelivery{runAt: time.Now().Add(100 * time.Millisecond)}))
	startWorker(t, h)
	eventually(t, "every delivery to be sent", func() bool {
		for _, id := range ids {
			if h.store.get(id).State != heraldtype.StateSent {
				return false
			}
		}
		return true
	})
	stopWorker(t, h)
	ns.mu.Lock()
	defer ns.mu.Unlock()
	prevFull, plainShort := false, 0
	for i, c := range ns.claims {
		if c.withNext == prevFull {
			t.Fatalf("claim %d (after a %s one) asked for the next run_at: %v; claims %+v",
				i, map[bool]string{true: "full", false: "short"}[prevFull], c.withNext, ns.claims)
		}
		if !c.withNext && !c.full {
			plainShort++
		}
		prevFull = c.full
	}
	if !ns.claims[0].full || plainShort == 0 {
		t.Fatalf("claims %+v: want a full first claim and a short plain one", ns.claims)
	}
	if n := ns.nextRunAtCalls.Load(); n != int64(plainShort) {
		t.Fatalf("NextRunAt called %d times, want once after each of the %d short plain claims", n, plainShort)
	}
}

// Stop records outcomes still buffered; the flush interval is an hour here.
func TestStopFlushesPendingOutcomes(t *testing.T) {
	t.Parallel()
	called := make(chan struct{}, 10)
	h := newHarness(t, map[string]Sender{"fcm": senderFunc(func(context.Context, *heraldtype.Message) (string, error) {
		called <- struct{}{}
		return "pm", nil
	})}, func(c *Config) { c.FlushInterval = time.Hour })
	id := h.add(fakeDelivery{})
	startWorker(t, h)
	recv(t, "the send", called)
	stopWorker(t, h)
	if d := h.store.get(id); d.State != heraldtype.StateSent {
		t.Fatalf("delivery = %s after Stop, want sent", d.State)
	}
}

// The flusher retries a failed Complete and loses nothing.
func TestFlusherRetriesFailedFlush(t *testing.T) {
	t.Parallel()
	h := newHarness(t, map[string]Sender{"fcm": okSender()}, nil)
	h.store.failComplete = 2
	ids := []int64{h.add(fakeDelivery{}), h.add(fakeDelivery{})}
	startWorker(t, h)
	eventually(t, "both deliveries to be sent", func() bool {
		return h.store.get(ids[0]).State == heraldtype.StateSent && h.store.get(ids[1]).State == heraldtype.StateSent
	})
	stopWorker(t, h)
}

// A store call that hangs (a database that stopped answering without
// closing the connection) times out after StoreTimeout and is retried: a
// hung claim and a hung outcome flush do not hold the worker forever.
func TestHungStoreCallsTimeOut(t *testing.T) {
	t.Parallel()
	h := newHarness(t, map[string]Sender{"fcm": okSender()}, func(c *Config) { c.StoreTimeout = 50 * time.Millisecond })
	h.store.hangClaim, h.store.hangComplete = 1, 1
	ids := []int64{h.add(fakeDelivery{}), h.add(fakeDelivery{})}
	startWorker(t, h)
	eventually(t, "both deliveries to be sent after the hung calls timed out", func() bool {
		return h.store.get(ids[0]).State == heraldtype.StateSent && h.store.get(ids[1]).State == heraldtype.StateSent
	})
	stopWorker(t, h)
	h.store.mu.Lock()
	defer h.store.mu.Unlock()
	if h.store.hangClaim != 0 || h.store.hangComplete != 0 {
		t.Fatalf("the hung calls were not made: claim %d, complete %d left", h.store.hangClaim, h.store.hangComplete)
	}
}

// StoreTimeout defaults to the lease: a store call longer than a lease is
// of no use.
func TestStoreTimeoutDefault(t *testing.T) {
	c, err := (Config{Store: newFakeStore(), LeaseDuration: time.Minute}).withDefaults()
	if err != nil {
		t.Fatal(err)
	}
	if c.StoreTimeout != time.Minute {
		t.Fatalf("StoreTimeout = %s, want the lease, 1m", c.StoreTimeout)
	}
	if _, err := (Config{Store: newFakeStore(), StoreTimeout: -time.Second}).withDefaults(); err == nil {
		t.Fatal("a negative StoreTimeout was accepted")
	}
}

// The heartbeat extends the lease of a slow send past half-life, so the
// reaper leaves it alone and its outcome is recorded.
func TestHeartbeatExtendsLeaseOfSlowSend(t *testing.T) {
	t.Parallel()
	b := newBlocking()
	h := newHarness(t, map[string]Sender{"fcm": b}, func(c *Config) {
		c.LeaseDuration, c.SendTimeout = time.Hour, time.Minute // real beats every 15 min never fire
	})
	id := h.add(fakeDelivery{})
	startWorker(t, h)
	recv(t, "the send", b.started)

	ctx := context.Background()
	h.clock.Advance(20 * time.Minute)
	h.w.heartbeat(ctx) // before half-life: nothing to do
	if d := h.store.get(id); !d.LeaseUntil.Equal(start().Add(time.Hour)) {
		t.Fatalf("lease moved before half-life: %s", d.LeaseUntil)
	}
	now := h.clock.Advance(15 * time.Minute)
	h.w.heartbeat(ctx)
	if d := h.store.get(id); !d.LeaseUntil.Equal(now.Add(time.Hour)) {
		t.Fatalf("lease until %s, want extended to %s", d.LeaseUntil, now.Add(time.Hour))
	}
	// Past the original lease, the reaper does not take the delivery.
	if r, _ := h.store.ReapExpiredLeases(ctx, start().Add(time.Hour+time.Minute)); r.Requeued != 0 {
		t.Fatalf("reaper requeued %d deliveries of a live send", r.Requeued)
	}
	close(b.release)
	stopWorker(t, h)
	if d := h.store.get(id); d.State != heraldtype.StateSent {
		t.Fatalf("delivery = %s, want sent", d.State)
	}
}

// A lease that could not be extended is lost: logged, and the late outcome
// is ignored by the store.
func TestHeartbeatDetectsLostLease(t *testing.T) {
	t.Parallel()
	b := newBlocking()
	h := newHarness(t, map[string]Sender{"fcm": b}, func(c *Config) {
		c.LeaseDuration, c.SendTimeout = time.Hour, time.Minute
	})
	id := h.add(fakeDelivery{})
	startWorker(t, h)
	recv(t, "the send", b.started)

	ctx := context.Background()
	now := h.clock.Advance(2 * time.Hour)
	if _, err := h.store.ReapExpiredLeases(ctx, now); err != nil {
		t.Fatal(err)
	}
	if _, err := h.store.Claim(ctx, storeClaim("worker-b", now, 1)); err != nil {
		t.Fatal(err)
	}
	h.w.heartbeat(ctx)
	if _, lost := h.w.flights.lease(id); !lost {
		t.Error("the heartbeat did not mark the lease lost")
	}
	close(b.release)
	stopWorker(t, h)
	if d := h.store.get(id); d.State != heraldtype.StateLeased || d.LeaseOwner != "worker-b" {
		t.Fatalf("delivery = %s owner %q, want still worker-b's", d.State, d.LeaseOwner)
	}
}

// S2.7: never more than Concurrency sends in flight, and claims never take
// more than the free send slots.
func TestConcurrencyBound(t *testing.T) {
	t.Parallel()
	const limit, total = 4, 40
	b := newBlocking()
	h := newHarness(t, map[string]Sender{"fcm": b}, func(c *Config) { c.Concurrency = limit })
	for range total {
		h.add(fakeDelivery{})
	}
	startWorker(t, h)
	eventually(t, "the send slots to fill", func() bool { return b.inFlight() == limit })
	if got := h.store.count(heraldtype.StateLeased); got != limit {
		t.Errorf("%d deliveries leased with %d send slots", got, limit)
	}
	close(b.release)
	eventually(t, "every delivery to be sent", func() bool { return h.store.count(heraldtype.StateSent) == total })
	stopWorker(t, h)
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.max > limit {
		t.Errorf("%d sends in flight at once, limit %d", b.max, limit)
	}
}

// A worker aborted mid-batch (its context cancelled while sends hang) loses
// nothing: once the leases are reaped (by the leader, internal/maintenance),
// another worker sends every at_least_once delivery, and at_most_once ones
// in flight become unknown instead of being resent (S1.3).
func TestAbortedWorkerLosesNothing(t *testing.T) {
	t.Parallel()
	const inFlight, total = 8, 20
	b := newBlocking()
	h := newHarness(t, map[string]Sender{"fcm": b}, func(c *Config) { c.Concurrency = inFlight })
	atMostOnce := map[int64]bool{}
	for i := range total {
		f := fakeDelivery{}
		if i < 2 {
			f.guarantee = heraldtype.AtMostOnce
		}
		if id := h.add(f); i < 2 {
			atMostOnce[id] = true
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	if err := h.w.Start(ctx); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the send slots to fill", func() bool { return b.inFlight() == inFlight })
	cancel()
	stopWorker(t, h) // returns once the aborted worker is down
	if got := h.store.count(heraldtype.StateLeased); got != inFlight {
		t.Fatalf("%d deliveries leased after the abort, want %d", got, inFlight)
	}

	r, err := h.store.ReapExpiredLeases(context.Background(), h.clock.Advance(DefaultLeaseDuration+time.Second))
	if err != nil || r != (store.ReapResult{Requeued: inFlight - 2, Unknown: 2}) {
		t.Fatalf("reap = %+v, %v; want %d requeued, 2 unknown", r, err, inFlight-2)
	}
	var mu sync.Mutex
	resent := map[string]int{}
	w2, err := New(Config{Store: h.store, Owner: "worker-b", Now: h.clock.Now, Logger: h.w.log, Metrics: h.metrics,
		Senders: map[string]Sender{"fcm": senderFunc(func(_ context.Context, m *heraldtype.Message) (string, error) {
			mu.Lock()
			defer mu.Unlock()
			resent[m.Key]++
			return "pm", nil
		})}})
	if err != nil {
		t.Fatal(err)
	}
	for {
		n, err := w2.RunOnce(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if n == 0 {
			break
		}
	}
	for id := range int64(total) {
		d := h.store.get(id + 1)
		switch key := heraldtype.DeliveryKey(d.NotificationID, d.ID); {
		case atMostOnce[d.ID]:
			if d.State != heraldtype.StateUnknown || resent[key] != 0 {
				t.Errorf("at_most_once delivery %d = %s, resent %d times; want unknown, never resent", d.ID, d.State, resent[key])
			}
		case d.State != heraldtype.StateSent:
			t.Errorf("delivery %d = %s, want sent", d.ID, d.State)
		}
	}
}

func TestQueueDepthGauge(t *testing.T) {
	t.Parallel()
	h := newHarness(t, map[string]Sender{"fcm": okSender()}, nil)
	h.add(fakeDelivery{})
	h.add(fakeDelivery{})
	h.w.refreshQueueDepth(context.Background())
	if got := gauge(h.metrics.QueueDepth.WithLabelValues("pending")); got != 2 {
		t.Errorf("pending depth = %v, want 2", got)
	}
	h.runOnce(2)
	h.w.refreshQueueDepth(context.Background())
	if p := gauge(h.metrics.QueueDepth.WithLabelValues("pending")); p != 0 {
		t.Errorf("depth pending %v, want 0", p)
	}
	// Final states are counters, not queue depth (store.QueueDepthStates).
	series := make(chan prometheus.Metric, 16)
	h.metrics.QueueDepth.Collect(series)
	close(series)
	if n := len(series); n != len(store.QueueDepthStates) {
		t.Errorf("queue depth series = %d, want %d", n, len(store.QueueDepthStates))
	}
}

// When Stop's context ends before a hanging send does, the send is
// cancelled and no outcome is recorded: the lease reaper decides.
func TestStopDeadlineCancelsHangingSends(t *testing.T) {
	t.Parallel()
	b := newBlocking()
	h := newHarness(t, map[string]Sender{"fcm": b}, nil)
	id := h.add(fakeDelivery{})
	startWorker(t, h)
	recv(t, "the send", b.started)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	if err := h.w.Stop(ctx); err != nil {
		t.Fatalf("Stop: %v", err)
	}
	if d := h.store.get(id); d.State != heraldtype.StateLeased || len(d.Attempts) != 0 {
		t.Fatalf("delivery = %s with %d attempt rows, want leased and untouched", d.State, len(d.Attempts))
	}
}
