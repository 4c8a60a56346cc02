package apns

import (
	"fmt"
	"net/http"
	"time"

	"github.com/heraldhq/herald/emulator/internal/fault"
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
type RateFault = fault.RateFault

// faultSpec places the APNs emulator's rates for its engine: rules are
// TokenFaults, failures are counted by reason.
var faultSpec = fault.Spec[Faults, TokenFault, string]{
	Rates: (*Faults).rates,
	Check: checkReason,
	Key:   func(tf TokenFault) string { return tf.Reason },
}

// checkReason rejects a reason APNs does not have.
func checkReason(tf TokenFault) error {
	if status, _ := reasonStatus(tf.Reason); status == 0 {
		return fmt.Errorf("unknown APNs reason %q", tf.Reason)
	}
	return nil
}

// rates are f's rates in the order they are drawn.
func (f *Faults) rates() []fault.Rate[TokenFault] {
	return []fault.Rate[TokenFault]{
		{Name: "too_many_requests", Fault: f.TooManyRequests, Outcome: TokenFault{Reason: ReasonTooManyRequests}},
		{Name: "internal_server_error", Fault: f.InternalServerError, Outcome: TokenFault{Reason: ReasonInternalServerError}},
		{Name: "service_unavailable", Fault: f.ServiceUnavailable, Outcome: TokenFault{Reason: ReasonServiceUnavailable}},
	}
}

// SetFaults replaces the injected faults; per-token failure counts restart.
func (e *Emulator) SetFaults(f Faults) error { return e.faults.SetFaults(f) }

// FailToken adds or replaces the fault of one device token, keeping the
// others.
func (e *Emulator) FailToken(token string, f TokenFault) error {
	return fault.RuleError("tokens", token, e.faults.Fail(token, f))
}

// ClearFaults removes every injected fault.
func (e *Emulator) ClearFaults() { e.faults.Clear() }

// CurrentFaults returns the injected faults.
func (e *Emulator) CurrentFaults() Faults { return e.faults.Faults() }

// writeFault answers an injected fault as APNs would, with the apns-id of
// the request.
func (e *Emulator) writeFault(w http.ResponseWriter, inj fault.Injected[TokenFault], now time.Time) {
	fault.WriteRetryAfter(w.Header(), inj.RetryAfter, inj.HTTPDate, now)
	e.writeReason(w, inj.Outcome.Reason, now)
}
