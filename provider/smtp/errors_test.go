package smtp

import (
	"context"
	"errors"
	"net"
	"net/textproto"
	"strings"
	"testing"
	"time"

	smtpemu "github.com/heraldhq/herald/emulator/smtp"
	"github.com/heraldhq/herald/heraldtype"
)

// TestErrorTable drives SMTP replies through the emulator and checks the
// classification: 4xx temporary, 5xx permanent, 5.1.1 suppressed (issue 5
// item 4).
func TestErrorTable(t *testing.T) {
	t.Parallel()
	e := startEmulator(t, smtpemu.Config{})
	c := newTestClient(t, e, nil)
	perm, tmp := heraldtype.ClassPermanent, heraldtype.ClassTemporary
	tests := []struct {
		name     string
		fault    smtpemu.RecipientFault
		class    heraldtype.ErrorClass
		suppress bool
	}{
		{"user unknown", smtpemu.RecipientFault{Code: 550, Enhanced: "5.1.1", Message: "No such user"}, perm, true},
		{"null MX", smtpemu.RecipientFault{Code: 556, Enhanced: "5.1.10", Message: "Domain does not accept mail"}, perm, true},
		{"bare 550", smtpemu.RecipientFault{Code: 550, Message: "Mailbox unavailable"}, perm, false},
		{"policy", smtpemu.RecipientFault{Code: 550, Enhanced: "5.7.1", Message: "Relaying denied"}, perm, false},
		{"user not local", smtpemu.RecipientFault{Code: 551, Enhanced: "5.1.6", Message: "User not local"}, perm, false},
		{"mailbox full", smtpemu.RecipientFault{Code: 552, Enhanced: "5.2.2", Message: "Mailbox full"}, perm, false},
		{"bad syntax", smtpemu.RecipientFault{Code: 553, Enhanced: "5.1.3", Message: "Bad address syntax"}, perm, false},
		{"content refused", smtpemu.RecipientFault{Code: 554, Enhanced: "5.7.1", Message: "Spam", AtData: true}, perm, false},
		{"unknown at DATA", smtpemu.RecipientFault{Code: 550, Enhanced: "5.1.1", AtData: true}, perm, true},
		{"service closing", smtpemu.RecipientFault{Code: 421, Enhanced: "4.3.2"}, tmp, false},
		{"greylisted", smtpemu.RecipientFault{Code: 450, Enhanced: "4.2.1", Message: "Try again later"}, tmp, false},
		{"local error", smtpemu.RecipientFault{Code: 451, Enhanced: "4.3.0"}, tmp, false},
		{"storage", smtpemu.RecipientFault{Code: 452, Enhanced: "4.3.1"}, tmp, false},
		{"temporary at DATA", smtpemu.RecipientFault{Code: 451, Enhanced: "4.7.1", AtData: true}, tmp, false},
	}
	for i, tt := range tests {
		addr := "user" + string(rune('a'+i)) + "@example.com"
		if err := e.FailRecipient(addr, tt.fault); err != nil {
			t.Fatal(err)
		}
		se := sendErr(t, c, message(addr))
		if se.Class != tt.class || se.Code != Code(tt.fault.Code) || se.Suppress != tt.suppress || se.TokenInvalid {
			t.Errorf("%s: got class=%s code=%s suppress=%v (%q), want class=%s code=%s suppress=%v",
				tt.name, se.Class, se.Code, se.Suppress, se.Message, tt.class, Code(tt.fault.Code), tt.suppress)
		}
		if tt.fault.Enhanced != "" && !strings.Contains(se.Message, tt.fault.Enhanced) {
			t.Errorf("%s: message %q lacks the enhanced code", tt.name, se.Message)
		}
	}
	if n := len(e.Messages()); n != 0 {
		t.Errorf("%d failed mails recorded", n)
	}
	if st := e.Stats(); st.Rejected[550] != 4 || st.Rejected[451] != 2 {
		t.Errorf("stats %+v", st)
	}
}

// TestRecipientFaultTimes: a fault with Times fails that many mails, then
// the recipient is accepted, as a greylisting server does.
func TestRecipientFaultTimes(t *testing.T) {
	t.Parallel()
	e := startEmulator(t, smtpemu.Config{})
	c := newTestClient(t, e, nil)
	if err := e.FailRecipient("Grey@Example.com", smtpemu.RecipientFault{Code: 450, Enhanced: "4.2.0", Times: 1}); err != nil {
		t.Fatal(err)
	}
	if se := sendErr(t, c, message("grey@example.com")); se.Class != heraldtype.ClassTemporary {
		t.Fatalf("%+v", se)
	}
	if _, err := c.Send(context.Background(), message("grey@example.com")); err != nil {
		t.Fatal(err)
	}
}

func TestClassifyDialErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		err      error
		class    heraldtype.ErrorClass
		code     string
		suppress bool
	}{
		{"421 greeting", &textproto.Error{Code: 421, Msg: "4.3.2 Too many connections"}, heraldtype.ClassTemporary, "smtp_421", false},
		{"535 auth", errors.Join(errors.New("SMTP AUTH failed"), &textproto.Error{Code: 535, Msg: "5.7.8 Authentication failed"}), heraldtype.ClassPermanent, "smtp_535", false},
		{"454 auth", &textproto.Error{Code: 454, Msg: "4.7.0 Temporary authentication failure"}, heraldtype.ClassTemporary, "smtp_454", false},
		{"no STARTTLS", errors.New(`STARTTLS mode set to: "TLSMandatory", but target host does not support STARTTLS`), heraldtype.ClassPermanent, codeConfig, false},
		{"no AUTH", errors.New("server does not support SMTP AUTH"), heraldtype.ClassPermanent, codeConfig, false},
		{"reset", errors.New("read tcp: connection reset by peer"), heraldtype.ClassTemporary, codeNetwork, false},
		{"deadline", context.DeadlineExceeded, heraldtype.ClassTemporary, codeNetwork, false},
	}
	for _, tt := range tests {
		se := classify(tt.err)
		if se.Class != tt.class || se.Code != tt.code || se.Suppress != tt.suppress {
			t.Errorf("%s: %+v", tt.name, se)
		}
	}
	for text, want := range map[string]string{
		"5.1.1 No such user": "5.1.1", "sending RCPT: 550 5.1.10 null MX": "5.1.10",
		"No such user": "", "version 1.2.3": "", "5.1": "",
	} {
		if got := enhancedCode(text); got != want {
			t.Errorf("enhancedCode(%q) = %q, want %q", text, got, want)
		}
	}
}

func TestNetworkErrorIsTemporary(t *testing.T) {
	t.Parallel()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().(*net.TCPAddr)
	l.Close()
	c, err := New(Config{Host: "127.0.0.1", Port: addr.Port, TLS: TLSNone, From: "a@b.example", Timeout: 2 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	se := sendErr(t, c, message(testTo))
	if se.Class != heraldtype.ClassTemporary || se.Code != codeNetwork {
		t.Fatalf("%+v", se)
	}
}

// TestSlowServerTimesOut: a server slower than Timeout is a temporary
// failure.
func TestSlowServerTimesOut(t *testing.T) {
	t.Parallel()
	e := startEmulator(t, smtpemu.Config{})
	if err := e.SetFaults(smtpemu.Faults{LatencyMillis: 1500}); err != nil {
		t.Fatal(err)
	}
	c := newTestClient(t, e, func(c *Config) { c.Timeout = 300 * time.Millisecond })
	se := sendErr(t, c, message(testTo))
	if se.Class != heraldtype.ClassTemporary {
		t.Fatalf("%+v", se)
	}
}
