package webpush

import (
	"fmt"
	"net/http"
	"strconv"
	"time"
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
type RateFault struct {
	// Rate is the fraction of pushes failed, 0..1.
	Rate float64 `json:"rate,omitempty"`
	// RetryAfterSeconds, if positive, adds a Retry-After header.
	RetryAfterSeconds int `json:"retry_after_seconds,omitempty"`
}

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

// validate rejects faults the emulator could not inject.
func (f *Faults) validate() error {
	for sub, sf := range f.Subscriptions {
		if _, _, ok := faultAnswer(sf.Status); !ok {
			return fmt.Errorf("subscriptions[%q]: status %d cannot be injected (use 400, 401, 403, 404, 410, 413, 429, 500, 502 or 503)", sub, sf.Status)
		}
		if sf.Times < 0 || sf.RetryAfterSeconds < 0 {
			return fmt.Errorf("subscriptions[%q]: times and retry_after_seconds must not be negative", sub)
		}
	}
	for name, rf := range map[string]RateFault{"too_many_requests": f.TooManyRequests, "internal_error": f.InternalError, "unavailable": f.Unavailable} {
		if rf.Rate < 0 || rf.Rate > 1 || rf.RetryAfterSeconds < 0 {
			return fmt.Errorf("%s: rate must be in 0..1 and retry_after_seconds not negative", name)
		}
	}
	if f.TooManyRequests.Rate+f.InternalError.Rate+f.Unavailable.Rate > 1 {
		return fmt.Errorf("the rates add up to more than 1")
	}
	if f.LatencyMillis < 0 {
		return fmt.Errorf("latency_ms must not be negative")
	}
	return nil
}

// SetFaults replaces the injected faults; per-subscription failure counts
// restart.
func (e *Emulator) SetFaults(f Faults) error {
	if err := f.validate(); err != nil {
		return err
	}
	subs := make(map[string]SubscriptionFault, len(f.Subscriptions))
	for k, v := range f.Subscriptions {
		subs[subscriptionID(k)] = v
	}
	f.Subscriptions = subs
	e.mu.Lock()
	defer e.mu.Unlock()
	e.faults = f
	clear(e.remaining)
	for id, sf := range f.Subscriptions {
		e.remaining[id] = sf.Times
	}
	return nil
}

// FailSubscription adds or replaces the fault of one subscription (its
// endpoint URL or id), keeping the others.
func (e *Emulator) FailSubscription(endpoint string, f SubscriptionFault) error {
	one := Faults{Subscriptions: map[string]SubscriptionFault{endpoint: f}}
	if err := one.validate(); err != nil {
		return err
	}
	id := subscriptionID(endpoint)
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.faults.Subscriptions == nil {
		e.faults.Subscriptions = make(map[string]SubscriptionFault)
	}
	e.faults.Subscriptions[id] = f
	e.remaining[id] = f.Times
	return nil
}

// ClearFaults removes every injected fault.
func (e *Emulator) ClearFaults() {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.faults = Faults{}
	clear(e.remaining)
}

// CurrentFaults returns the injected faults, subscriptions keyed by id.
func (e *Emulator) CurrentFaults() Faults {
	e.mu.Lock()
	defer e.mu.Unlock()
	f := e.faults
	f.Subscriptions = make(map[string]SubscriptionFault, len(e.faults.Subscriptions))
	for k, v := range e.faults.Subscriptions {
		f.Subscriptions[k] = v
	}
	return f
}

// injected is a fault chosen for one push.
type injected struct {
	status     int
	retryAfter int // seconds, 0 for none
	httpDate   bool
}

// pickFault decides whether the push to subscription id fails, and notes
// the Retry-After it will carry; e.mu must be held.
func (e *Emulator) pickFault(id string, now time.Time) (injected, bool) {
	var inj injected
	if sf, ok := e.faults.Subscriptions[id]; ok {
		left := e.remaining[id]
		switch {
		case sf.Times == 0:
			inj = injected{sf.Status, sf.RetryAfterSeconds, sf.RetryAfterHTTPDate}
		case left > 0:
			e.remaining[id] = left - 1
			inj = injected{sf.Status, sf.RetryAfterSeconds, sf.RetryAfterHTTPDate}
		}
	}
	if inj.status == 0 {
		f := &e.faults
		if r1, r2, r3 := f.TooManyRequests.Rate, f.InternalError.Rate, f.Unavailable.Rate; r1+r2+r3 > 0 {
			x := e.rng.Float64()
			switch {
			case x < r1:
				inj = injected{status: http.StatusTooManyRequests, retryAfter: f.TooManyRequests.RetryAfterSeconds}
			case x < r1+r2:
				inj = injected{status: http.StatusInternalServerError, retryAfter: f.InternalError.RetryAfterSeconds}
			case x < r1+r2+r3:
				inj = injected{status: http.StatusServiceUnavailable, retryAfter: f.Unavailable.RetryAfterSeconds}
			}
		}
	}
	if inj.status == 0 {
		return inj, false
	}
	e.notBefore.Note(id, now, inj.retryAfter, inj.httpDate)
	return inj, true
}

// writeFault answers an injected fault.
func writeFault(w http.ResponseWriter, inj injected, now time.Time) {
	if inj.retryAfter > 0 {
		v := strconv.Itoa(inj.retryAfter)
		if inj.httpDate {
			v = now.Add(time.Duration(inj.retryAfter) * time.Second).UTC().Format(http.TimeFormat)
		}
		w.Header().Set("Retry-After", v)
	}
	errno, msg, _ := faultAnswer(inj.status)
	writeError(w, inj.status, errno, msg)
}

// writeError answers in Mozilla autopush's error shape
// {code, errno, error, message}.
func writeError(w http.ResponseWriter, status, errno int, message string) {
	writeJSON(w, status, map[string]any{
		"code": status, "errno": errno, "error": http.StatusText(status), "message": message,
	})
}
