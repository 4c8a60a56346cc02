package dispatch

import (
	"errors"
	"fmt"
	"math"
	"time"
)

// RetryPolicy is the backoff schedule of one error class.
//
// The delay after failed attempt n (1-based) is
//
//	d(n) = min(Max, Base · Factor^(n-1))
//
// With Jitter, the delay is drawn uniformly from [d(n), min(Max, 1.5·d(n))]:
// jitter only ever adds time. That keeps Base a true minimum (QUOTA_EXCEEDED
// must wait at least 60 s, PROTOCOLS.md) and Max a true cap, while
// deliveries that failed together drift apart; once they reach the cap they
// stay apart, because each retry is scheduled from its own failure time.
// Without Jitter the schedule is exact, so seed 004's "1 s → 2 s → 4 s, 3
// retries" (S4.3) is {Base: 1s, Factor: 2} with MaxAttempts 4.
//
// A provider's Retry-After is applied on top: the worker never retries
// earlier than it (S0.3).
type RetryPolicy struct {
	// Base is the delay after the first failed attempt. Required.
	Base time.Duration
	// Max caps every delay; zero means 15 minutes.
	Max time.Duration
	// Factor multiplies the delay per attempt; zero means 2.
	Factor float64
	// Jitter spreads delays upward by up to 50 %.
	Jitter bool
}

func (p RetryPolicy) withDefaults() (RetryPolicy, error) {
	if p.Base <= 0 {
		return p, fmt.Errorf("Base must be positive, got %s", p.Base)
	}
	if p.Factor == 0 {
		p.Factor = defaultRetryFactor
	}
	if p.Factor < 1 || math.IsNaN(p.Factor) || math.IsInf(p.Factor, 0) {
		return p, fmt.Errorf("Factor must be a finite number >= 1, got %v", p.Factor)
	}
	if p.Max == 0 {
		p.Max = max(defaultRetryMax, p.Base)
	}
	if p.Max < p.Base {
		return p, errors.New("Max must not be shorter than Base")
	}
	return p, nil
}

// Delay returns the wait before retrying after failed attempt n, with r in
// [0, 1) the jitter draw (ignored without Jitter).
func (p RetryPolicy) Delay(n int, r float64) time.Duration {
	n = max(n, 1)
	d := float64(p.Base) * math.Pow(p.Factor, float64(n-1))
	if math.IsNaN(d) || d > float64(p.Max) {
		d = float64(p.Max)
	}
	if p.Jitter {
		r = min(max(r, 0), 1)
		d = min(d*(1+r/2), float64(p.Max))
	}
	return time.Duration(d)
}

// errorBackoff is the wait before retrying a failing store call from a
// loop: it doubles from errorBackoffMin to errorBackoffMax so a database
// outage is neither hammered nor waited out for long once it recovers.
func errorBackoff(prev time.Duration) time.Duration {
	if prev <= 0 {
		return errorBackoffMin
	}
	return min(prev*2, errorBackoffMax)
}

const (
	errorBackoffMin = 50 * time.Millisecond
	errorBackoffMax = 10 * time.Second
)
