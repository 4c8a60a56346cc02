package apns

import (
	"fmt"
	"net/http"
	"strconv"
	"time"
)

// Faults is what the emulator gets wrong on purpose. Per-token faults win
// over rates; rates are drawn in the order TooManyRequests,
// InternalServerError, ServiceUnavailable from the seeded generator.
type Faults struct {
	// Tokens maps a device token to its injected outcome.
	Tokens map[string]TokenFault `json:"tokens,omitempty"`
	// TooManyRequests, InternalServerError and ServiceUnavailable fail
	// that fraction of all other sends with 429, 500 or 503.
	TooManyRequests     RateFault `json:"too_many_requests"`
	InternalServerError RateFault `json:"internal_server_error"`
	ServiceUnavailable  RateFault `json:"service_unavailable"`
	// LatencyMillis delays every send (after authentication) this long.
	LatencyMillis int `json:"latency_ms,omitempty"`
}

// TokenFault is the injected outcome for one device token.
type TokenFault struct {
	// Reason is any APNs reason (the Reason* constants); it is answered
	// with its HTTP status, and 410s with a timestamp, as APNs does.
	Reason string `json:"reason"`
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
		if status, _ := reasonStatus(tf.Reason); status == 0 {
			return fmt.Errorf("tokens[%q]: unknown APNs reason %q", tok, tf.Reason)
		}
		if tf.Times < 0 || tf.RetryAfterSeconds < 0 {
			return fmt.Errorf("tokens[%q]: times and retry_after_seconds must not be negative", tok)
		}
	}
	rates := []struct {
		name string
		rf   RateFault
	}{{"too_many_requests", f.TooManyRequests}, {"internal_server_error", f.InternalServerError}, {"service_unavailable", f.ServiceUnavailable}}
	total := 0.0
	for _, r := range rates {
		if r.rf.Rate < 0 || r.rf.Rate > 1 || r.rf.RetryAfterSeconds < 0 {
			return fmt.Errorf("%s: rate must be in 0..1 and retry_after_seconds not negative", r.name)
		}
		total += r.rf.Rate
	}
	if total > 1 {
		return fmt.Errorf("the rates add up to more than 1")
	}
	if f.LatencyMillis < 0 {
		return fmt.Errorf("latency_ms must not be negative")
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
	return nil
}

// FailToken adds or replaces the fault of one device token, keeping the
// others.
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
	return f
}

// injected is a fault chosen for one send.
type injected struct {
	reason     string
	retryAfter int // seconds, 0 for none
	httpDate   bool
}

// pickFault decides whether the send to token fails, and notes the
// Retry-After it will carry; e.mu must be held.
func (e *Emulator) pickFault(token string, now time.Time) (injected, bool) {
	var inj injected
	if tf, ok := e.faults.Tokens[token]; ok {
		left := e.remaining[token]
		switch {
		case tf.Times == 0:
			inj = injected{tf.Reason, tf.RetryAfterSeconds, tf.RetryAfterHTTPDate}
		case left > 0:
			e.remaining[token] = left - 1
			inj = injected{tf.Reason, tf.RetryAfterSeconds, tf.RetryAfterHTTPDate}
		}
	}
	if inj.reason == "" {
		f := &e.faults
		if f.TooManyRequests.Rate+f.InternalServerError.Rate+f.ServiceUnavailable.Rate > 0 {
			x := e.rng.Float64()
			switch {
			case x < f.TooManyRequests.Rate:
				inj = injected{reason: ReasonTooManyRequests, retryAfter: f.TooManyRequests.RetryAfterSeconds}
			case x < f.TooManyRequests.Rate+f.InternalServerError.Rate:
				inj = injected{reason: ReasonInternalServerError, retryAfter: f.InternalServerError.RetryAfterSeconds}
			case x < f.TooManyRequests.Rate+f.InternalServerError.Rate+f.ServiceUnavailable.Rate:
				inj = injected{reason: ReasonServiceUnavailable, retryAfter: f.ServiceUnavailable.RetryAfterSeconds}
			}
		}
	}
	if inj.reason == "" {
		return inj, false
	}
	e.notBefore.Note(token, now, inj.retryAfter, inj.httpDate)
	return inj, true
}

// writeFault answers an injected fault as APNs would, with the apns-id of
// the request.
func (e *Emulator) writeFault(w http.ResponseWriter, inj injected, now time.Time) {
	if inj.retryAfter > 0 {
		v := strconv.Itoa(inj.retryAfter)
		if inj.httpDate {
			v = now.Add(time.Duration(inj.retryAfter) * time.Second).UTC().Format(http.TimeFormat)
		}
		w.Header().Set("Retry-After", v)
	}
	e.writeReason(w, inj.reason, now)
}
