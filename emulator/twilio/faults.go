package twilio

import (
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/heraldhq/herald/emulator/internal/fault"
)

// knownError returns the real HTTP status and message of a Twilio error
// the emulator knows (twilio.com/docs/api/errors/<code>), and false for
// another code, which a fault answers with 400 unless it names a status.
func knownError(code int) (status int, message string, ok bool) {
	switch code {
	case ErrAuthenticate:
		return http.StatusUnauthorized, "Authenticate", true
	case ErrNotFound:
		return http.StatusNotFound, "The requested resource was not found", true
	case ErrTooManyRequests:
		return http.StatusTooManyRequests, "Too Many Requests", true
	case ErrInternal:
		return http.StatusInternalServerError, "Internal Server Error", true
	case ErrServiceUnavailable:
		return http.StatusServiceUnavailable, "Service Unavailable", true
	case ErrInvalidTo:
		return http.StatusBadRequest, "Invalid 'To' Phone Number", true
	case ErrRegionNotEnabled:
		return http.StatusBadRequest, "Permission to send an SMS has not been enabled for the region indicated by the 'To' number", true
	case ErrBodyRequired:
		return http.StatusBadRequest, "Message body is required.", true
	case ErrFromRequired:
		return http.StatusBadRequest, "A 'From' or 'MessagingServiceSid' parameter is required to send a message", true
	case ErrToRequired:
		return http.StatusBadRequest, "A 'To' phone number is required.", true
	case ErrFromNotCapable:
		return http.StatusBadRequest, "The 'From' phone number provided is not a valid message-capable Twilio phone number for this destination/account", true
	case ErrUnverifiedTo:
		return http.StatusBadRequest, "The number is unverified. Trial accounts may only send messages to verified numbers.", true
	case ErrUnsubscribed:
		return http.StatusBadRequest, "Attempt to send to unsubscribed recipient", true
	case ErrUnreachable:
		return http.StatusBadRequest, "The 'To' phone number is not currently reachable via SMS", true
	case ErrNotMobile:
		return http.StatusBadRequest, "'To' number is not a valid mobile number", true
	case ErrBodyTooLong:
		return http.StatusBadRequest, "The concatenated message body exceeds the 1600 character limit", true
	case ErrLandline:
		return http.StatusBadRequest, "'To' number cannot be a landline", true
	case ErrStatusCallback:
		return http.StatusBadRequest, "Invalid StatusCallback url", true
	case ErrMessagingServiceSID:
		return http.StatusBadRequest, "The Messaging Service Sid is invalid", true
	}
	return http.StatusBadRequest, "Error " + strconv.Itoa(code), false
}

// Faults is what the emulator gets wrong on purpose. Opted-out numbers
// (OptOut) answer 21610 before any fault; per-number faults win over rates;
// rates are drawn in the order TooManyRequests, Internal, Unavailable from
// the seeded generator.
type Faults struct {
	// Numbers maps a "To" number to its injected outcome.
	Numbers map[string]NumberFault `json:"numbers,omitempty"`
	// TooManyRequests, Internal and Unavailable fail that fraction of all
	// other sends with 429/20429, 500/20500 or 503/20503.
	TooManyRequests RateFault `json:"too_many_requests"`
	Internal        RateFault `json:"internal"`
	Unavailable     RateFault `json:"unavailable"`
	// LatencyMillis delays every send (after authentication) this long.
	LatencyMillis int `json:"latency_ms,omitempty"`
}

// NumberFault is the injected outcome for one number.
type NumberFault struct {
	// Code is any Twilio error code, e.g. ErrUnsubscribed.
	Code int `json:"code"`
	// Status is the HTTP status of the answer; the code's real status if
	// zero (400 for codes the emulator does not know).
	Status int `json:"status,omitempty"`
	// Times fails this many sends, then lets sends through; 0 fails
	// forever.
	Times int `json:"times,omitempty"`
	// RetryAfterSeconds, if positive, adds a Retry-After header.
	RetryAfterSeconds int `json:"retry_after_seconds,omitempty"`
}

// RateFault fails a fraction of sends.
type RateFault = fault.RateFault

// faultSpec places the Twilio emulator's rates for its engine: rules are
// NumberFaults (without HTTP-date Retry-After), failures are counted by
// Twilio error code.
var faultSpec = fault.Spec[Faults, NumberFault, int]{
	Rates: (*Faults).rates,
	Check: checkNumberFault,
	Key:   func(nf NumberFault) int { return nf.Code },
}

// checkNumberFault rejects a code or status Twilio could not answer.
func checkNumberFault(nf NumberFault) error {
	switch {
	case nf.Code <= 0:
		return fmt.Errorf("code %d is not a Twilio error code", nf.Code)
	case nf.Status != 0 && (nf.Status < 400 || nf.Status > 599):
		return fmt.Errorf("status %d is not an HTTP error status", nf.Status)
	}
	return nil
}

// rates are f's rates in the order they are drawn.
func (f *Faults) rates() []fault.Rate[NumberFault] {
	return []fault.Rate[NumberFault]{
		{Name: "too_many_requests", Fault: f.TooManyRequests, Outcome: NumberFault{Code: ErrTooManyRequests}},
		{Name: "internal", Fault: f.Internal, Outcome: NumberFault{Code: ErrInternal}},
		{Name: "unavailable", Fault: f.Unavailable, Outcome: NumberFault{Code: ErrServiceUnavailable}},
	}
}

// SetFaults replaces the injected faults; per-number failure counts restart.
func (e *Emulator) SetFaults(f Faults) error { return e.faults.SetFaults(f) }

// FailNumber adds or replaces the fault of one number, keeping the others.
func (e *Emulator) FailNumber(number string, f NumberFault) error { return e.faults.Fail(number, f) }

// ClearFaults removes every injected fault. Opt-outs stay.
func (e *Emulator) ClearFaults() { e.faults.Clear() }

// CurrentFaults returns the injected faults.
func (e *Emulator) CurrentFaults() Faults { return e.faults.Faults() }

// OptOut simulates the person at number texting STOP: from now on every
// message to it is refused with 21610, as Twilio does, until OptIn.
func (e *Emulator) OptOut(number string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.optedOut[number] = true
}

// OptIn simulates the person texting START after a STOP.
func (e *Emulator) OptIn(number string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	delete(e.optedOut, number)
}

// optOut is the fault of an opted-out number: 21610, as Twilio answers.
var optOut = NumberFault{Code: ErrUnsubscribed}

// pickFault decides whether the send to number fails: an opted-out
// number always does, before any injected fault.
func (e *Emulator) pickFault(number string, now time.Time) (fault.Injected[NumberFault], bool) {
	e.mu.Lock()
	opted := e.optedOut[number]
	e.mu.Unlock()
	if opted {
		return e.faults.Pick(number, now, &optOut)
	}
	return e.faults.Pick(number, now, nil)
}

// writeFault answers an injected fault.
func writeFault(w http.ResponseWriter, inj fault.Injected[NumberFault]) {
	fault.WriteRetryAfter(w.Header(), inj.RetryAfter, false, time.Time{})
	writeTwilioError(w, inj.Outcome.Code, inj.Outcome.Status, "")
}

// writeTwilioError answers Twilio's error JSON for code. status 0 means the
// code's real status; detail, if set, is appended to the message as Twilio
// does for the recipient errors ("Invalid 'To' Phone Number: +1555").
func writeTwilioError(w http.ResponseWriter, code, status int, detail string) {
	realStatus, msg, _ := knownError(code)
	if status == 0 {
		status = realStatus
	}
	if detail != "" {
		msg += ": " + detail
	}
	writeJSON(w, status, apiError{
		Code: code, Message: msg, Status: status,
		MoreInfo: "https://www.twilio.com/docs/errors/" + strconv.Itoa(code),
	})
}
