package webhook

import (
	"fmt"
	"net/http"
	"time"

	"github.com/heraldhq/herald/emulator/internal/fault"
)

// Faults is what the receiver gets wrong on purpose. A path's fault wins
// over the rates; rates are drawn in the order Internal, Unavailable.
type Faults struct {
	// Paths maps a request path ("/hooks/crm") to the status its messages
	// are answered with; one emulator serves many endpoints, one per path.
	Paths map[string]PathFault `json:"paths,omitempty"`
	// Internal and Unavailable fail that fraction of all other messages
	// with 500 or 503.
	Internal    RateFault `json:"internal"`
	Unavailable RateFault `json:"unavailable"`
	// Down closes every connection without an answer, as a receiver that
	// is not running (a sender sees a connection error, not a status).
	Down bool `json:"down,omitempty"`
	// LatencyMillis delays every answer this long (longer than the
	// sender's timeout makes its attempts time out).
	LatencyMillis int `json:"latency_ms,omitempty"`
}

// PathFault is the injected answer to one path's messages.
type PathFault struct {
	// Status is the HTTP status answered: an error (400–599; 410 Gone
	// asks the sender to stop) or a redirect (300–399), which a sender
	// must treat as a failure and never follow.
	Status int `json:"status"`
	// Times fails this many messages, then lets messages through; 0 fails
	// forever.
	Times int `json:"times,omitempty"`
	// RetryAfterSeconds, if positive, adds a Retry-After header; a message
	// to the path before it passes counts as an early retry.
	RetryAfterSeconds int `json:"retry_after_seconds,omitempty"`
}

// RateFault fails a fraction of messages.
type RateFault = fault.RateFault

var faultSpec = fault.Spec[Faults, PathFault, int]{
	Rates: (*Faults).rates,
	Check: func(pf PathFault) error {
		if pf.Status < 300 || pf.Status > 599 {
			return fmt.Errorf("status %d is neither a redirect nor an error status (300–599)", pf.Status)
		}
		return nil
	},
	Key: func(pf PathFault) int { return pf.Status },
}

func (f *Faults) rates() []fault.Rate[PathFault] {
	return []fault.Rate[PathFault]{
		{Name: "internal", Fault: f.Internal, Outcome: PathFault{Status: http.StatusInternalServerError}},
		{Name: "unavailable", Fault: f.Unavailable, Outcome: PathFault{Status: http.StatusServiceUnavailable}},
	}
}

// SetFaults replaces the injected faults; per-path failure counts restart.
func (e *Emulator) SetFaults(f Faults) error { return e.faults.SetFaults(f) }

// FailPath adds or replaces the fault of one path, keeping the others.
func (e *Emulator) FailPath(path string, f PathFault) error { return e.faults.Fail(path, f) }

// ClearFaults removes every injected fault.
func (e *Emulator) ClearFaults() { e.faults.Clear() }

// CurrentFaults returns the injected faults.
func (e *Emulator) CurrentFaults() Faults { return e.faults.Faults() }

// writeFault answers an injected fault; a redirect points at the root, a
// place a sender that followed it would not find the message welcome.
func writeFault(w http.ResponseWriter, inj fault.Injected[PathFault]) {
	fault.WriteRetryAfter(w.Header(), inj.RetryAfter, false, time.Time{})
	if inj.Outcome.Status < 400 {
		w.Header().Set("Location", "/redirected")
	}
	writeError(w, inj.Outcome.Status, "injected fault: "+http.StatusText(inj.Outcome.Status))
}
