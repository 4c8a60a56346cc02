package webpush

import (
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/heraldhq/herald/emulator/internal/fault"
)

// Faults is what the emulator gets wrong on purpose. Per-subscription
// faults win over rates; rates are drawn in the order TooManyRequests,
// InternalError, Unavailable from the seeded generator. Injected faults
// are answered after the VAPID check, like a real service's.
type Faults struct {
	// Subscriptions maps a subscription (its endpoint URL or id) to its
	// injected outcome.
	Subscriptions map[string]SubscriptionFault `json:"subscriptions,omitempty"`
	// TooManyRequests, InternalError and Unavailable fail that fraction
	// of all other pushes with 429, 500 or 503.
	TooManyRequests RateFault `json:"too_many_requests"`
	InternalError   RateFault `json:"internal_error"`
	Unavailable     RateFault `json:"unavailable"`
	// LatencyMillis delays every push (after the VAPID check) this long.
	LatencyMillis int `json:"latency_ms,omitempty"`
}

// SubscriptionFault is the injected outcome for one subscription.
type SubscriptionFault struct {
	// Status is the HTTP status answered: 400, 401, 403, 404, 410, 413,
	// 429, 500, 502 or 503, each with the body a push service sends.
	Status int `json:"status"`
	// Times fails this many pushes, then lets pushes through; 0 fails
	// forever.
	Times int `json:"times,omitempty"`
	// RetryAfterSeconds, if positive, adds a Retry-After header.
	RetryAfterSeconds int `json:"retry_after_seconds,omitempty"`
	// RetryAfterHTTPDate writes Retry-After as an HTTP-date instead of
	// seconds.
	RetryAfterHTTPDate bool `json:"retry_after_http_date,omitempty"`
}

// RateFault fails a fraction of pushes.
type RateFault = fault.RateFault

// faultAnswer returns, for a status a fault can inject, the errno and
// message of Mozilla autopush's error JSON; ok is false for any other
// status.
func faultAnswer(status int) (errno int, message string, ok bool) {
	switch status {
	case http.StatusBadRequest:
		return 110, "Request did not validate: invalid request", true
	case http.StatusUnauthorized:
		return 109, "Request did not validate: invalid VAPID credentials", true
	case http.StatusForbidden:
		return 109, "Request did not validate: VAPID key does not match the subscription", true
	case http.StatusNotFound:
		return 102, "Request did not validate: invalid token", true
	case http.StatusGone:
		return 103, "Request did not validate: no such subscription", true
	case http.StatusRequestEntityTooLarge:
		return 104, "Request did not validate: message payload too large", true
	case http.StatusTooManyRequests:
		return 999, "Too many requests", true
	case http.StatusInternalServerError:
		return 999, "Internal server error", true
	case http.StatusBadGateway:
		return 999, "Bad gateway", true
	case http.StatusServiceUnavailable:
		return 201, "Service unavailable", true
	}
	return 0, "", false
}

// faultSpec places the Web Push emulator's rates for its engine: rules
// are SubscriptionFaults kept under their subscription's id (a rule set
// for an endpoint URL too), failures are counted as "fault_<status>".
var faultSpec = fault.Spec[Faults, SubscriptionFault, string]{
	Rates:  (*Faults).rates,
	Check:  checkStatus,
	Target: subscriptionID,
	Key:    func(sf SubscriptionFault) string { return "fault_" + strconv.Itoa(sf.Status) },
}

// checkStatus rejects a status the emulator cannot answer.
func checkStatus(sf SubscriptionFault) error {
	if _, _, ok := faultAnswer(sf.Status); !ok {
		return fmt.Errorf("status %d cannot be injected (use 400, 401, 403, 404, 410, 413, 429, 500, 502 or 503)", sf.Status)
	}
	return nil
}

// rates are f's rates in the order they are drawn.
func (f *Faults) rates() []fault.Rate[SubscriptionFault] {
	return []fault.Rate[SubscriptionFault]{
		{Name: "too_many_requests", Fault: f.TooManyRequests, Outcome: SubscriptionFault{Status: http.StatusTooManyRequests}},
		{Name: "internal_error", Fault: f.InternalError, Outcome: SubscriptionFault{Status: http.StatusInternalServerError}},
		{Name: "unavailable", Fault: f.Unavailable, Outcome: SubscriptionFault{Status: http.StatusServiceUnavailable}},
	}
}

// SetFaults replaces the injected faults; per-subscription failure counts
// restart.
func (e *Emulator) SetFaults(f Faults) error { return e.faults.SetFaults(f) }

// FailSubscription adds or replaces the fault of one subscription (its
// endpoint URL or id), keeping the others.
func (e *Emulator) FailSubscription(endpoint string, f SubscriptionFault) error {
	return fault.RuleError("subscriptions", endpoint, e.faults.Fail(endpoint, f))
}

// ClearFaults removes every injected fault.
func (e *Emulator) ClearFaults() { e.faults.Clear() }

// CurrentFaults returns the injected faults, subscriptions keyed by id.
func (e *Emulator) CurrentFaults() Faults { return e.faults.Faults() }

// writeFault answers an injected fault.
func writeFault(w http.ResponseWriter, inj fault.Injected[SubscriptionFault], now time.Time) {
	fault.WriteRetryAfter(w.Header(), inj.RetryAfter, inj.HTTPDate, now)
	errno, msg, _ := faultAnswer(inj.Outcome.Status)
	writeError(w, inj.Outcome.Status, errno, msg)
}

// writeError answers in Mozilla autopush's error shape
// {code, errno, error, message}.
func writeError(w http.ResponseWriter, status, errno int, message string) {
	writeJSON(w, status, map[string]any{
		"code": status, "errno": errno, "error": http.StatusText(status), "message": message,
	})
}
