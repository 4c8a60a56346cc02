package smtp

import (
	"fmt"
	"strconv"
	"strings"

	gosmtp "github.com/emersion/go-smtp"
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
	if f.Times < 0 {
		return fmt.Errorf("times must not be negative")
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

func (f *Faults) validate() error {
	for addr, rf := range f.Recipients {
		if err := rf.validate(); err != nil {
			return fmt.Errorf("recipients[%q]: %w", addr, err)
		}
	}
	for name, r := range map[string]RateFault{"service_closing": f.ServiceClosing, "local_error": f.LocalError, "insufficient_storage": f.InsufficientStorage} {
		if r.Rate < 0 || r.Rate > 1 {
			return fmt.Errorf("%s: rate must be in 0..1", name)
		}
	}
	if f.ServiceClosing.Rate+f.LocalError.Rate+f.InsufficientStorage.Rate > 1 {
		return fmt.Errorf("the rates add up to more than 1")
	}
	if f.LatencyMillis < 0 {
		return fmt.Errorf("latency_ms must not be negative")
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

// SetFaults replaces the injected faults; per-recipient counts restart.
func (e *Emulator) SetFaults(f Faults) error {
	if err := f.validate(); err != nil {
		return err
	}
	recips := make(map[string]RecipientFault, len(f.Recipients))
	for k, v := range f.Recipients {
		recips[strings.ToLower(k)] = v
	}
	f.Recipients = recips
	e.mu.Lock()
	defer e.mu.Unlock()
	e.faults = f
	clear(e.remaining)
	for addr, rf := range recips {
		e.remaining[addr] = rf.Times
	}
	return nil
}

// FailRecipient adds or replaces the scripted reply for addr, keeping the
// others: e.g. RecipientFault{Code: 550, Enhanced: "5.1.1", Message: "No
// such user"}.
func (e *Emulator) FailRecipient(addr string, f RecipientFault) error {
	if err := f.validate(); err != nil {
		return err
	}
	addr = strings.ToLower(addr)
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.faults.Recipients == nil {
		e.faults.Recipients = make(map[string]RecipientFault)
	}
	e.faults.Recipients[addr] = f
	e.remaining[addr] = f.Times
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
	f.Recipients = make(map[string]RecipientFault, len(e.faults.Recipients))
	for k, v := range e.faults.Recipients {
		f.Recipients[k] = v
	}
	return f
}

// pickFault decides the scripted reply for addr at RCPT TO (atData false)
// or DATA (atData true), or nil. A recipient fault's Times is consumed at
// the stage it applies to.
func (e *Emulator) pickFault(addr string, atData bool) *gosmtp.SMTPError {
	addr = strings.ToLower(addr)
	e.mu.Lock()
	defer e.mu.Unlock()
	if rf, ok := e.faults.Recipients[addr]; ok {
		if rf.AtData != atData {
			return nil
		}
		switch left := e.remaining[addr]; {
		case rf.Times == 0:
			return rf.smtpError()
		case left > 0:
			e.remaining[addr] = left - 1
			return rf.smtpError()
		}
		return nil
	}
	if atData {
		return nil
	}
	f := &e.faults
	if f.ServiceClosing.Rate+f.LocalError.Rate+f.InsufficientStorage.Rate == 0 {
		return nil
	}
	switch x := e.rng.Float64(); {
	case x < f.ServiceClosing.Rate:
		return &gosmtp.SMTPError{Code: 421, EnhancedCode: gosmtp.EnhancedCode{4, 3, 2}, Message: "Service not available, closing transmission channel"}
	case x < f.ServiceClosing.Rate+f.LocalError.Rate:
		return &gosmtp.SMTPError{Code: 451, EnhancedCode: gosmtp.EnhancedCode{4, 3, 0}, Message: "Requested action aborted: local error in processing"}
	case x < f.ServiceClosing.Rate+f.LocalError.Rate+f.InsufficientStorage.Rate:
		return &gosmtp.SMTPError{Code: 452, EnhancedCode: gosmtp.EnhancedCode{4, 3, 1}, Message: "Requested action not taken: insufficient system storage"}
	}
	return nil
}
