package smtp

import (
	"fmt"
	"strconv"
	"strings"

	gosmtp "github.com/emersion/go-smtp"

	"github.com/heraldhq/herald/emulator/internal/fault"
)

// Faults is what the emulator gets wrong on purpose. Per-recipient faults
// win over rates; rates are drawn at RCPT TO in the order ServiceClosing,
// LocalError, InsufficientStorage from the seeded generator.
type Faults struct {
	// Recipients maps an address (case-insensitive) to its scripted reply.
	Recipients map[string]RecipientFault `json:"recipients,omitempty"`
	// ServiceClosing, LocalError and InsufficientStorage fail that
	// fraction of all other recipients with 421 4.3.2, 451 4.3.0 or
	// 452 4.3.1.
	ServiceClosing      RateFault `json:"service_closing"`
	LocalError          RateFault `json:"local_error"`
	InsufficientStorage RateFault `json:"insufficient_storage"`
	// LatencyMillis delays the answer to DATA this long.
	LatencyMillis int `json:"latency_ms,omitempty"`
}

// RecipientFault is the scripted reply for one recipient.
type RecipientFault struct {
	// Code is the SMTP reply code, 400..599 (e.g. 550).
	Code int `json:"code"`
	// Enhanced is the RFC 3463 enhanced status code ("5.1.1"); one
	// matching Code's class ("4.0.0" or "5.0.0") if empty.
	Enhanced string `json:"enhanced,omitempty"`
	// Message is the reply text; a generic one if empty.
	Message string `json:"message,omitempty"`
	// Times fails this many mails, then accepts; 0 fails forever.
	Times int `json:"times,omitempty"`
	// AtData replies after the mail's content (to DATA) instead of to
	// RCPT TO, as a server that scans content does.
	AtData bool `json:"at_data,omitempty"`
}

// RateFault fails a fraction of recipients.
type RateFault struct {
	// Rate is the fraction failed, 0..1.
	Rate float64 `json:"rate,omitempty"`
}

func (f RecipientFault) validate() error {
	if f.Code < 400 || f.Code > 599 {
		return fmt.Errorf("code %d is not an SMTP error reply (400..599)", f.Code)
	}
	if f.Enhanced != "" {
		if _, err := parseEnhanced(f.Enhanced, f.Code); err != nil {
			return err
		}
	}
	if strings.ContainsAny(f.Message, "\r\n") {
		return fmt.Errorf("message must be a single line")
	}
	return nil
}

// parseEnhanced parses "5.1.1" and checks that its class matches code's.
func parseEnhanced(s string, code int) (gosmtp.EnhancedCode, error) {
	parts := strings.Split(s, ".")
	var ec gosmtp.EnhancedCode
	if len(parts) != 3 {
		return ec, fmt.Errorf("enhanced status %q is not class.subject.detail", s)
	}
	for i, p := range parts {
		n, err := strconv.Atoi(p)
		if err != nil || n < 0 || n > 999 {
			return ec, fmt.Errorf("enhanced status %q is not class.subject.detail", s)
		}
		ec[i] = n
	}
	if ec[0] != code/100 {
		return ec, fmt.Errorf("enhanced status %q does not match reply code %d", s, code)
	}
	return ec, nil
}

// smtpError is the reply for f.
func (f RecipientFault) smtpError() *gosmtp.SMTPError {
	ec := gosmtp.EnhancedCode{f.Code / 100, 0, 0}
	if f.Enhanced != "" {
		ec, _ = parseEnhanced(f.Enhanced, f.Code) // validated when set
	}
	msg := f.Message
	if msg == "" {
		msg = "Scripted failure"
	}
	return &gosmtp.SMTPError{Code: f.Code, EnhancedCode: ec, Message: msg}
}

// faultSpec places the SMTP emulator's rates for its engine: rules are
// RecipientFaults kept under their lower-case address, failures are
// counted by reply code. SMTP has no Retry-After.
var faultSpec = fault.Spec[Faults, RecipientFault, int]{
	Rates:  (*Faults).rates,
	Check:  RecipientFault.validate,
	Target: strings.ToLower,
	Key:    func(rf RecipientFault) int { return rf.Code },
}

// rates are f's rates in the order they are drawn, with the replies they
// fail a recipient with.
func (f *Faults) rates() []fault.Rate[RecipientFault] {
	return []fault.Rate[RecipientFault]{
		{Name: "service_closing", Fault: fault.RateFault{Rate: f.ServiceClosing.Rate},
			Outcome: RecipientFault{Code: 421, Enhanced: "4.3.2", Message: "Service not available, closing transmission channel"}},
		{Name: "local_error", Fault: fault.RateFault{Rate: f.LocalError.Rate},
			Outcome: RecipientFault{Code: 451, Enhanced: "4.3.0", Message: "Requested action aborted: local error in processing"}},
		{Name: "insufficient_storage", Fault: fault.RateFault{Rate: f.InsufficientStorage.Rate},
			Outcome: RecipientFault{Code: 452, Enhanced: "4.3.1", Message: "Requested action not taken: insufficient system storage"}},
	}
}

// SetFaults replaces the injected faults; per-recipient counts restart.
func (e *Emulator) SetFaults(f Faults) error { return e.faults.SetFaults(f) }

// FailRecipient adds or replaces the scripted reply for addr, keeping the
// others: e.g. RecipientFault{Code: 550, Enhanced: "5.1.1", Message: "No
// such user"}.
func (e *Emulator) FailRecipient(addr string, f RecipientFault) error { return e.faults.Fail(addr, f) }

// ClearFaults removes every injected fault.
func (e *Emulator) ClearFaults() { e.faults.Clear() }

// CurrentFaults returns the injected faults.
func (e *Emulator) CurrentFaults() Faults { return e.faults.Faults() }

// pickFault decides the scripted reply for addr at RCPT TO (atData false)
// or DATA (atData true), or nil. A recipient fault's Times is consumed at
// the stage it applies to; the rates apply at RCPT TO to recipients
// without a fault of their own.
func (e *Emulator) pickFault(addr string, atData bool) *gosmtp.SMTPError {
	rf, fail := e.faults.PickStage(strings.ToLower(addr), func(rf RecipientFault) bool { return rf.AtData == atData }, !atData)
	if !fail {
		return nil
	}
	return rf.smtpError()
}
