// Package fault is the fault engine every emulator shares: per-target
// fault rules that fail a number of sends or every send, fault rates drawn
// from a seeded generator, injected latency, Retry-After (announced in a
// header and checked on the next send: early retries), and the counters of
// accepted and rejected sends. An emulator plugs in its own rule type O
// (an FCM code, an APNs reason, an HTTP status, a Twilio code, an SMTP
// reply), the JSON shape F of its faults, and how an answer is rendered in
// its wire protocol; the engine decides which sends fail.
package fault

import (
	"context"
	"fmt"
	"maps"
	"math/rand/v2"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

// Retry is what a rule says about repeating and Retry-After.
type Retry struct {
	// Times fails this many sends, then lets sends through; 0 fails every
	// send.
	Times int
	// AfterSeconds, if positive, is the Retry-After the answer carries.
	AfterSeconds int
	// HTTPDate writes Retry-After as an HTTP-date instead of seconds.
	HTTPDate bool
}

// RateFault fails a fraction of sends; it is the JSON shape of an
// emulator's rate faults.
type RateFault struct {
	// Rate is the fraction of sends failed, 0..1.
	Rate float64 `json:"rate,omitempty"`
	// RetryAfterSeconds, if positive, adds a Retry-After header.
	RetryAfterSeconds int `json:"retry_after_seconds,omitempty"`
}

// Rate is one of an emulator's fault rates: Fault fails that fraction of
// the sends no rule fails, with Outcome.
type Rate[O any] struct {
	// Name is the rate's JSON name, for errors.
	Name    string
	Fault   RateFault
	Outcome O
}

// Injected is the fault chosen for one send.
type Injected[O any] struct {
	Outcome    O
	RetryAfter int // seconds, 0 for none
	HTTPDate   bool
}

// Counts are the counters every emulator keeps.
type Counts[K comparable] struct {
	Accepted     uint64
	Rejected     map[K]uint64
	EarlyRetries uint64
}

// Spec is what an Engine knows of an emulator besides what its faults F
// and rules O hold under the names every emulator uses (see layout): its
// rates, how it judges a rule, and how a failure is counted (K). Rates,
// Check and Key must be set.
type Spec[F any, O any, K comparable] struct {
	// Rates are F's rates in the order they are drawn.
	Rates func(*F) []Rate[O]
	// Check judges a rule in the emulator's terms.
	Check func(O) error
	// Valid, if not nil, judges the rest of F (the latency and the
	// emulator's own settings) once the rules and rates pass; if nil, the
	// latency must not be negative.
	Valid func(*F) error
	// Target, if not nil, is the key a target's rule is kept under (a
	// subscription's id, a lower-case address); the target as given if nil.
	Target func(string) string
	// Key names the counter a failure is counted under.
	Key func(O) K
}

// Engine decides which sends fail. F is the emulator's faults value (kept
// as set, for reading back), O its rule type and K the key it counts
// rejections by. It is safe for concurrent use.
type Engine[F any, O any, K comparable] struct {
	spec   Spec[F, O, K]
	layout layout[F, O]

	latency  atomic.Int64 // nanoseconds
	accepted atomic.Uint64

	mu        sync.Mutex // guards everything below; never held while sleeping
	faults    F
	rules     map[string]O
	remaining map[string]int // failures left per rule with Times > 0
	rates     []Rate[O]
	rng       *rand.Rand
	notBefore NotBefore // per target
	rejected  map[K]uint64
	early     uint64
	own       []*Counter
}

// New returns an Engine with no faults. seed seeds the rates' generator
// (zero seeds it from the clock). It panics if F and O do not hold their
// rules, latency and Retry-After under the names every emulator uses (see
// layout).
func New[F any, O any, K comparable](seed uint64, spec Spec[F, O, K]) *Engine[F, O, K] {
	if seed == 0 {
		seed = uint64(time.Now().UnixNano())
	}
	if spec.Target == nil {
		spec.Target = func(t string) string { return t }
	}
	return &Engine[F, O, K]{
		spec:      spec,
		layout:    layoutOf[F, O](),
		rules:     make(map[string]O),
		remaining: make(map[string]int),
		rng:       rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15)),
		rejected:  make(map[K]uint64),
	}
}

// SetFaults replaces the faults with f once it is judged sound: every
// rule (its errors prefixed with set[target], set the rules' JSON name), the rates and the latency.
// Every rule's count restarts.
func (e *Engine[F, O, K]) SetFaults(f F) error {
	rules, rates := *e.layout.rulesOf(&f), e.spec.Rates(&f)
	if err := e.check(rules, rates); err != nil {
		return err
	}
	if err := e.valid(&f); err != nil {
		return err
	}
	byTarget := make(map[string]O, len(rules))
	for target, o := range rules {
		byTarget[e.spec.Target(target)] = o
	}
	e.set(f, byTarget, rates, e.layout.latencyOf(&f))
	return nil
}

// Faults returns the faults as set, with the rules now in force (by the
// key each is kept under).
func (e *Engine[F, O, K]) Faults() F {
	e.mu.Lock()
	defer e.mu.Unlock()
	f := e.faults
	*e.layout.rulesOf(&f) = maps.Clone(e.rules)
	return f
}

// Fail adds or replaces the rule of one target, keeping the others, once
// it is judged sound. Its error is not prefixed; see RuleError.
func (e *Engine[F, O, K]) Fail(target string, o O) error {
	if err := e.checkRule(o); err != nil {
		return err
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	target = e.spec.Target(target)
	e.rules[target] = o
	e.remaining[target] = e.layout.retryOf(o).Times
	return nil
}

// Clear removes every fault.
func (e *Engine[F, O, K]) Clear() {
	var zero F
	e.set(zero, nil, nil, 0)
}

// RuleError names the rule err is about as set[target] (as SetFaults
// does); nil if err is nil.
func RuleError(set, target string, err error) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("%s[%q]: %w", set, target, err)
}

// check rejects faults the engine could not inject: the emulator's Check
// judges each rule in its terms, the engine judges repeat counts,
// Retry-After and the rates.
func (e *Engine[F, O, K]) check(rules map[string]O, rates []Rate[O]) error {
	for target, o := range rules {
		if err := e.checkRule(o); err != nil {
			return RuleError(e.layout.set, target, err)
		}
	}
	total := 0.0
	for _, r := range rates {
		if r.Fault.Rate < 0 || r.Fault.Rate > 1 || r.Fault.RetryAfterSeconds < 0 {
			return fmt.Errorf("%s: rate must be in 0..1 and retry_after_seconds not negative", r.Name)
		}
		total += r.Fault.Rate
	}
	if total > 1 {
		return fmt.Errorf("the rates add up to more than 1")
	}
	return nil
}

// valid judges what of f is not a rule or a rate.
func (e *Engine[F, O, K]) valid(f *F) error {
	if e.spec.Valid != nil {
		return e.spec.Valid(f)
	}
	if e.layout.latencyOf(f) < 0 {
		return fmt.Errorf("latency_ms must not be negative")
	}
	return nil
}

// checkRule judges one rule: in the emulator's terms, then its repeat
// count and Retry-After.
func (e *Engine[F, O, K]) checkRule(o O) error {
	if err := e.spec.Check(o); err != nil {
		return err
	}
	if r := e.layout.retryOf(o); r.Times < 0 || r.AfterSeconds < 0 {
		return fmt.Errorf("times and retry_after_seconds must not be negative")
	}
	return nil
}

// set replaces the faults: f as the emulator shows it, its rules by
// target, its rates and latency. Every rule's count restarts.
func (e *Engine[F, O, K]) set(f F, rules map[string]O, rates []Rate[O], latencyMillis int) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.faults = f
	e.rules = rules
	if e.rules == nil {
		e.rules = make(map[string]O)
	}
	clear(e.remaining)
	for target, o := range e.rules {
		e.remaining[target] = e.layout.retryOf(o).Times
	}
	e.rates = rates
	e.latency.Store(int64(latencyMillis) * int64(time.Millisecond))
}

// Wait sleeps the injected latency; it reports false if ctx ended first.
func (e *Engine[F, O, K]) Wait(ctx context.Context) bool {
	d := time.Duration(e.latency.Load())
	if d <= 0 {
		return true
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}

// Pick decides whether a send to target at now fails, and counts it: an
// early retry if it comes before the Retry-After target was last given,
// and a rejection if it fails. forced, if not nil, fails it with that
// outcome before any rule (a Twilio opt-out). Otherwise target's rule
// fails it while it has sends left, then the rates may. An empty target
// (an FCM topic) has no rule and no Retry-After to honour.
func (e *Engine[F, O, K]) Pick(target string, now time.Time, forced *O) (Injected[O], bool) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if target != "" && e.notBefore.Early(target, now) {
		e.early++
	}
	var inj Injected[O]
	fail := false
	switch {
	case forced != nil:
		inj, fail = Injected[O]{Outcome: *forced}, true
	case target != "":
		inj, fail = e.useRule(target)
	}
	if !fail {
		inj, fail = e.draw()
	}
	if !fail {
		return inj, false
	}
	e.rejected[e.spec.Key(inj.Outcome)]++
	if target != "" {
		e.notBefore.Note(target, now, inj.RetryAfter, inj.HTTPDate)
	}
	return inj, true
}

// PickStage is Pick for a protocol that fails a send at one of several
// stages (SMTP's RCPT TO and DATA), without Retry-After. target's rule
// fails only a stage it applies to, and a target with a rule, used up or
// not, is never failed by a rate; the rates fail only where rates is true.
func (e *Engine[F, O, K]) PickStage(target string, applies func(O) bool, rates bool) (O, bool) {
	e.mu.Lock()
	defer e.mu.Unlock()
	var inj Injected[O]
	fail := false
	if o, ok := e.rules[target]; ok {
		if applies(o) {
			inj, fail = e.useRule(target)
		}
	} else if rates {
		inj, fail = e.draw()
	}
	if fail {
		e.rejected[e.spec.Key(inj.Outcome)]++
	}
	return inj.Outcome, fail
}

// useRule fails a send by target's rule if it has sends left; e.mu must
// be held.
func (e *Engine[F, O, K]) useRule(target string) (Injected[O], bool) {
	o, ok := e.rules[target]
	if !ok {
		return Injected[O]{}, false
	}
	r := e.layout.retryOf(o)
	if r.Times > 0 {
		left := e.remaining[target]
		if left <= 0 {
			return Injected[O]{}, false
		}
		e.remaining[target] = left - 1
	}
	return Injected[O]{Outcome: o, RetryAfter: r.AfterSeconds, HTTPDate: r.HTTPDate}, true
}

// draw fails a send by the rates, in their order; e.mu must be held.
func (e *Engine[F, O, K]) draw() (Injected[O], bool) {
	total := 0.0
	for _, r := range e.rates {
		total += r.Fault.Rate
	}
	if total == 0 {
		return Injected[O]{}, false
	}
	x, upTo := e.rng.Float64(), 0.0
	for _, r := range e.rates {
		upTo += r.Fault.Rate
		if x < upTo {
			return Injected[O]{Outcome: r.Outcome, RetryAfter: r.Fault.RetryAfterSeconds}, true
		}
	}
	return Injected[O]{}, false
}

// Accept counts an accepted send.
func (e *Engine[F, O, K]) Accept() { e.accepted.Add(1) }

// Reject counts an error answer the emulator gave on its own (a failed
// validation or authentication).
func (e *Engine[F, O, K]) Reject(k K) {
	e.mu.Lock()
	e.rejected[k]++
	e.mu.Unlock()
}

// Counts returns a snapshot of the counters.
func (e *Engine[F, O, K]) Counts() Counts[K] {
	e.mu.Lock()
	defer e.mu.Unlock()
	return Counts[K]{Accepted: e.accepted.Load(), Rejected: maps.Clone(e.rejected), EarlyRetries: e.early}
}

// ResetCounts zeroes the counters, the emulator's own among them, and
// forgets the Retry-After each target was given. Faults stay.
func (e *Engine[F, O, K]) ResetCounts() {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.accepted.Store(0)
	clear(e.rejected)
	e.early = 0
	for _, c := range e.own {
		c.n.Store(0)
	}
	e.notBefore.Reset()
}

// Counter is one of an emulator's own counters (access tokens issued,
// connections accepted). It is safe for concurrent use.
type Counter struct{ n atomic.Uint64 }

// Inc counts one.
func (c *Counter) Inc() { c.n.Add(1) }

// Load returns the count.
func (c *Counter) Load() uint64 { return c.n.Load() }

// Counter returns a new counter of the emulator's own, which ResetCounts
// zeroes with the engine's, so that an emulator's Reset stays one call.
func (e *Engine[F, O, K]) Counter() *Counter {
	e.mu.Lock()
	defer e.mu.Unlock()
	c := new(Counter)
	e.own = append(e.own, c)
	return c
}

// WriteRetryAfter adds a Retry-After header of seconds (none if not
// positive), as an HTTP-date counted from now if httpDate.
func WriteRetryAfter(h http.Header, seconds int, httpDate bool, now time.Time) {
	if seconds <= 0 {
		return
	}
	v := strconv.Itoa(seconds)
	if httpDate {
		v = now.Add(time.Duration(seconds) * time.Second).UTC().Format(http.TimeFormat)
	}
	h.Set("Retry-After", v)
}
