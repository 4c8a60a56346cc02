package dispatch

import (
	"context"
	"math"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/heraldhq/herald/heraldtype"
)

func TestRateEstimatorConverges(t *testing.T) {
	t.Parallel()
	e := rateEstimator{tau: rateWindow}
	now := start()
	for range 2000 { // 100/s for 20 s
		now = now.Add(10 * time.Millisecond)
		e.add(now)
	}
	if got := e.at(now); math.Abs(got-100) > 5 {
		t.Errorf("rate = %.1f/s, want ≈100", got)
	}
	if got := e.at(now.Add(time.Minute)); got > 1 {
		t.Errorf("rate a minute later = %.2f/s, want ≈0", got)
	}
}

func TestThrottleAIMD(t *testing.T) {
	t.Parallel()
	th := newThrottle()
	now := start()
	// Unlimited at first: any number of sends go at once.
	for range 1000 {
		if d, _ := th.reserve(now); d != 0 {
			t.Fatalf("unlimited throttle made a send wait %s", d)
		}
	}
	for range 2000 { // observed: 200/s
		now = now.Add(5 * time.Millisecond)
		th.observe(now)
	}
	// A burst of quota answers slows the sender once they are a tenth of
	// the answers (throttleMinShare); one alone does not.
	burst := func() int {
		for n := 1; n <= 1000; n++ {
			if th.quota(now) {
				return n
			}
		}
		return 0
	}
	if n := burst(); n < 2 {
		t.Fatalf("quota answer %d of a burst slowed the sender, want a few (a share of 10 %%)", n)
	}
	if got := th.currentLimit(now); math.Abs(got-100) > 5 {
		t.Fatalf("limit = %.1f/s, want half the observed 200/s", got)
	}
	// The quota answers of sends already in flight are one signal.
	if th.quota(now.Add(100 * time.Millisecond)) {
		t.Error("a second quota answer within the hold cut the rate again")
	}
	// Sends are now spaced: past the 10-token burst each waits 1/limit more.
	var last time.Duration
	for range 30 {
		last, _ = th.reserve(now)
	}
	if last < 150*time.Millisecond || last > 250*time.Millisecond {
		t.Errorf("30th send at ≈100/s waits %s, want ≈200ms", last)
	}
	// A later quota answer at least halves the limit again (the base is
	// the lower of the limit and the observed rate), down to the floor.
	now = now.Add(2 * time.Second)
	burst()
	if got := th.currentLimit(now); got > 50 || got < throttleFloor {
		t.Errorf("limit after a second cut = %.1f/s, want in [floor, 50]", got)
	}
	for range 20 {
		now = now.Add(2 * time.Second)
		overQuota(th, now)
	}
	if got := th.currentLimit(now); got != throttleFloor {
		t.Errorf("limit = %v, want the floor %v", got, throttleFloor)
	}
	// Quiet periods double it until it is back at the throttled peak,
	// where it lifts.
	prev := th.currentLimit(now)
	for step := 1; ; step++ {
		now = now.Add(throttleQuiet)
		got := th.currentLimit(now)
		if got == 0 {
			break
		}
		if got != prev*throttleRecover {
			t.Fatalf("recovery step %d: %v → %v, want ×%v", step, prev, got, throttleRecover)
		}
		prev = got
		if step > 20 {
			t.Fatal("the limit never lifted")
		}
	}
	if d, _ := th.reserve(now); d != 0 {
		t.Errorf("lifted throttle made a send wait %s", d)
	}
}

func TestThrottleFloorWithoutTraffic(t *testing.T) {
	t.Parallel()
	th := newThrottle()
	now := start()
	overQuota(th, now)
	if got := th.currentLimit(now); got != throttleFloor {
		t.Fatalf("limit = %v, want the floor", got)
	}
	if d, _ := th.reserve(now); d != 0 {
		t.Errorf("first send waits %s, want the burst token", d)
	}
	d, cancel := th.reserve(now)
	if d != time.Second {
		t.Errorf("second send waits %s, want 1s", d)
	}
	cancel()
	if got := th.backlog(now); got != time.Second {
		t.Errorf("backlog after cancel = %s, want 1s", got)
	}
}

// A send that would wait on the throttle past its lease safety margin is
// released, due when the throttle would let it go; claims skip a provider
// that backlogged.
func TestThrottledSendReleasedWhenLeaseTooShort(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	var waits []time.Duration
	h := newHarness(t, map[string]Sender{"fcm": okSender()}, func(c *Config) {
		// A send needs 1.5 s of lease left: its timeout and the time to
		// record its outcome.
		c.LeaseDuration, c.SendTimeout, c.OutcomeMargin = 2500*time.Millisecond, time.Second, 500*time.Millisecond
	})
	h.w.sleep = func(_ context.Context, d time.Duration) bool {
		mu.Lock()
		defer mu.Unlock()
		waits = append(waits, d)
		return true
	}
	now := h.clock.Now()
	overQuota(h.w.throttles["fcm"], now) // 1/s, burst 1
	ids := []int64{h.add(fakeDelivery{}), h.add(fakeDelivery{}), h.add(fakeDelivery{})}
	h.runOnce(3)

	var sent, released int
	for _, id := range ids {
		switch d := h.store.get(id); {
		case d.State == heraldtype.StateSent:
			sent++
		case d.State == heraldtype.StatePending && d.Attempt == 0 && len(d.Attempts) == 0:
			released++
			if got := d.RunAt.Sub(now); got != 2*time.Second {
				t.Errorf("released delivery due in %s, want 2s (when the throttle lets it go)", got)
			}
		default:
			t.Errorf("delivery %d = %s attempt %d", id, d.State, d.Attempt)
		}
	}
	if sent != 2 || released != 1 {
		t.Errorf("sent %d released %d, want 2 and 1", sent, released)
	}
	if !slices.Equal(waits, []time.Duration{time.Second}) {
		t.Errorf("throttle waits = %v, want [1s]", waits)
	}

	// Reserve past the margin: the provider is excluded from claims.
	for range 3 {
		h.w.throttles["fcm"].reserve(now)
	}
	if got := h.w.throttledProviders(now); !slices.Equal(got, []string{"fcm"}) {
		t.Errorf("excluded providers = %v, want [fcm]", got)
	}
}

// A graceful Stop hands back a delivery waiting on a throttle instead of
// waiting with it.
func TestStopReleasesThrottleWaits(t *testing.T) {
	t.Parallel()
	waiting := make(chan struct{}, 1)
	h := newHarness(t, map[string]Sender{"fcm": okSender()}, nil)
	h.w.sleep = func(ctx context.Context, _ time.Duration) bool {
		waiting <- struct{}{}
		<-ctx.Done()
		return false
	}
	now := h.clock.Now()
	overQuota(h.w.throttles["fcm"], now) // 1/s, burst 1
	a, b := h.add(fakeDelivery{}), h.add(fakeDelivery{})
	startWorker(t, h)
	recv(t, "a throttle wait", waiting)
	stopWorker(t, h)
	var sent, released int
	for _, id := range []int64{a, b} {
		switch d := h.store.get(id); {
		case d.State == heraldtype.StateSent:
			sent++
		case d.State == heraldtype.StatePending && d.Attempt == 0 && d.RunAt.Equal(now.Add(time.Second)):
			released++
		default:
			t.Errorf("delivery %d = %s attempt %d run_at %s", id, d.State, d.Attempt, d.RunAt)
		}
	}
	if sent != 1 || released != 1 {
		t.Errorf("sent %d released %d, want 1 and 1", sent, released)
	}
}

// TestThrottleIgnoresSporadicQuota: a steady 5 % of QUOTA_EXCEEDED
// (per-device limits) never slows the sender; 30 % does.
func TestThrottleIgnoresSporadicQuota(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		every   int // one quota answer per this many answers
		limited bool
	}{{20, false}, {3, true}} {
		th := newThrottle()
		now := start()
		for i := range 60_000 { // 60 s at 1000 answers/s
			now = now.Add(time.Millisecond)
			th.observe(now)
			if i%c.every == 0 {
				th.quota(now)
			}
		}
		if limited := th.currentLimit(now) > 0; limited != c.limited {
			t.Errorf("one quota answer in %d: limited = %v (limit %.1f/s), want %v", c.every, limited, th.currentLimit(now), c.limited)
		}
	}
}

// overQuota records enough quota answers at one instant to slow the sender
// (throttleMinQuotas; one signal thanks to throttleHold).
func overQuota(th *throttle, now time.Time) bool {
	cut := false
	for range throttleMinQuotas {
		cut = th.quota(now) || cut
	}
	return cut
}

// TestThrottleNeedsSeveralQuotaAnswers: a freshly started sender whose
// first answers include one 429 is not cut to the floor (it would recover
// only one doubling per throttleQuiet).
func TestThrottleNeedsSeveralQuotaAnswers(t *testing.T) {
	t.Parallel()
	th := newThrottle()
	now := start()
	th.observe(now)
	th.observe(now)
	if th.quota(now) || th.currentLimit(now) != 0 {
		t.Fatal("one early quota answer slowed a fresh sender")
	}
	if !overQuota(th, now) {
		t.Fatal("a burst of quota answers did not slow the sender")
	}
}

// answers feeds th one answer every 1/rate for d, each a quota answer with
// probability share (a seeded generator), and returns the time after and
// when the first cut happened (zero if none).
func answers(th *throttle, r *rand.Rand, now time.Time, rate int, share float64, d time.Duration) (time.Time, time.Time) {
	var cut time.Time
	gap := time.Second / time.Duration(rate)
	for end := now.Add(d); now.Before(end); {
		now = now.Add(gap)
		th.observe(now)
		if r.Float64() < share && th.quota(now) && cut.IsZero() {
			cut = now
		}
	}
	return now, cut
}

// TestThrottleIgnoresRandomSporadicQuota: a random 5 % of quota answers
// (per-device limits) never slows the sender, at low rates too, where a
// window holds few answers and a tenth of them are quota answers by
// chance. Ten senders, 30,000 answers each: the share gate alone (before
// throttleSignificance) slowed most of the 25/s ones, and some at 100
// and 1,000/s.
func TestThrottleIgnoresRandomSporadicQuota(t *testing.T) {
	t.Parallel()
	const n = 30_000
	for _, rate := range []int{10, 25, 100, 1000} {
		cuts := 0
		for seed := range 10 {
			th := newThrottle()
			d := n * time.Second / time.Duration(rate)
			if _, cut := answers(th, rand.New(rand.NewPCG(uint64(seed), 6)), start(), rate, 0.05, d); !cut.IsZero() {
				cuts++
			}
		}
		if cuts != 0 {
			t.Errorf("%d answers/s with 5 %% quota answers: %d of 10 senders slowed down", rate, cuts)
		}
	}
}

// TestThrottleCatchesOverQuota: a project over its quota (a third, or all,
// of its answers quota answers) slows down within seconds at any rate with
// throttleMinQuotas quota answers in a window.
func TestThrottleCatchesOverQuota(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		rate  int
		share float64
	}{{25, 0.33}, {100, 0.33}, {1000, 0.33}, {5, 1}, {25, 1}, {1000, 1}} {
		th := newThrottle()
		begin := start()
		if _, cut := answers(th, rand.New(rand.NewPCG(1, 2)), begin, c.rate, c.share, time.Minute); cut.IsZero() || cut.Sub(begin) > 5*time.Second {
			t.Errorf("%d answers/s, %.0f %% quota answers: first cut after %v, want within 5 s", c.rate, c.share*100, cut.Sub(begin))
		}
	}
}

// TestThrottleFirstCutUsesTheRealRate: a sender that starts at 200
// answers/s and is over its quota 0.3 s later is slowed to half of 200/s,
// not to half of what an estimator started from zero reads by then
// (≈ 28/s: `e2e/TestFaultRunShort` saw restarted senders limited to 11/s).
func TestThrottleFirstCutUsesTheRealRate(t *testing.T) {
	t.Parallel()
	th := newThrottle()
	now := start()
	for range 60 { // 0.3 s at 200/s
		now = now.Add(5 * time.Millisecond)
		th.observe(now)
	}
	cut := false
	for range 100 { // the answers of sends in flight: a third of them and more
		if cut = th.quota(now); cut {
			break
		}
	}
	if !cut {
		t.Fatal("a burst of quota answers did not slow the sender")
	}
	if got := th.currentLimit(now); got < 80 || got > 120 {
		t.Fatalf("limit = %.1f/s, want ≈ 100 (half the real 200/s)", got)
	}
}
