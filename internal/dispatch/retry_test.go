package dispatch

import (
	"strings"
	"testing"
	"time"

	"github.com/heraldhq/herald/heraldtype"
)

func TestRetryPolicyDelay(t *testing.T) {
	t.Parallel()
	def := DefaultRetry()
	temp, quota := def[heraldtype.ClassTemporary], def[heraldtype.ClassThrottled]
	for _, tc := range []struct {
		name    string
		p       heraldtype.RetryPolicy
		attempt int
		r       float64
		want    time.Duration
	}{
		// S0.3: 5 s, ×2, cap 15 min.
		{"temporary 1", temp, 1, 0, 5 * time.Second},
		{"temporary 2", temp, 2, 0, 10 * time.Second},
		{"temporary 4", temp, 4, 0, 40 * time.Second},
		{"temporary capped", temp, 9, 0, 15 * time.Minute},
		{"temporary huge attempt", temp, 10_000, 0, 15 * time.Minute},
		{"temporary full jitter", temp, 1, 1, 7500 * time.Millisecond},
		{"temporary jitter never passes the cap", temp, 8, 1, 15 * time.Minute},
		{"attempt 0 counts as 1", temp, 0, 0, 5 * time.Second},
		// PROTOCOLS.md: QUOTA_EXCEEDED minimum 60 s.
		{"quota 1", quota, 1, 0, time.Minute},
		{"quota 2 jittered", quota, 2, 0.5, 150 * time.Second},
		// S4.3: seed 004, no jitter.
		{"seed 004 #3", heraldtype.RetryPolicy{Base: time.Second, Factor: 2, Max: time.Hour}, 3, 0.9, 4 * time.Second},
	} {
		if got := tc.p.Delay(tc.attempt, tc.r); got != tc.want {
			t.Errorf("%s: Delay(%d, %v) = %s, want %s", tc.name, tc.attempt, tc.r, got, tc.want)
		}
	}
}

// Jitter only adds time, at most half, and never passes the cap.
func TestRetryPolicyJitterBounds(t *testing.T) {
	t.Parallel()
	p := DefaultRetry()[heraldtype.ClassTemporary]
	for attempt := 1; attempt <= 12; attempt++ {
		lo := p.Delay(attempt, 0)
		for _, r := range []float64{0, 0.1, 0.5, 0.9, 0.999999} {
			d := p.Delay(attempt, r)
			if d < lo || d > lo+lo/2 || d > p.Max {
				t.Errorf("attempt %d r %v: %s outside [%s, min(%s, %s)]", attempt, r, d, lo, lo+lo/2, p.Max)
			}
		}
	}
}

func TestConfigValidation(t *testing.T) {
	t.Parallel()
	s := newFakeStore()
	for _, tc := range []struct {
		name string
		cfg  Config
		want string
	}{
		{"no store", Config{}, "Store is required"},
		{"nil sender", Config{Store: s, Senders: map[string]Sender{"fcm": nil}}, `Senders["fcm"] is nil`},
		{"negative batch", Config{Store: s, BatchSize: -1}, "BatchSize"},
		{"negative lease", Config{Store: s, LeaseDuration: -time.Second}, "LeaseDuration"},
		{"lease not longer than send", Config{Store: s, LeaseDuration: time.Second, SendTimeout: time.Second}, "longer than SendTimeout"},
		{"lease not longer than send and margin", Config{Store: s, LeaseDuration: 3 * time.Second, SendTimeout: 2 * time.Second,
			OutcomeMargin: time.Second}, "longer than SendTimeout + OutcomeMargin"},
		{"negative margin", Config{Store: s, OutcomeMargin: -time.Second}, "OutcomeMargin"},
		{"permanent retry", Config{Store: s, Retry: map[heraldtype.ErrorClass]heraldtype.RetryPolicy{heraldtype.ClassPermanent: {Base: time.Second}}}, "not retryable"},
		{"zero base", Config{Store: s, Retry: map[heraldtype.ErrorClass]heraldtype.RetryPolicy{heraldtype.ClassTemporary: {}}}, "Base must be positive"},
		{"shrinking factor", Config{Store: s, Retry: map[heraldtype.ErrorClass]heraldtype.RetryPolicy{heraldtype.ClassTemporary: {Base: time.Second, Factor: 0.5}}}, "Factor"},
		{"max below base", Config{Store: s, Retry: map[heraldtype.ErrorClass]heraldtype.RetryPolicy{heraldtype.ClassTemporary: {Base: time.Minute, Max: time.Second}}}, "Max"},
	} {
		_, err := New(tc.cfg)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: New error = %v, want one mentioning %q", tc.name, err, tc.want)
		}
	}

	w, err := New(Config{Store: s})
	if err != nil {
		t.Fatalf("New with defaults: %v", err)
	}
	c := w.cfg
	if c.BatchSize != DefaultBatchSize || c.Concurrency != DefaultConcurrency || c.LeaseDuration != DefaultLeaseDuration ||
		c.SendTimeout != DefaultSendTimeout || c.PollInterval != DefaultPollInterval ||
		c.FlushInterval != DefaultFlushInterval || c.FlushSize != DefaultFlushSize || c.Owner == "" ||
		c.OutcomeMargin != DefaultOutcomeMargin {
		t.Errorf("defaults not applied: %+v", c)
	}
	// A short lease keeps a usable margin: half of what the send timeout
	// leaves of it.
	if short, err := New(Config{Store: s, LeaseDuration: 3 * time.Second, SendTimeout: 2 * time.Second}); err != nil {
		t.Errorf("short lease: %v", err)
	} else if short.cfg.OutcomeMargin != 500*time.Millisecond {
		t.Errorf("short lease: margin %s, want 500ms", short.cfg.OutcomeMargin)
	}
	if c.Retry[heraldtype.ClassThrottled].Base != time.Minute {
		t.Errorf("throttled base = %s, want the 60 s default", c.Retry[heraldtype.ClassThrottled].Base)
	}
}

func TestErrorBackoff(t *testing.T) {
	t.Parallel()
	d := errorBackoff(0)
	if d != errorBackoffMin {
		t.Fatalf("first = %s, want %s", d, errorBackoffMin)
	}
	for range 20 {
		next := errorBackoff(d)
		if next < d || next > errorBackoffMax {
			t.Fatalf("errorBackoff(%s) = %s: must grow up to %s", d, next, errorBackoffMax)
		}
		d = next
	}
	if d != errorBackoffMax {
		t.Errorf("backoff settles at %s, want %s", d, errorBackoffMax)
	}
}
