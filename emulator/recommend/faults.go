package recommend

import (
	"fmt"
	"net/http"
	"slices"
	"time"

	"github.com/heraldhq/herald/emulator/internal/fault"
)

// Faults is what the emulator gets wrong on purpose. A campaign's fault
// wins over the rates; rates are drawn in the order Internal, Unavailable
// from the seeded generator.
type Faults struct {
	// Campaigns maps a campaign name to the status its fetches answer.
	Campaigns map[string]CampaignFault `json:"campaigns,omitempty"`
	// Internal and Unavailable fail that fraction of all other calls with
	// 500 or 503.
	Internal    RateFault `json:"internal"`
	Unavailable RateFault `json:"unavailable"`
	// OmitUsers are left out of every answer, as a recommendation service
	// with nothing for a user does (Herald counts them fetch_failed).
	OmitUsers []string `json:"omit_users,omitempty"`
	// LatencyMillis delays every call this long (longer than a
	// campaign's fetch.timeout makes the fetch time out).
	LatencyMillis int `json:"latency_ms,omitempty"`
}

// CampaignFault is the injected answer to one campaign's fetches.
type CampaignFault struct {
	// Status is the HTTP error status answered (400–599).
	Status int `json:"status"`
	// Times fails this many calls, then lets calls through; 0 fails
	// forever.
	Times int `json:"times,omitempty"`
	// RetryAfterSeconds, if positive, adds a Retry-After header.
	RetryAfterSeconds int `json:"retry_after_seconds,omitempty"`
}

// RateFault fails a fraction of calls.
type RateFault = fault.RateFault

// faultSpec places the emulator's rules for the shared engine: rules are
// CampaignFaults, failures are counted by HTTP status.
var faultSpec = fault.Spec[Faults, CampaignFault, int]{
	Rates: (*Faults).rates,
	Check: func(cf CampaignFault) error {
		if cf.Status < 400 || cf.Status > 599 {
			return fmt.Errorf("status %d is not an HTTP error status (400–599)", cf.Status)
		}
		return nil
	},
	Valid: func(f *Faults) error {
		if f.LatencyMillis < 0 {
			return fmt.Errorf("latency_ms must not be negative")
		}
		if slices.Contains(f.OmitUsers, "") {
			return fmt.Errorf("omit_users: an empty user id")
		}
		return nil
	},
	Key: func(cf CampaignFault) int { return cf.Status },
}

// rates are f's rates in the order they are drawn.
func (f *Faults) rates() []fault.Rate[CampaignFault] {
	return []fault.Rate[CampaignFault]{
		{Name: "internal", Fault: f.Internal, Outcome: CampaignFault{Status: http.StatusInternalServerError}},
		{Name: "unavailable", Fault: f.Unavailable, Outcome: CampaignFault{Status: http.StatusServiceUnavailable}},
	}
}

// SetFaults replaces the injected faults; per-campaign failure counts
// restart.
func (e *Emulator) SetFaults(f Faults) error { return e.faults.SetFaults(f) }

// FailCampaign adds or replaces the fault of one campaign, keeping the
// others.
func (e *Emulator) FailCampaign(campaign string, f CampaignFault) error {
	return e.faults.Fail(campaign, f)
}

// ClearFaults removes every injected fault.
func (e *Emulator) ClearFaults() { e.faults.Clear() }

// CurrentFaults returns the injected faults.
func (e *Emulator) CurrentFaults() Faults { return e.faults.Faults() }

// writeFault answers an injected fault.
func writeFault(w http.ResponseWriter, inj fault.Injected[CampaignFault]) {
	fault.WriteRetryAfter(w.Header(), inj.RetryAfter, false, time.Time{})
	writeError(w, inj.Outcome.Status, "injected fault: "+http.StatusText(inj.Outcome.Status))
}
