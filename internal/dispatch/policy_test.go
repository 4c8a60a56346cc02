package dispatch

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/heraldhq/herald/heraldtype"
	"github.com/heraldhq/herald/internal/policy"
)

// policyFunc adapts a function to Policy.
type policyFunc func(job *heraldtype.Job, now time.Time) (policy.Decision, error)

func (f policyFunc) Prefetch(context.Context, []heraldtype.Job, time.Time) (*policy.Prefetched, error) {
	return nil, nil
}

func (f policyFunc) Check(_ context.Context, job *heraldtype.Job, now time.Time, _ *policy.Prefetched) (policy.Decision, error) {
	return f(job, now)
}

// countingSender counts its sends.
func countingSender(n *atomic.Int64) Sender {
	return senderFunc(func(_ context.Context, m *heraldtype.Message) (string, error) {
		n.Add(1)
		return "pm-" + m.Key, nil
	})
}

func TestPolicyBlocksWithoutSending(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		state heraldtype.DeliveryState
		code  string
		out   heraldtype.AttemptOutcome
	}{
		{heraldtype.StateOptedOut, policy.CodeTypeDisabled, heraldtype.OutcomeOptedOut},
		{heraldtype.StateRateLimited, policy.CodeDuplicate, heraldtype.OutcomeRateLimited},
		{heraldtype.StateRateLimited, policy.CodeDailyCap, heraldtype.OutcomeRateLimited},
	} {
		var sends atomic.Int64
		h := newHarness(t, map[string]Sender{"fcm": countingSender(&sends)}, func(cfg *Config) {
			cfg.Policy = policyFunc(func(*heraldtype.Job, time.Time) (policy.Decision, error) {
				return policy.Decision{Verdict: policy.Block, State: c.state, Code: c.code, Reason: "because"}, nil
			})
		})
		id := h.add(fakeDelivery{})
		h.runOnce(1)
		d := h.store.get(id)
		// Recorded with its reason, never silently dropped (issue 4).
		if d.State != c.state || d.LastErrorCode != c.code || d.LastError != "because" || d.FinishedAt == nil {
			t.Fatalf("%s/%s: delivery = %+v", c.state, c.code, d)
		}
		if len(d.Attempts) != 1 || d.Attempts[0].Outcome != c.out {
			t.Fatalf("%s: attempts = %+v", c.code, d.Attempts)
		}
		if sends.Load() != 0 {
			t.Fatalf("%s: the provider was called %d times", c.code, sends.Load())
		}
		if got := counter(h.metrics.PolicyDecisions.WithLabelValues(string(c.state), c.code)); got != 1 {
			t.Fatalf("%s: decisions metric = %v, want 1", c.code, got)
		}
	}
}

// Quiet hours defer a delivery (not drop it): it goes back to the queue,
// uncounted, until the window ends, and is sent then.
func TestPolicyDeferThenSend(t *testing.T) {
	t.Parallel()
	var sends atomic.Int64
	var until time.Time
	h := newHarness(t, map[string]Sender{"fcm": countingSender(&sends)}, func(cfg *Config) {
		cfg.Policy = policyFunc(func(_ *heraldtype.Job, now time.Time) (policy.Decision, error) {
			if now.Before(until) {
				return policy.Decision{Verdict: policy.Defer, Code: policy.CodeQuietHours, Reason: "quiet", Until: until}, nil
			}
			return policy.Decision{Verdict: policy.Allow}, nil
		})
	})
	until = h.clock.Now().Add(8 * time.Hour)
	id := h.add(fakeDelivery{})
	h.runOnce(1)
	d := h.store.get(id)
	if d.State != heraldtype.StatePending || d.Attempt != 0 || !d.RunAt.Equal(until) || d.LastErrorCode != policy.CodeQuietHours {
		t.Fatalf("deferred delivery = %+v", d)
	}
	if len(d.Attempts) != 1 || d.Attempts[0].Outcome != heraldtype.OutcomeDeferred || sends.Load() != 0 {
		t.Fatalf("attempts = %+v, sends = %d", d.Attempts, sends.Load())
	}
	h.runOnce(0)
	h.clock.Advance(8 * time.Hour)
	h.runOnce(1)
	if d := h.store.get(id); d.State != heraldtype.StateSent || d.Attempt != 1 || sends.Load() != 1 {
		t.Fatalf("after the window: %+v, sends = %d", d, sends.Load())
	}
}

// S1.3: when the policy store fails nothing is sent blind; the delivery
// waits and is retried, and sent once the store answers again.
func TestPolicyErrorFailsClosed(t *testing.T) {
	t.Parallel()
	var sends atomic.Int64
	var mu sync.Mutex
	broken := true
	h := newHarness(t, map[string]Sender{"fcm": countingSender(&sends)}, func(cfg *Config) {
		cfg.Policy = policyFunc(func(*heraldtype.Job, time.Time) (policy.Decision, error) {
			mu.Lock()
			defer mu.Unlock()
			if broken {
				return policy.Decision{}, errors.New("redis: connection refused")
			}
			return policy.Decision{Verdict: policy.Allow}, nil
		})
	})
	id := h.add(fakeDelivery{})
	h.runOnce(1)
	d := h.store.get(id)
	if d.State != heraldtype.StatePending || d.Attempt != 0 || !d.RunAt.Equal(h.clock.Now().Add(DefaultPolicyRetry)) ||
		d.LastErrorCode != policy.CodePolicyError || sends.Load() != 0 {
		t.Fatalf("after a policy error: %+v, sends = %d", d, sends.Load())
	}
	if len(d.Attempts) != 1 || d.Attempts[0].Outcome != heraldtype.OutcomePolicyError {
		t.Fatalf("attempts = %+v", d.Attempts)
	}
	h.clock.Advance(DefaultPolicyRetry)
	h.runOnce(1)
	if sends.Load() != 0 || h.store.get(id).State != heraldtype.StatePending {
		t.Fatal("a delivery was sent while the policy store was failing")
	}
	mu.Lock()
	broken = false
	mu.Unlock()
	h.clock.Advance(DefaultPolicyRetry)
	h.runOnce(1)
	if d := h.store.get(id); d.State != heraldtype.StateSent || sends.Load() != 1 {
		t.Fatalf("after recovery: %+v, sends = %d", d, sends.Load())
	}
}

// hangingPolicy's Check waits for its context to end, like a policy
// store that stopped answering.
type hangingPolicy struct{}

func (hangingPolicy) Prefetch(context.Context, []heraldtype.Job, time.Time) (*policy.Prefetched, error) {
	return nil, nil
}

func (hangingPolicy) Check(ctx context.Context, _ *heraldtype.Job, _ time.Time, _ *policy.Prefetched) (policy.Decision, error) {
	<-ctx.Done()
	return policy.Decision{}, ctx.Err()
}

// A policy check that hangs fails after StoreTimeout, and fails closed:
// the delivery goes back unsent with policy_error, its send slot freed.
func TestPolicyHangFailsClosed(t *testing.T) {
	t.Parallel()
	var sends atomic.Int64
	h := newHarness(t, map[string]Sender{"fcm": countingSender(&sends)}, func(cfg *Config) {
		cfg.Policy = hangingPolicy{}
		cfg.StoreTimeout = 50 * time.Millisecond
	})
	id := h.add(fakeDelivery{})
	h.runOnce(1)
	if d := h.store.get(id); d.State != heraldtype.StatePending || d.Attempt != 0 ||
		d.LastErrorCode != policy.CodePolicyError || sends.Load() != 0 {
		t.Fatalf("after a hung policy check: %+v, sends = %d", d, sends.Load())
	}
}

// A delivery the policy cannot decide for longer than PolicyMaxDelay ends
// dead with its reason instead of waiting forever.
func TestPolicyErrorGivesUp(t *testing.T) {
	t.Parallel()
	var sends atomic.Int64
	h := newHarness(t, map[string]Sender{"fcm": countingSender(&sends)}, func(cfg *Config) {
		cfg.PolicyMaxDelay = time.Hour
		cfg.Policy = policyFunc(func(*heraldtype.Job, time.Time) (policy.Decision, error) {
			return policy.Decision{}, errors.New("database is locked")
		})
	})
	id := h.add(fakeDelivery{})
	h.store.mu.Lock()
	h.store.deliveries[id].CreatedAt = h.clock.Now()
	h.store.mu.Unlock()
	h.clock.Advance(time.Hour + time.Second)
	h.runOnce(1)
	d := h.store.get(id)
	if d.State != heraldtype.StateDead || d.LastErrorCode != policy.CodePolicyError || sends.Load() != 0 {
		t.Fatalf("delivery = %+v, sends = %d", d, sends.Load())
	}
}

// prefetchPolicy records its Prefetch calls and what Check was given.
type prefetchPolicy struct {
	mu        sync.Mutex
	prefetch  int
	batch     int
	err       error
	batchIDs  []int64
	checkPres []*policy.Prefetched
}

func (p *prefetchPolicy) Prefetch(_ context.Context, jobs []heraldtype.Job, _ time.Time) (*policy.Prefetched, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.prefetch++
	p.batch = len(jobs)
	p.batchIDs = nil
	for _, j := range jobs {
		p.batchIDs = append(p.batchIDs, j.Delivery.ID)
	}
	if p.err != nil {
		return nil, p.err
	}
	return &policy.Prefetched{Preferences: map[string]heraldtype.Preferences{"u1": {UserID: "u1"}}}, nil
}

func (p *prefetchPolicy) Check(_ context.Context, _ *heraldtype.Job, _ time.Time, pre *policy.Prefetched) (policy.Decision, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.checkPres = append(p.checkPres, pre)
	return policy.Decision{Verdict: policy.Allow}, nil
}

// The policy reads what it needs once per claimed batch, not once per
// delivery, and every Check of the batch gets that read; a failed read
// still lets each Check decide (and fail closed) on its own.
func TestPolicyPrefetchPerBatch(t *testing.T) {
	t.Parallel()
	for _, fail := range []bool{false, true} {
		var sends atomic.Int64
		p := &prefetchPolicy{}
		if fail {
			p.err = errors.New("connection reset")
		}
		h := newHarness(t, map[string]Sender{"fcm": countingSender(&sends)}, func(cfg *Config) { cfg.Policy = p })
		for range 5 {
			h.add(fakeDelivery{})
		}
		h.runOnce(5)
		if p.prefetch != 1 || p.batch != 5 || len(p.checkPres) != 5 || sends.Load() != 5 {
			t.Fatalf("fail=%v: %d prefetches of %d jobs, %d checks, %d sends", fail, p.prefetch, p.batch,
				len(p.checkPres), sends.Load())
		}
		for _, pre := range p.checkPres {
			if (pre == nil) != fail {
				t.Fatalf("fail=%v: Check got %v", fail, pre)
			}
		}
	}
}

// The batch the policy prefetches for (and counts daily caps for) holds
// only the deliveries that reach it: one the worker skips or ends before
// the policy (its device deleted or opted out, no sender for its
// provider) must not spend a slot of its user's cap (issue 39 item 3).
func TestPolicyPrefetchLeavesOutRefused(t *testing.T) {
	t.Parallel()
	var sends atomic.Int64
	p := &prefetchPolicy{}
	h := newHarness(t, map[string]Sender{"fcm": countingSender(&sends)}, func(cfg *Config) { cfg.Policy = p })
	first := h.add(fakeDelivery{})
	h.add(fakeDelivery{noDevice: true})
	h.add(fakeDelivery{device: &heraldtype.Device{ID: "d-off", UserID: "u1", Platform: heraldtype.PlatformAndroid,
		Token: "tok-off", Status: heraldtype.DeviceActive}})
	h.add(fakeDelivery{provider: "apns"})
	last := h.add(fakeDelivery{})
	h.runOnce(5)
	if p.prefetch != 1 || len(p.batchIDs) != 2 || p.batchIDs[0] != first || p.batchIDs[1] != last {
		t.Fatalf("%d prefetches of deliveries %v; want one of [%d %d]", p.prefetch, p.batchIDs, first, last)
	}
	if len(p.checkPres) != 2 || sends.Load() != 2 {
		t.Fatalf("%d checks, %d sends; want 2 of each", len(p.checkPres), sends.Load())
	}
}

// A slow policy store (a type lookup after its cache expired, preferences
// the prefetch could not read) eats into the lease. The send guard reads
// the clock when it decides, so no send starts with less than SendTimeout +
// OutcomeMargin of lease left; one with exactly that much still goes
// (issue 24 item 2).
func TestSendGuardReadsClockAfterSlowPolicy(t *testing.T) {
	t.Parallel()
	const lease, send, margin = 30 * time.Second, 10 * time.Second, 2 * time.Second
	for _, c := range []struct {
		name     string
		slow     time.Duration // how long the policy check takes, on the clock
		wantSent bool
	}{
		{"fast policy", 0, true},
		{"leaves exactly the margin", lease - send - margin, true},
		{"leaves less than the margin", lease - send - margin + time.Millisecond, false},
		{"leaves less than the send timeout", lease - send + time.Second, false},
	} {
		var h *harness
		var id int64
		var mu sync.Mutex
		var leftAtSend []time.Duration
		sender := senderFunc(func(_ context.Context, m *heraldtype.Message) (string, error) {
			mu.Lock()
			defer mu.Unlock()
			leftAtSend = append(leftAtSend, h.store.get(id).LeaseUntil.Sub(h.clock.Now()))
			return "pm-" + m.Key, nil
		})
		h = newHarness(t, map[string]Sender{"fcm": sender}, func(cfg *Config) {
			cfg.LeaseDuration, cfg.SendTimeout, cfg.OutcomeMargin = lease, send, margin
			cfg.Policy = policyFunc(func(*heraldtype.Job, time.Time) (policy.Decision, error) {
				h.clock.Advance(c.slow) // the store answered this late
				return policy.Decision{Verdict: policy.Allow}, nil
			})
		})
		id = h.add(fakeDelivery{guarantee: heraldtype.AtMostOnce})
		h.runOnce(1)
		d := h.store.get(id)
		mu.Lock()
		sends := len(leftAtSend)
		for _, left := range leftAtSend {
			if left < send+margin {
				t.Errorf("%s: a send started with %s of lease left, want at least %s", c.name, left, send+margin)
			}
		}
		mu.Unlock()
		switch {
		case c.wantSent && (sends != 1 || d.State != heraldtype.StateSent):
			t.Errorf("%s: sends %d, delivery %s; want it sent once", c.name, sends, d.State)
		case !c.wantSent && (sends != 0 || d.State != heraldtype.StatePending || d.Attempt != 0):
			// Released unsent, the attempt not counted: due again at once.
			t.Errorf("%s: sends %d, delivery %s attempt %d; want it released unsent", c.name, sends, d.State, d.Attempt)
		}
	}
}
