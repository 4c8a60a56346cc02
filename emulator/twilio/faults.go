package twilio

import (
	"fmt"
	"net/http"
	"strconv"
	"time"
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
type RateFault struct {
	// Rate is the fraction of sends failed, 0..1.
	Rate float64 `json:"rate,omitempty"`
	// RetryAfterSeconds, if positive, adds a Retry-After header.
	RetryAfterSeconds int `json:"retry_after_seconds,omitempty"`
}

// validate rejects faults the emulator could not inject.
func (f *Faults) validate() error {
	for num, nf := range f.Numbers {
		if err := nf.validate(); err != nil {
			return fmt.Errorf("numbers[%q]: %w", num, err)
		}
	}
	for name, rf := range map[string]RateFault{"too_many_requests": f.TooManyRequests, "internal": f.Internal, "unavailable": f.Unavailable} {
		if rf.Rate < 0 || rf.Rate > 1 || rf.RetryAfterSeconds < 0 {
			return fmt.Errorf("%s: rate must be in 0..1 and retry_after_seconds not negative", name)
		}
	}
	if f.TooManyRequests.Rate+f.Internal.Rate+f.Unavailable.Rate > 1 {
		return fmt.Errorf("the rates add up to more than 1")
	}
	if f.LatencyMillis < 0 {
		return fmt.Errorf("latency_ms must not be negative")
	}
	return nil
}

func (nf NumberFault) validate() error {
	switch {
	case nf.Code <= 0:
		return fmt.Errorf("code %d is not a Twilio error code", nf.Code)
	case nf.Status != 0 && (nf.Status < 400 || nf.Status > 599):
		return fmt.Errorf("status %d is not an HTTP error status", nf.Status)
	case nf.Times < 0 || nf.RetryAfterSeconds < 0:
		return fmt.Errorf("times and retry_after_seconds must not be negative")
	}
	return nil
}

// SetFaults replaces the injected faults; per-number failure counts restart.
func (e *Emulator) SetFaults(f Faults) error {
	if err := f.validate(); err != nil {
		return err
	}
	numbers := make(map[string]NumberFault, len(f.Numbers))
	for k, v := range f.Numbers {
		numbers[k] = v
	}
	f.Numbers = numbers
	e.mu.Lock()
	defer e.mu.Unlock()
	e.faults = f
	clear(e.remaining)
	for num, nf := range f.Numbers {
		e.remaining[num] = nf.Times
	}
	return nil
}

// FailNumber adds or replaces the fault of one number, keeping the others.
func (e *Emulator) FailNumber(number string, f NumberFault) error {
	if err := f.validate(); err != nil {
		return err
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.faults.Numbers == nil {
		e.faults.Numbers = make(map[string]NumberFault)
	}
	e.faults.Numbers[number] = f
	e.remaining[number] = f.Times
	return nil
}

// ClearFaults removes every injected fault. Opt-outs stay.
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
	f.Numbers = make(map[string]NumberFault, len(e.faults.Numbers))
	for k, v := range e.faults.Numbers {
		f.Numbers[k] = v
	}
	return f
}

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

// injected is a fault chosen for one send.
type injected struct {
	code       int
	status     int
	retryAfter int // seconds, 0 for none
}

// pickFault decides whether the send to number fails, and notes the
// Retry-After it will carry; e.mu must be held.
func (e *Emulator) pickFault(number string, now time.Time) (injected, bool) {
	var inj injected
	if e.optedOut[number] {
		return injected{code: ErrUnsubscribed}, true
	}
	if nf, ok := e.faults.Numbers[number]; ok {
		left := e.remaining[number]
		switch {
		case nf.Times == 0:
			inj = injected{nf.Code, nf.Status, nf.RetryAfterSeconds}
		case left > 0:
			e.remaining[number] = left - 1
			inj = injected{nf.Code, nf.Status, nf.RetryAfterSeconds}
		}
	}
	if inj.code == 0 {
		f := &e.faults
		if f.TooManyRequests.Rate+f.Internal.Rate+f.Unavailable.Rate > 0 {
			x := e.rng.Float64()
			switch {
			case x < f.TooManyRequests.Rate:
				inj = injected{code: ErrTooManyRequests, retryAfter: f.TooManyRequests.RetryAfterSeconds}
			case x < f.TooManyRequests.Rate+f.Internal.Rate:
				inj = injected{code: ErrInternal, retryAfter: f.Internal.RetryAfterSeconds}
			case x < f.TooManyRequests.Rate+f.Internal.Rate+f.Unavailable.Rate:
				inj = injected{code: ErrServiceUnavailable, retryAfter: f.Unavailable.RetryAfterSeconds}
			}
		}
	}
	if inj.code == 0 {
		return inj, false
	}
	e.notBefore.Note(number, now, inj.retryAfter, false)
	return inj, true
}

// writeFault answers an injected fault.
func writeFault(w http.ResponseWriter, inj injected) {
	if inj.retryAfter > 0 {
		w.Header().Set("Retry-After", strconv.Itoa(inj.retryAfter))
	}
	writeTwilioError(w, inj.code, inj.status, "")
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
