package dispatch

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/heraldhq/herald/heraldtype"
	"github.com/heraldhq/herald/store"
)

func TestSentRecordsProviderIDKeyAndLatency(t *testing.T) {
	t.Parallel()
	var gotKey string
	h := newHarness(t, map[string]Sender{"fcm": senderFunc(func(_ context.Context, m *heraldtype.Message) (string, error) {
		gotKey = m.Key
		if m.Device == nil || m.Device.Token != "tok1" || m.Notification == nil {
			return "", fmt.Errorf("message without device or notification: %+v", m)
		}
		return "projects/p/messages/1", nil
	})}, nil)
	id := h.add(fakeDelivery{})
	h.runOnce(1)

	d := h.store.get(id)
	if d.State != heraldtype.StateSent || d.ProviderMessageID != "projects/p/messages/1" {
		t.Fatalf("delivery = %s %q, want sent with the provider id", d.State, d.ProviderMessageID)
	}
	// S0.5: the idempotency key travels with the message.
	if want := heraldtype.DeliveryKey(d.NotificationID, id); gotKey != want {
		t.Errorf("key = %q, want %q", gotKey, want)
	}
	if len(d.Attempts) != 1 || d.Attempts[0].Outcome != heraldtype.OutcomeSent {
		t.Errorf("attempts = %+v, want one sent row", d.Attempts)
	}
	if got := counter(h.metrics.Sent.WithLabelValues("fcm")); got != 1 {
		t.Errorf("sent metric = %v, want 1", got)
	}
	if got := histogramCount(h.metrics.EndToEndLatency.WithLabelValues("fcm")); got != 1 {
		t.Errorf("end-to-end latency samples = %d, want 1", got)
	}
	if got := histogramCount(h.metrics.SendLatency.WithLabelValues("fcm")); got != 1 {
		t.Errorf("send latency samples = %d, want 1", got)
	}
}

// S0.3: a temporary failure is retried with exponential backoff from 5 s,
// then the delivery is sent.
func TestRetryThenSuccess(t *testing.T) {
	t.Parallel()
	h := newHarness(t, map[string]Sender{"fcm": scripted(
		sendErr(heraldtype.ClassTemporary, "UNAVAILABLE"),
		errors.New("connection reset by peer"), // unclassified: temporary "network"
	)}, nil)
	id := h.add(fakeDelivery{})

	h.runOnce(1)
	d := h.store.get(id)
	if d.State != heraldtype.StatePending || !d.RunAt.Equal(start().Add(5*time.Second)) || d.LastErrorCode != "UNAVAILABLE" {
		t.Fatalf("after 1st failure: %s run_at %s code %q, want pending at +5s UNAVAILABLE", d.State, d.RunAt, d.LastErrorCode)
	}
	h.runOnce(0) // not due yet

	now := h.clock.Advance(5 * time.Second)
	h.runOnce(1)
	d = h.store.get(id)
	if d.State != heraldtype.StatePending || !d.RunAt.Equal(now.Add(10*time.Second)) || d.LastErrorCode != "network" {
		t.Fatalf("after 2nd failure: %s run_at %s code %q, want pending at +10s network", d.State, d.RunAt.Sub(now), d.LastErrorCode)
	}

	h.clock.Advance(10 * time.Second)
	h.runOnce(1)
	d = h.store.get(id)
	if d.State != heraldtype.StateSent || d.Attempt != 3 {
		t.Fatalf("after 3rd attempt: %s attempt %d, want sent on attempt 3", d.State, d.Attempt)
	}
	var outcomes []heraldtype.AttemptOutcome
	for _, a := range d.Attempts {
		outcomes = append(outcomes, a.Outcome)
	}
	if fmt.Sprint(outcomes) != "[retry retry sent]" {
		t.Errorf("timeline = %v, want [retry retry sent]", outcomes)
	}
	if got := counter(h.metrics.Retried.WithLabelValues("fcm", "UNAVAILABLE")) + counter(h.metrics.Retried.WithLabelValues("fcm", "network")); got != 2 {
		t.Errorf("retried metric = %v, want 2", got)
	}
	if got := counter(h.metrics.Failed.WithLabelValues("fcm", "network")); got != 1 {
		t.Errorf("failed{network} = %v, want 1", got)
	}
}

// S4.3: seed 004's "1 s → 2 s → 4 s, at most 3 retries" is configuration.
func TestSeed004ScheduleIsConfig(t *testing.T) {
	t.Parallel()
	fail := senderFunc(func(context.Context, *heraldtype.Message) (string, error) {
		return "", sendErr(heraldtype.ClassTemporary, "INTERNAL")
	})
	h := newHarness(t, map[string]Sender{"fcm": fail}, func(c *Config) {
		c.Retry = map[heraldtype.ErrorClass]heraldtype.RetryPolicy{heraldtype.ClassTemporary: {Base: time.Second, Factor: 2, Max: time.Minute}}
	})
	id := h.add(fakeDelivery{maxAttempts: 4})
	for _, wait := range []time.Duration{time.Second, 2 * time.Second, 4 * time.Second} {
		now := h.clock.Now()
		h.runOnce(1)
		if d := h.store.get(id); d.State != heraldtype.StatePending || d.RunAt.Sub(now) != wait {
			t.Fatalf("attempt %d: %s, next in %s; want pending in %s", d.Attempt, d.State, d.RunAt.Sub(now), wait)
		}
		h.clock.Advance(wait)
	}
	h.runOnce(1)
	if d := h.store.get(id); d.State != heraldtype.StateDead || d.Attempt != 4 || d.LastErrorCode != "INTERNAL" {
		t.Fatalf("after 4 attempts: %s attempt %d code %q, want dead INTERNAL", d.State, d.Attempt, d.LastErrorCode)
	}
}

func TestRetryAfterHonoured(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name       string
		retryAfter time.Duration
		want       time.Duration
	}{
		{"longer than backoff", 2 * time.Minute, 2 * time.Minute},
		{"shorter than backoff", time.Second, 5 * time.Second},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			se := sendErr(heraldtype.ClassTemporary, "UNAVAILABLE")
			se.RetryAfter = tc.retryAfter
			h := newHarness(t, map[string]Sender{"fcm": scripted(se)}, nil)
			id := h.add(fakeDelivery{})
			h.runOnce(1)
			d := h.store.get(id)
			if got := d.RunAt.Sub(start()); got != tc.want {
				t.Errorf("next run in %s, want %s", got, tc.want)
			}
			if d.Attempts[0].RetryAfter != tc.retryAfter {
				t.Errorf("recorded retry-after %s, want %s", d.Attempts[0].RetryAfter, tc.retryAfter)
			}
		})
	}
}

// PROTOCOLS.md: QUOTA_EXCEEDED waits at least 60 s and slows the whole
// sender down.
func TestQuotaExceededWaitsAMinuteAndThrottles(t *testing.T) {
	t.Parallel()
	quota := sendErr(heraldtype.ClassThrottled, "QUOTA_EXCEEDED")
	var errs []error
	for range throttleMinQuotas {
		errs = append(errs, quota)
	}
	h := newHarness(t, map[string]Sender{"fcm": scripted(errs...)},
		func(c *Config) { c.Rand = func() float64 { return 0.999 } })
	id := h.add(fakeDelivery{})
	for range throttleMinQuotas - 1 {
		h.add(fakeDelivery{})
	}
	h.runOnce(throttleMinQuotas)
	d := h.store.get(id)
	if got := d.RunAt.Sub(start()); got < time.Minute || got > 90*time.Second {
		t.Errorf("next run in %s, want within [60s, 90s]", got)
	}
	if limit := h.w.throttles["fcm"].currentLimit(h.clock.Now()); limit <= 0 {
		t.Errorf("fcm limit = %v, want a finite rate after a quota answer", limit)
	}
	if got := counter(h.metrics.Throttled.WithLabelValues("fcm")); got != throttleMinQuotas {
		t.Errorf("throttled metric = %v, want %d (one per quota answer)", got, throttleMinQuotas)
	}
}

// S0.3: configuration and payload errors are recorded as failures and do
// not touch the device (the seed's invalidate-on-every-error bug).
func TestPermanentFailureIsDeadWithCode(t *testing.T) {
	t.Parallel()
	for _, code := range []string{"INVALID_ARGUMENT", "SENDER_ID_MISMATCH", "THIRD_PARTY_AUTH_ERROR"} {
		t.Run(code, func(t *testing.T) {
			t.Parallel()
			h := newHarness(t, map[string]Sender{"fcm": scripted(sendErr(heraldtype.ClassPermanent, code))}, nil)
			id := h.add(fakeDelivery{})
			h.runOnce(1)
			d := h.store.get(id)
			if d.State != heraldtype.StateDead || d.LastErrorCode != code || d.Attempt != 1 {
				t.Fatalf("delivery = %s %q attempt %d, want dead %s after one attempt", d.State, d.LastErrorCode, d.Attempt, code)
			}
			if dev := h.store.device(d.DeviceID); dev.Status != heraldtype.DeviceActive || dev.FailCount != 0 {
				t.Errorf("device = %s fail count %d, want ACTIVE untouched", dev.Status, dev.FailCount)
			}
			if got := counter(h.metrics.Dead.WithLabelValues("fcm", code)); got != 1 {
				t.Errorf("dead metric = %v, want 1", got)
			}
		})
	}
}

// S0.3: UNREGISTERED marks the token INVALID in the same transaction.
func TestTokenInvalidInvalidatesDevice(t *testing.T) {
	t.Parallel()
	se := sendErr(heraldtype.ClassPermanent, "UNREGISTERED")
	se.TokenInvalid = true
	h := newHarness(t, map[string]Sender{"fcm": scripted(se)}, nil)
	id := h.add(fakeDelivery{})
	h.runOnce(1)
	d := h.store.get(id)
	if d.State != heraldtype.StateDead || d.LastErrorCode != "UNREGISTERED" {
		t.Fatalf("delivery = %s %q, want dead UNREGISTERED", d.State, d.LastErrorCode)
	}
	dev := h.store.device(d.DeviceID)
	if dev.Status != heraldtype.DeviceInvalid || dev.InvalidReason != "UNREGISTERED" || dev.InvalidatedAt == nil || dev.FailCount != 1 {
		t.Errorf("device = %+v, want INVALID for UNREGISTERED", dev)
	}
	if got := counter(h.metrics.InvalidatedTokens.WithLabelValues("fcm", "UNREGISTERED")); got != 1 {
		t.Errorf("invalidated metric = %v, want 1", got)
	}
}

func TestAttemptsExhaustedEndDeadWithLastCode(t *testing.T) {
	t.Parallel()
	h := newHarness(t, map[string]Sender{"fcm": scripted(
		sendErr(heraldtype.ClassTemporary, "UNAVAILABLE"),
		sendErr(heraldtype.ClassThrottled, "QUOTA_EXCEEDED"),
	)}, nil)
	id := h.add(fakeDelivery{maxAttempts: 2})
	h.runOnce(1)
	h.clock.Advance(time.Hour)
	h.runOnce(1)
	d := h.store.get(id)
	if d.State != heraldtype.StateDead || d.LastErrorCode != "QUOTA_EXCEEDED" || d.Attempt != 2 {
		t.Fatalf("delivery = %s %q attempt %d, want dead QUOTA_EXCEEDED after 2", d.State, d.LastErrorCode, d.Attempt)
	}
	if got := counter(h.metrics.Dead.WithLabelValues("fcm", "QUOTA_EXCEEDED")); got != 1 {
		t.Errorf("dead metric = %v, want 1", got)
	}
}

func TestUnusableDeviceIsSkipped(t *testing.T) {
	t.Parallel()
	now := start()
	for _, tc := range []struct {
		name string
		f    fakeDelivery
		code string
	}{
		{"deleted", fakeDelivery{noDevice: true}, CodeDeviceRemoved},
		{"invalid token", fakeDelivery{device: &heraldtype.Device{ID: "dx", Token: "t", PushOptIn: true,
			Status: heraldtype.DeviceInvalid, InvalidReason: "UNREGISTERED", InvalidatedAt: &now}}, CodeTokenInvalid},
		{"opted out", fakeDelivery{device: &heraldtype.Device{ID: "dx", Token: "t", Status: heraldtype.DeviceActive}}, CodeOptedOut},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			called := false
			h := newHarness(t, map[string]Sender{"fcm": senderFunc(func(context.Context, *heraldtype.Message) (string, error) {
				called = true
				return "x", nil
			})}, nil)
			id := h.add(tc.f)
			h.runOnce(1)
			d := h.store.get(id)
			if d.State != heraldtype.StateSkipped || d.LastErrorCode != tc.code {
				t.Fatalf("delivery = %s %q, want skipped %s", d.State, d.LastErrorCode, tc.code)
			}
			if called {
				t.Error("the provider was called for an unusable device")
			}
			if got := counter(h.metrics.Skipped.WithLabelValues(tc.code)); got != 1 {
				t.Errorf("skipped metric = %v, want 1", got)
			}
		})
	}
}

func TestMissingProviderIsDead(t *testing.T) {
	t.Parallel()
	h := newHarness(t, map[string]Sender{"fcm": okSender()}, nil)
	a := h.add(fakeDelivery{provider: "apns"})
	b := h.add(fakeDelivery{provider: "apns"})
	h.runOnce(2)
	for _, id := range []int64{a, b} {
		if d := h.store.get(id); d.State != heraldtype.StateDead || d.LastErrorCode != CodeNoProvider {
			t.Errorf("delivery %d = %s %q, want dead %s", id, d.State, d.LastErrorCode, CodeNoProvider)
		}
	}
}

func TestSendTimeoutIsTemporary(t *testing.T) {
	t.Parallel()
	h := newHarness(t, map[string]Sender{"fcm": senderFunc(func(ctx context.Context, _ *heraldtype.Message) (string, error) {
		<-ctx.Done()
		return "", ctx.Err()
	})}, func(c *Config) { c.SendTimeout = 20 * time.Millisecond })
	id := h.add(fakeDelivery{})
	h.runOnce(1)
	if d := h.store.get(id); d.State != heraldtype.StatePending || d.LastErrorCode != CodeTimeout {
		t.Fatalf("delivery = %s %q, want pending %s", d.State, d.LastErrorCode, CodeTimeout)
	}
}

// S4.4: an outcome for a lease this worker no longer holds changes nothing.
func TestStaleOutcomeIgnored(t *testing.T) {
	t.Parallel()
	var h *harness
	h = newHarness(t, map[string]Sender{"fcm": senderFunc(func(ctx context.Context, _ *heraldtype.Message) (string, error) {
		// While this send hangs, the lease expires, is reaped, and
		// another worker claims the delivery.
		now := h.clock.Advance(time.Hour)
		if _, err := h.store.ReapExpiredLeases(ctx, now); err != nil {
			return "", err
		}
		if _, err := h.store.Claim(ctx, storeClaim("worker-b", now, 1)); err != nil {
			return "", err
		}
		return "late", nil
	})}, nil)
	id := h.add(fakeDelivery{})
	h.runOnce(1)
	d := h.store.get(id)
	if d.State != heraldtype.StateLeased || d.LeaseOwner != "worker-b" || d.Attempt != 2 || d.ProviderMessageID != "" {
		t.Fatalf("delivery = %s owner %q attempt %d, want still leased by worker-b on attempt 2", d.State, d.LeaseOwner, d.Attempt)
	}
	if h.store.ignored != 1 {
		t.Errorf("store ignored %d outcomes, want 1", h.store.ignored)
	}
}

// A failed flush keeps its outcomes for the next one.
func TestFlushErrorKeepsOutcomes(t *testing.T) {
	t.Parallel()
	h := newHarness(t, map[string]Sender{"fcm": okSender()}, nil)
	id := h.add(fakeDelivery{})
	h.store.failComplete = 1
	if _, err := h.w.RunOnce(context.Background()); err == nil {
		t.Fatal("RunOnce hid a failed flush")
	}
	if d := h.store.get(id); d.State != heraldtype.StateLeased {
		t.Fatalf("delivery = %s, want leased until the outcome is recorded", d.State)
	}
	h.runOnce(0)
	if d := h.store.get(id); d.State != heraldtype.StateSent {
		t.Fatalf("delivery = %s, want sent after the retried flush", d.State)
	}
}

func TestAtMostOnceAmbiguousFailureIsUnknown(t *testing.T) {
	t.Parallel()
	cases := map[string]Sender{
		"timeout": senderFunc(func(ctx context.Context, _ *heraldtype.Message) (string, error) {
			<-ctx.Done()
			return "", ctx.Err()
		}),
		"network": senderFunc(func(context.Context, *heraldtype.Message) (string, error) {
			return "", errors.New("connection reset by peer")
		}),
	}
	for name, sender := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			h := newHarness(t, map[string]Sender{"fcm": sender}, func(c *Config) { c.SendTimeout = 20 * time.Millisecond })
			once := h.add(fakeDelivery{guarantee: heraldtype.AtMostOnce})
			least := h.add(fakeDelivery{guarantee: heraldtype.AtLeastOnce})
			h.runOnce(2)
			if d := h.store.get(once); d.State != heraldtype.StateUnknown {
				t.Errorf("at_most_once delivery = %s, want unknown (never resent, S1.3)", d.State)
			}
			if d := h.store.get(least); d.State != heraldtype.StatePending {
				t.Errorf("at_least_once delivery = %s, want pending (retried)", d.State)
			}
		})
	}
	// A classified answer is not ambiguous: the provider said no.
	h := newHarness(t, map[string]Sender{"fcm": scripted(sendErr(heraldtype.ClassTemporary, "UNAVAILABLE"))}, nil)
	id := h.add(fakeDelivery{guarantee: heraldtype.AtMostOnce})
	h.runOnce(1)
	if d := h.store.get(id); d.State != heraldtype.StatePending {
		t.Errorf("at_most_once UNAVAILABLE = %s, want pending", d.State)
	}
}

func TestAddressedDeliveries(t *testing.T) {
	t.Parallel()
	var got []string
	var mu sync.Mutex
	sender := senderFunc(func(_ context.Context, m *heraldtype.Message) (string, error) {
		mu.Lock()
		defer mu.Unlock()
		got = append(got, m.Address)
		switch m.Address {
		case "+15550000001":
			// Twilio 21610: the number replied STOP.
			return "", &heraldtype.SendError{Class: heraldtype.ClassPermanent, Code: "twilio_21610", Suppress: true}
		case "+15550000002":
			// A provider that marks a bad address token-invalid must not
			// touch any device: there is none.
			return "", &heraldtype.SendError{Class: heraldtype.ClassPermanent, Code: "twilio_21211", TokenInvalid: true}
		}
		return "SM1", nil
	})
	h := newHarness(t, map[string]Sender{"twilio": sender}, nil)
	ok := h.add(fakeDelivery{provider: "twilio", address: "+15550000000"})
	stop := h.add(fakeDelivery{provider: "twilio", address: "+15550000001"})
	bad := h.add(fakeDelivery{provider: "twilio", address: "+15550000002"})
	h.runOnce(3)
	if d := h.store.get(ok); d.State != heraldtype.StateSent {
		t.Errorf("sms to a good number: %s", d.State)
	}
	if d := h.store.get(stop); d.State != heraldtype.StateDead || !h.store.suppressed("+15550000001") {
		t.Errorf("STOP: %s, suppressed %v; want dead and the number suppressed", d.State, h.store.suppressed("+15550000001"))
	}
	if d := h.store.get(bad); d.State != heraldtype.StateDead || h.store.suppressed("+15550000002") {
		t.Errorf("invalid number: %s; want dead, not suppressed", d.State)
	}
	if len(got) != 3 {
		t.Fatalf("sender saw addresses %v", got)
	}
}

// A sent outcome says whether the device had failures when it was claimed,
// so the store writes a fail-count reset only when there is one to reset.
func TestSentOutcomeSaysWhetherTheDeviceWasClean(t *testing.T) {
	t.Parallel()
	h := newHarness(t, map[string]Sender{"fcm": okSender()}, nil)
	clean := h.add(fakeDelivery{})
	failing := h.add(fakeDelivery{device: &heraldtype.Device{ID: "dev-f", UserID: "u1", Platform: heraldtype.PlatformAndroid,
		Token: "tok-f", PushOptIn: true, Status: heraldtype.DeviceActive, FailCount: 2}})
	h.runOnce(2)
	h.store.mu.Lock()
	defer h.store.mu.Unlock()
	got := map[int64]bool{}
	for _, o := range h.store.recorded {
		if _, ok := o.Transition().(store.Sent); !ok {
			t.Fatalf("outcome of delivery %d = %T, want sent", o.DeliveryID, o.Transition())
		}
		got[o.DeliveryID] = !o.Row().ResetFailCount
	}
	if len(got) != 2 || !got[clean] || got[failing] {
		t.Fatalf("DeviceClean by delivery = %v, want %d clean and %d not", got, clean, failing)
	}
}
