package fcm

import (
	"fmt"
	"net/http"
	"strconv"
	"time"
)

// Fault codes an Emulator can inject besides FCM's own error codes
// (CodeUnregistered, CodeInvalidArgument, CodeSenderIDMismatch,
// CodeThirdPartyAuthError, CodeQuotaExceeded, CodeUnavailable,
// CodeInternal), each answered with the body real FCM sends.
const (
	// FaultInvalidToken: 400 INVALID_ARGUMENT "The registration token is
	// not a valid FCM registration token" (a malformed token).
	FaultInvalidToken = "INVALID_TOKEN"
	// FaultUnauthenticated: 401 UNAUTHENTICATED without FcmError, as when
	// the access token is refused.
	FaultUnauthenticated = CodeUnauthenticated
	// FaultProjectQuota: 429 RESOURCE_EXHAUSTED with google.rpc.ErrorInfo
	// only, as FCM answers a project over its per-minute quota.
	FaultProjectQuota = "PROJECT_QUOTA"
	// FaultBadGateway: 502 with an HTML body, as from Google's front end.
	FaultBadGateway = "BAD_GATEWAY"
)

// Faults is what the emulator gets wrong on purpose. Per-token faults win
// over rates; rates are drawn in the order UNAVAILABLE, INTERNAL,
// QUOTA_EXCEEDED from the seeded generator.
type Faults struct {
	// Tokens maps a registration token to its injected outcome.
	Tokens map[string]TokenFault `json:"tokens,omitempty"`
	// Unavailable, Internal and QuotaExceeded fail that fraction of all
	// other sends with 503 UNAVAILABLE, 500 INTERNAL or 429 QUOTA_EXCEEDED.
	Unavailable   RateFault `json:"unavailable"`
	Internal      RateFault `json:"internal"`
	QuotaExceeded RateFault `json:"quota_exceeded"`
	// LatencyMillis delays every send (after authentication) this long.
	LatencyMillis int `json:"latency_ms,omitempty"`
	// TokenEndpointFailures fails the next this many POST /token requests
	// with 503.
	TokenEndpointFailures int `json:"token_endpoint_failures,omitempty"`
}

// TokenFault is the injected outcome for one token.
type TokenFault struct {
	// Code is an FCM error code or one of the Fault* codes.
	Code string `json:"code"`
	// Times fails this many sends, then lets sends through; 0 fails
	// forever.
	Times int `json:"times,omitempty"`
	// RetryAfterSeconds, if positive, adds a Retry-After header.
	RetryAfterSeconds int `json:"retry_after_seconds,omitempty"`
	// RetryAfterHTTPDate writes Retry-After as an HTTP-date instead of
	// seconds.
	RetryAfterHTTPDate bool `json:"retry_after_http_date,omitempty"`
}

// RateFault fails a fraction of sends.
type RateFault struct {
	// Rate is the fraction of sends failed, 0..1.
	Rate float64 `json:"rate,omitempty"`
	// RetryAfterSeconds, if positive, adds a Retry-After header.
	RetryAfterSeconds int `json:"retry_after_seconds,omitempty"`
}

// validate rejects faults the emulator could not inject.
func (f *Faults) validate() error {
	for tok, tf := range f.Tokens {
		if _, ok := faultError(tf.Code); !ok {
			return fmt.Errorf("tokens[%q]: unknown fault code %q", tok, tf.Code)
		}
		if tf.Times < 0 || tf.RetryAfterSeconds < 0 {
			return fmt.Errorf("tokens[%q]: times and retry_after_seconds must not be negative", tok)
		}
	}
	for name, rf := range map[string]RateFault{"unavailable": f.Unavailable, "internal": f.Internal, "quota_exceeded": f.QuotaExceeded} {
		if rf.Rate < 0 || rf.Rate > 1 || rf.RetryAfterSeconds < 0 {
			return fmt.Errorf("%s: rate must be in 0..1 and retry_after_seconds not negative", name)
		}
	}
	if f.Unavailable.Rate+f.Internal.Rate+f.QuotaExceeded.Rate > 1 {
		return fmt.Errorf("the rates add up to more than 1")
	}
	if f.LatencyMillis < 0 || f.TokenEndpointFailures < 0 {
		return fmt.Errorf("latency_ms and token_endpoint_failures must not be negative")
	}
	return nil
}

// SetFaults replaces the injected faults; per-token failure counts restart.
func (e *Emulator) SetFaults(f Faults) error {
	if err := f.validate(); err != nil {
		return err
	}
	tokens := make(map[string]TokenFault, len(f.Tokens))
	for k, v := range f.Tokens {
		tokens[k] = v
	}
	f.Tokens = tokens
	e.mu.Lock()
	defer e.mu.Unlock()
	e.faults = f
	clear(e.remaining)
	for tok, tf := range f.Tokens {
		e.remaining[tok] = tf.Times
	}
	e.tokenFail = f.TokenEndpointFailures
	return nil
}

// FailToken adds or replaces the fault of one token, keeping the others.
func (e *Emulator) FailToken(token string, f TokenFault) error {
	one := Faults{Tokens: map[string]TokenFault{token: f}}
	if err := one.validate(); err != nil {
		return err
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.faults.Tokens == nil {
		e.faults.Tokens = make(map[string]TokenFault)
	}
	e.faults.Tokens[token] = f
	e.remaining[token] = f.Times
	return nil
}

// ClearFaults removes every injected fault.
func (e *Emulator) ClearFaults() {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.faults = Faults{}
	clear(e.remaining)
	e.tokenFail = 0
}

// CurrentFaults returns the injected faults.
func (e *Emulator) CurrentFaults() Faults {
	e.mu.Lock()
	defer e.mu.Unlock()
	f := e.faults
	f.Tokens = make(map[string]TokenFault, len(e.faults.Tokens))
	for k, v := range e.faults.Tokens {
		f.Tokens[k] = v
	}
	f.TokenEndpointFailures = e.tokenFail
	return f
}

// injected is a fault chosen for one send.
type injected struct {
	code       string
	retryAfter int // seconds, 0 for none
	httpDate   bool
}

// pickFault decides whether the send to token fails, and notes the
// Retry-After it will carry; e.mu must be held.
func (e *Emulator) pickFault(token string, now time.Time) (injected, bool) {
	var inj injected
	if tf, ok := e.faults.Tokens[token]; ok && token != "" {
		left := e.remaining[token]
		switch {
		case tf.Times == 0:
			inj = injected{tf.Code, tf.RetryAfterSeconds, tf.RetryAfterHTTPDate}
		case left > 0:
			e.remaining[token] = left - 1
			inj = injected{tf.Code, tf.RetryAfterSeconds, tf.RetryAfterHTTPDate}
		}
	}
	if inj.code == "" {
		f := &e.faults
		if f.Unavailable.Rate+f.Internal.Rate+f.QuotaExceeded.Rate > 0 {
			x := e.rng.Float64()
			switch {
			case x < f.Unavailable.Rate:
				inj = injected{code: CodeUnavailable, retryAfter: f.Unavailable.RetryAfterSeconds}
			case x < f.Unavailable.Rate+f.Internal.Rate:
				inj = injected{code: CodeInternal, retryAfter: f.Internal.RetryAfterSeconds}
			case x < f.Unavailable.Rate+f.Internal.Rate+f.QuotaExceeded.Rate:
				inj = injected{code: CodeQuotaExceeded, retryAfter: f.QuotaExceeded.RetryAfterSeconds}
			}
		}
	}
	if inj.code == "" {
		return inj, false
	}
	if token != "" { // topic and condition sends have no target to track
		e.notBefore.Note(token, now, inj.retryAfter, inj.httpDate)
	}
	return inj, true
}

// writeFault answers an injected fault.
func (e *Emulator) writeFault(w http.ResponseWriter, inj injected, now time.Time) {
	if inj.retryAfter > 0 {
		v := strconv.Itoa(inj.retryAfter)
		if inj.httpDate {
			v = now.Add(time.Duration(inj.retryAfter) * time.Second).UTC().Format(http.TimeFormat)
		}
		w.Header().Set("Retry-After", v)
	}
	if inj.code == FaultBadGateway {
		w.Header().Set("Content-Type", "text/html; charset=UTF-8")
		w.WriteHeader(http.StatusBadGateway)
		w.Write([]byte(badGatewayHTML)) //nolint:errcheck // the client hung up; nothing to do.
		return
	}
	ge, _ := faultError(inj.code)
	writeGoogleError(w, ge)
}

// reject counts an error answer.
func (e *Emulator) reject(code string) {
	e.mu.Lock()
	e.stats.Rejected[code]++
	e.mu.Unlock()
}

const badGatewayHTML = `<!DOCTYPE html>
<html lang=en>
  <meta charset=utf-8>
  <title>Error 502 (Server Error)!!1</title>
  <p><b>502.</b> <ins>That’s an error.</ins>
  <p>The server encountered a temporary error and could not complete your request.<p>Please try again in 30 seconds.  <ins>That’s all we know.</ins>
`
