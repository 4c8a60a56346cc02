package dispatch

import (
	"math"
	"sync"
	"time"

	"golang.org/x/time/rate"

	"github.com/heraldhq/herald/heraldtype"
)

// Throttle tuning. A provider answering "over quota" (FCM QUOTA_EXCEEDED,
// APNs TooManyRequests, HTTP 429) wants the whole sender to slow down, not
// just the one delivery to back off (PROTOCOLS.md). The limiter is AIMD-like:
// unlimited at first, halved to half the observed send rate on a quota
// answer, and doubled again after each quiet period until it is back to the
// rate that was first throttled, where it becomes unlimited again.
const (
	// throttleFloor is the lowest rate, in sends per second, a provider is
	// slowed to, so a throttled provider still makes progress.
	throttleFloor = 1.0
	// throttleHold merges the quota answers of sends that were already in
	// flight when the first one arrived into one decrease; without it 64
	// concurrent 429s would divide the rate by 2^64.
	throttleHold = time.Second
	// throttleQuiet is how long without a quota answer before the limit is
	// raised one step.
	throttleQuiet = 30 * time.Second
	// throttleRecover is the factor of one recovery step.
	throttleRecover = 2.0
	// rateWindow is the time constant of the send rate estimate.
	rateWindow = 2 * time.Second
	// throttleMinShare is the share of recent answers that must be quota
	// answers before the whole sender slows down. A project over its quota
	// sees a share that grows with the excess; a few percent of
	// QUOTA_EXCEEDED are per-device or per-topic rate limits (FCM uses the
	// same code), which slowing every device cannot cure: those deliveries
	// only back off by their own Retry-After. Without this gate a steady
	// 5 % of such answers halved the rate every second down to the 1/s
	// floor, where it stayed (measured by `herald faultrun`).
	throttleMinShare = 0.10
	// throttleMinQuotas is how many quota answers (within about one
	// rateWindow) it takes before the share counts: right after a start the
	// estimates rest on a handful of answers, and one early 429 among three
	// answers would otherwise cut a fresh sender to the floor, from which
	// it recovers only one doubling per throttleQuiet.
	throttleMinQuotas = 5
	// throttleSignificance is how many standard deviations above
	// throttleMinShare the quota answers must be before the sender slows
	// down (a one-sided binomial test). With few answers in the window a
	// background of a few percent reaches a tenth by chance: at 25
	// answers/s, six quota answers of 50 at 5 % happen in about one
	// window in twelve, and each such cut slowed the whole sender for a
	// throttleQuiet (`e2e/TestFaultRunShort` timed out on it after
	// restarts). Two deviations still let a random 5 % through now and
	// then (a few times in 100 simulated minutes); three never did at
	// 10–1,000 answers/s, and a project a third of whose sends fail is
	// still slowed within seconds (TestThrottleCatchesOverQuota).
	throttleSignificance = 3.0
	// maxThrottleScopes bounds the scoped throttles (ThrottleScoper) a
	// worker tracks. A scope is a push service chosen by whoever
	// registered the device, so a hostile user can name any number of
	// them; the real ones are a handful (FCM, Mozilla, Apple, Microsoft).
	// When full, an unthrottled scope is evicted first, else any: an
	// evicted scope starts unlimited again and must be measured over
	// quota again (throttleMinQuotas) before it is slowed. About 500 bytes
	// each, so at most about 0.5 MB; not an operator setting.
	maxThrottleScopes = 1024
)

// throttleKey names a scoped throttle: a provider and a ThrottleScope.
type throttleKey struct{ provider, scope string }

// scopedThrottles are a worker's throttles of ThrottleScoper senders, made
// on first use and bounded by maxThrottleScopes.
type scopedThrottles struct {
	mu sync.Mutex
	m  map[throttleKey]*throttle
}

// get returns the throttle of k, making it (and evicting another if the
// map is full) on first use.
func (s *scopedThrottles) get(k throttleKey) *throttle {
	s.mu.Lock()
	defer s.mu.Unlock()
	if th, ok := s.m[k]; ok {
		return th
	}
	if len(s.m) >= maxThrottleScopes {
		s.evict()
	}
	th := newThrottle()
	th.scope = k.scope
	s.m[k] = th
	return th
}

// evict removes one unthrottled scope, or any scope if all are throttled.
func (s *scopedThrottles) evict() {
	var last throttleKey
	for k, th := range s.m {
		last = k
		th.mu.Lock()
		free := th.lim == nil
		th.mu.Unlock()
		if free {
			delete(s.m, k)
			return
		}
	}
	delete(s.m, last)
}

// throttleFor is the throttle a send of job through sender goes through:
// its scope's if sender is a ThrottleScoper naming one, else the
// provider's.
func (w *Worker) throttleFor(sender Sender, job *heraldtype.Job) *throttle {
	if sc, ok := sender.(ThrottleScoper); ok {
		if scope := sc.ThrottleScope(job); scope != "" {
			return w.scoped.get(throttleKey{job.Delivery.Provider, scope})
		}
	}
	return w.throttles[job.Delivery.Provider]
}

// throttle limits the send rate of one provider, or of one scope of a
// ThrottleScoper provider (a Web Push host). All its methods take the
// time from the caller (the worker's injected clock), so its behaviour is
// tested without waiting.
type throttle struct {
	// scope is the ThrottleScope the throttle is for, "" for a provider's.
	scope string
	mu    sync.Mutex
	// lim is nil while the provider is unlimited.
	lim *rate.Limiter
	// limit is lim's rate in sends per second (0 while unlimited).
	limit float64
	// peak is the observed rate when the provider was first throttled;
	// recovering back to it lifts the limit.
	peak float64
	// lastCut is the last decrease; lastQuota the last quota answer or
	// recovery step, from which the quiet period is measured.
	lastCut   time.Time
	lastQuota time.Time
	// sends estimates the rate of all answers, quotas that of quota
	// answers, over the same window.
	sends  rateEstimator
	quotas rateEstimator
	// first is when the first answer was observed: the estimates start
	// from zero there and read low for a few rateWindows.
	first time.Time
}

func newThrottle() *throttle {
	return &throttle{sends: rateEstimator{tau: rateWindow}, quotas: rateEstimator{tau: rateWindow}}
}

// observe records that a send was answered, for the rate estimate.
func (t *throttle) observe(now time.Time) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.first.IsZero() {
		t.first = now
	}
	t.sends.add(now)
}

// overQuota reports whether the quota answers of the last rateWindow or so
// are significantly more than throttleMinShare of all answers: a binomial
// test on the estimators' effective counts (rate × window).
func (t *throttle) overQuota(now time.Time) bool {
	w := rateWindow.Seconds()
	answers, quotas := t.sends.at(now)*w, t.quotas.at(now)*w
	if quotas < throttleMinQuotas {
		return false
	}
	expected := throttleMinShare * answers
	return quotas >= expected+throttleSignificance*math.Sqrt(expected*(1-throttleMinShare))
}

// observedRate is the send rate estimate, corrected for the estimator's
// start from zero: after running for T it reads λ(1 − e^(−T/τ)) of a
// steady rate λ. Uncorrected, a restarted sender's first cut was based on
// a fraction of its real rate (a tenth, 0.3 s after the start: limited to
// 11 sends/s in `e2e/TestFaultRunShort`). The correction is capped at ×20
// for the first instants.
func (t *throttle) observedRate(now time.Time) float64 {
	r := t.sends.at(now)
	if t.first.IsZero() {
		return r
	}
	ran := now.Sub(t.first).Seconds() / rateWindow.Seconds()
	return r / max(1-math.Exp(-ran), 0.05)
}

// quota records a quota answer and reports whether it lowered the limit.
// Answers not significantly above throttleMinShare of all answers
// (overQuota) neither cut the limit nor delay its recovery.
func (t *throttle) quota(now time.Time) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.quotas.add(now)
	if !t.overQuota(now) {
		return false
	}
	t.lastQuota = now
	if !t.lastCut.IsZero() && now.Sub(t.lastCut) < throttleHold {
		return false
	}
	observed := t.observedRate(now)
	base := observed
	if t.lim == nil {
		t.peak = max(observed, 2*throttleFloor)
	} else {
		base = min(base, t.limit)
	}
	t.setLimit(now, max(throttleFloor, base/2))
	t.lastCut = now
	return true
}

// reserve takes one send slot and returns how long the send must wait for
// it, and a function that gives the slot back if the send does not happen.
func (t *throttle) reserve(now time.Time) (time.Duration, func()) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.recover(now)
	if t.lim == nil {
		return 0, func() {}
	}
	r := t.lim.ReserveN(now, 1)
	return r.DelayFrom(now), func() { r.CancelAt(now) }
}

// backlog is how long a send reserved now would wait.
func (t *throttle) backlog(now time.Time) time.Duration {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.recover(now)
	if t.lim == nil {
		return 0
	}
	tokens := t.lim.TokensAt(now)
	if tokens >= 1 {
		return 0
	}
	return time.Duration((1 - tokens) / t.limit * float64(time.Second))
}

// currentLimit returns the rate limit in sends per second, 0 if unlimited.
func (t *throttle) currentLimit(now time.Time) float64 {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.recover(now)
	return t.limit
}

// recover raises the limit one step per quiet period since the last quota
// answer or step, and lifts it once it reaches the throttled peak.
func (t *throttle) recover(now time.Time) {
	if t.lim == nil {
		return
	}
	quiet := now.Sub(t.lastQuota)
	if quiet < throttleQuiet {
		return
	}
	steps := int(quiet / throttleQuiet)
	t.lastQuota = t.lastQuota.Add(time.Duration(steps) * throttleQuiet)
	next := t.limit * math.Pow(throttleRecover, float64(steps))
	if next >= t.peak {
		t.lim, t.limit = nil, 0
		return
	}
	t.setLimit(now, next)
}

// setLimit sets a finite limit. The burst allows 100 ms worth of sends, so a
// fast limit does not need a timer per send. A new limiter is made when
// leaving the unlimited state because rate.Limiter cannot move from an
// infinite limit at an equal instant (Inf·0 = NaN tokens).
func (t *throttle) setLimit(now time.Time, limit float64) {
	burst := max(1, int(limit/10))
	t.limit = limit
	if t.lim == nil {
		t.lim = rate.NewLimiter(rate.Limit(limit), burst)
		t.lim.SetLimitAt(now, rate.Limit(limit)) // anchors the limiter on the injected clock
		return
	}
	t.lim.SetLimitAt(now, rate.Limit(limit))
	t.lim.SetBurstAt(now, burst)
}

// rateEstimator estimates an event rate with an exponentially decaying
// count: each event adds 1/τ and the sum decays by e^(-Δt/τ), so a steady
// rate λ converges to λ events per second.
type rateEstimator struct {
	tau   time.Duration
	value float64
	last  time.Time
}

func (e *rateEstimator) add(now time.Time) {
	e.value = e.at(now) + 1/e.tau.Seconds()
	if now.After(e.last) {
		e.last = now
	}
}

func (e *rateEstimator) at(now time.Time) float64 {
	dt := now.Sub(e.last)
	if e.last.IsZero() || dt <= 0 {
		return e.value
	}
	return e.value * math.Exp(-dt.Seconds()/e.tau.Seconds())
}
