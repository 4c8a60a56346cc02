package fcm

import (
	"fmt"
	"net/http"
	"time"

	"github.com/heraldhq/herald/emulator/internal/fault"
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
type RateFault = fault.RateFault

// faultSpec places the FCM emulator's rates for its engine: rules are
// TokenFaults, failures are counted by code. Rates are drawn in the order
// UNAVAILABLE, INTERNAL, QUOTA_EXCEEDED.
var faultSpec = fault.Spec[Faults, TokenFault, string]{
	Rates: func(f *Faults) []fault.Rate[TokenFault] {
		return []fault.Rate[TokenFault]{
			{Name: "unavailable", Fault: f.Unavailable, Outcome: TokenFault{Code: CodeUnavailable}},
			{Name: "internal", Fault: f.Internal, Outcome: TokenFault{Code: CodeInternal}},
			{Name: "quota_exceeded", Fault: f.QuotaExceeded, Outcome: TokenFault{Code: CodeQuotaExceeded}},
		}
	},
	Valid: func(f *Faults) error {
		if f.LatencyMillis < 0 || f.TokenEndpointFailures < 0 {
			return fmt.Errorf("latency_ms and token_endpoint_failures must not be negative")
		}
		return nil
	},
	Check: func(tf TokenFault) error {
		if _, ok := faultError(tf.Code); !ok {
			return fmt.Errorf("unknown fault code %q", tf.Code)
		}
		return nil
	},
	Key: func(tf TokenFault) string { return tf.Code },
}

// SetFaults replaces the injected faults; per-token failure counts restart.
// The token endpoint's failures are the emulator's own, not the engine's.
func (e *Emulator) SetFaults(f Faults) error {
	if err := e.faults.SetFaults(f); err != nil {
		return err
	}
	e.mu.Lock()
	e.tokenFail = f.TokenEndpointFailures
	e.mu.Unlock()
	return nil
}

// FailToken adds or replaces the fault of one token, keeping the others.
func (e *Emulator) FailToken(token string, f TokenFault) error {
	return fault.RuleError("tokens", token, e.faults.Fail(token, f))
}

// ClearFaults removes every injected fault.
func (e *Emulator) ClearFaults() {
	e.faults.Clear()
	e.mu.Lock()
	e.tokenFail = 0
	e.mu.Unlock()
}

// CurrentFaults returns the injected faults.
func (e *Emulator) CurrentFaults() Faults {
	f := e.faults.Faults()
	e.mu.Lock()
	f.TokenEndpointFailures = e.tokenFail
	e.mu.Unlock()
	return f
}

// writeFault answers an injected fault.
func writeFault(w http.ResponseWriter, inj fault.Injected[TokenFault], now time.Time) {
	fault.WriteRetryAfter(w.Header(), inj.RetryAfter, inj.HTTPDate, now)
	if inj.Outcome.Code == FaultBadGateway {
		w.Header().Set("Content-Type", "text/html; charset=UTF-8")
		w.WriteHeader(http.StatusBadGateway)
		w.Write([]byte(badGatewayHTML)) //nolint:errcheck // the client hung up; nothing to do.
		return
	}
	ge, _ := faultError(inj.Outcome.Code)
	writeGoogleError(w, ge)
}

const badGatewayHTML = `<!DOCTYPE html>
<html lang=en>
  <meta charset=utf-8>
  <title>Error 502 (Server Error)!!1</title>
  <p><b>502.</b> <ins>That’s an error.</ins>
  <p>The server encountered a temporary error and could not complete your request.<p>Please try again in 30 seconds.  <ins>That’s all we know.</ins>
`
