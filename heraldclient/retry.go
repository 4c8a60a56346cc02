package heraldclient

import (
	"context"
	"errors"
	"math/rand/v2"
	"net/http"
	"strconv"
	"time"
)

// RetryPolicy says how often and how patiently a call that is safe to
// repeat is tried again after a connection failure or an answer of 429,
// 502, 503 or 504.
//
// Safe to repeat are GET, PUT and DELETE; a POST that carries an
// Idempotency-Key (every Trigger); PostEvent with an event id (the server
// applies an event id once); and the POSTs whose repetition changes
// nothing: registering a device (an upsert by device id), a heartbeat,
// marking inbox items read, archiving one, a rule's dry run. Any other
// POST (RecordInterests, RunCampaign, the replays, …) is sent once: a
// failure is returned to the caller, who knows whether repeating it is
// right.
type RetryPolicy struct {
	// Attempts is the most tries of one call, the first included: 1 turns
	// retries off.
	Attempts int
	// BaseBackoff is the wait before the second try; each further wait
	// doubles, up to MaxBackoff, and is drawn at random from its upper
	// half (jitter), so clients that failed together do not return
	// together.
	BaseBackoff time.Duration
	// MaxBackoff bounds every wait, a server's Retry-After included.
	MaxBackoff time.Duration
}

// DefaultRetryPolicy: 4 tries, waiting about 0.2 s, 0.4 s, 0.8 s (or what
// Retry-After says, up to 30 s).
var DefaultRetryPolicy = RetryPolicy{Attempts: 4, BaseBackoff: 200 * time.Millisecond, MaxBackoff: 30 * time.Second}

// backoff is the wait after the n-th failed try: the server's
// Retry-After when it gave one, else the exponential backoff with jitter;
// never more than MaxBackoff.
func (p RetryPolicy) backoff(n int, retryAfter time.Duration) time.Duration {
	if retryAfter > 0 {
		return min(retryAfter, p.MaxBackoff)
	}
	d := p.BaseBackoff
	for i := 1; i < n && d < p.MaxBackoff; i++ {
		d *= 2
	}
	d = min(d, p.MaxBackoff)
	half := d / 2
	return half + rand.N(half+1)
}

// retryable reports whether a failed try may be repeated: a connection
// failure (not the caller's context ending), or an answer that says to
// come back: 429, 502, 503, 504.
func retryable(ctx context.Context, err error) bool {
	if ctx.Err() != nil {
		return false
	}
	var te *transportError
	if errors.As(err, &te) {
		return !errors.Is(err, context.Canceled) && !errors.Is(err, context.DeadlineExceeded)
	}
	var e *Error
	return errors.As(err, &e) && comeBackStatus(e.StatusCode)
}

// comeBackStatus reports an answer that says to come back later: 429,
// 502, 503, 504 — for a retried call and for the inbox stream alike.
func comeBackStatus(code int) bool {
	switch code {
	case http.StatusTooManyRequests, http.StatusBadGateway, http.StatusServiceUnavailable, http.StatusGatewayTimeout:
		return true
	}
	return false
}

// retryAfterOf is the Retry-After of an *Error, zero otherwise.
func retryAfterOf(err error) time.Duration {
	var e *Error
	if errors.As(err, &e) {
		return e.RetryAfter
	}
	return 0
}

// parseRetryAfter reads a Retry-After header: delay-seconds or an HTTP
// date (RFC 9110 10.2.3). Zero when absent, malformed or past.
func parseRetryAfter(v string, now time.Time) time.Duration {
	if v == "" {
		return 0
	}
	if s, err := strconv.ParseInt(v, 10, 64); err == nil {
		if s <= 0 {
			return 0
		}
		if s > int64(24*time.Hour/time.Second) {
			s = int64(24 * time.Hour / time.Second)
		}
		return time.Duration(s) * time.Second
	}
	if t, err := http.ParseTime(v); err == nil && t.After(now) {
		return t.Sub(now)
	}
	return 0
}
