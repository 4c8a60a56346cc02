package heraldtype

import (
	"math"
	"time"
)

// RetryPolicy is the backoff schedule of one error class (S0.3, S4.3);
// the delivery worker applies it.
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
