package smtp

import (
	"bufio"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/heraldhq/herald/heraldtype"
)

// Issue 21 item 2: the reply texts of the major mailbox providers and
// servers. A mailbox that does not exist is suppressed whether or not the
// enhanced code came through ENHANCEDSTATUSCODES; a policy, spam or
// mailbox-full refusal never is.
func TestNoSuchMailboxWording(t *testing.T) {
	for _, tc := range []struct {
		name     string
		code     int
		text     string
		suppress bool
	}{
		{"Gmail", 550, "5.1.1 The email account that you tried to reach does not exist. Please try double-checking the recipient's email address for typos", true},
		{"Gmail, multi-line marker", 550, "550-5.1.1 The email account that you tried to reach does not exist.", true},
		{"Microsoft 365", 550, "5.1.10 RESOLVER.ADR.RecipientNotFound; Recipient not found by SMTP address lookup", true},
		{"Outlook.com", 550, "5.5.0 Requested action not taken: mailbox unavailable (S2017062302)", false},
		{"Yahoo", 554, "delivery error: dd This user doesn't have a yahoo.com account (someone@yahoo.com) [0] - mta1234.mail.yahoo.com", false},
		{"Yahoo at 550", 550, "delivery error: dd This user doesn't have a yahoo.com account", true},
		{"iCloud", 550, "5.1.1 <someone@icloud.com>: user does not exist", true},
		{"Postfix", 550, "5.1.1 <someone@example.com>: Recipient address rejected: User unknown in local recipient table", true},
		{"Postfix, no enhanced codes", 550, "<someone@example.com>: Recipient address rejected: User unknown in local recipient table", true},
		{"Exim", 550, "No such user here", true},
		{"Sendmail", 550, "<someone@example.com>... User unknown", true},
		{"qmail", 553, "sorry, no mailbox here by that name. (#5.1.1)", true},
		{"quoted by a library", 550, `failed to set recipient: "5.1.1 no such user"`, true},
		{"551 not local", 551, "User not local; please try <other@example.com>", false},
		{"553 no such user", 553, "Recipient address rejected: no such user", true},
		{"policy", 550, "5.7.1 Service unavailable; client host blocked using Spamhaus", false},
		{"policy without codes", 550, "User unknown or blocked by policy", false},
		{"spam", 550, "Message rejected as spam: user unknown", false},
		{"mailbox full", 552, "5.2.2 mailbox full", false},
		{"mailbox full, wording", 550, "5.2.2 The email account that you tried to reach is over quota", false},
		{"bare 550", 550, "Mailbox unavailable", false},
		{"temporary", 450, "4.2.1 The user you are trying to contact is receiving mail too quickly", false},
		{"554 generic", 554, "Transaction failed", false},
	} {
		if got := noSuchMailbox(tc.code, "", tc.text); got != tc.suppress {
			t.Errorf("%s: %d %q: suppress %v, want %v", tc.name, tc.code, tc.text, got, tc.suppress)
		}
	}
	// The enhanced code a server reports through ENHANCEDSTATUSCODES wins
	// over the wording.
	if noSuchMailbox(550, "5.7.1", "user unknown") || !noSuchMailbox(550, "5.1.1", "rejected") {
		t.Error("the reported enhanced code did not decide")
	}
}

// fakeSMTP is a minimal SMTP server that, unlike the emulator, does not
// advertise ENHANCEDSTATUSCODES (as many do not) but does advertise
// SMTPUTF8; it answers RCPT TO with rcptReply and records the MAIL FROM
// commands.
type fakeSMTP struct {
	ln        net.Listener
	rcptReply string
	mu        sync.Mutex
	mailFrom  []string
}

func startFakeSMTP(t *testing.T, rcptReply string) *fakeSMTP {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	f := &fakeSMTP{ln: ln, rcptReply: rcptReply}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go f.serve(c)
		}
	}()
	return f
}

func (f *fakeSMTP) serve(c net.Conn) {
	defer c.Close()
	c.SetDeadline(time.Now().Add(10 * time.Second))
	r := bufio.NewReader(c)
	w := func(s string) { c.Write([]byte(s + "\r\n")) }
	w("220 fake.example ESMTP")
	for {
		line, err := r.ReadString('\n')
		if err != nil {
			return
		}
		line = strings.TrimRight(line, "\r\n")
		verb := strings.ToUpper(strings.SplitN(line, " ", 2)[0])
		switch {
		case verb == "EHLO":
			w("250-fake.example")
			w("250-8BITMIME")
			w("250 SMTPUTF8")
		case verb == "MAIL":
			f.mu.Lock()
			f.mailFrom = append(f.mailFrom, line)
			f.mu.Unlock()
			w("250 OK")
		case verb == "RCPT":
			if strings.Contains(line, "good") {
				w("250 OK")
			} else {
				w(f.rcptReply)
			}
		case verb == "DATA":
			w("354 go ahead")
			for {
				l, err := r.ReadString('\n')
				if err != nil || l == ".\r\n" {
					break
				}
			}
			w("250 queued")
		case verb == "QUIT":
			w("221 bye")
			return
		default:
			w("250 OK")
		}
	}
}

func (f *fakeSMTP) client(t *testing.T) *Client {
	t.Helper()
	host, port, _ := net.SplitHostPort(f.ln.Addr().String())
	var p int
	for _, ch := range port {
		p = p*10 + int(ch-'0')
	}
	c, err := New(Config{Host: host, Port: p, TLS: TLSNone, From: "Acme <noreply@acme.example>", Timeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// Issue 21 item 2, end to end: a server without ENHANCEDSTATUSCODES that
// says "550 5.1.1 … does not exist" in its text gets the address
// suppressed; SMTPUTF8 is sent only for an address that needs it.
func TestBounceWithoutEnhancedStatusCodes(t *testing.T) {
	f := startFakeSMTP(t, "550 5.1.1 <gone@example.com>: user does not exist")
	c := f.client(t)
	_, err := c.Send(t.Context(), message("gone@example.com"))
	se := heraldtype.AsSendError(err)
	if se == nil || se.Class != heraldtype.ClassPermanent || se.Code != "smtp_550" || !se.Suppress {
		t.Fatalf("gone@example.com: %+v (%v), want a permanent smtp_550 that suppresses", se, err)
	}
	policy := startFakeSMTP(t, "550 Message refused by policy").client(t)
	if se := heraldtype.AsSendError(func() error { _, err := policy.Send(t.Context(), message("x@example.com")); return err }()); se == nil || se.Suppress {
		t.Fatalf("a policy refusal: %+v, want no suppression", se)
	}
	if _, err := c.Send(t.Context(), message("good@example.com")); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Send(t.Context(), message("güd-good@example.com")); err != nil {
		t.Fatal(err)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	var ascii, utf8 string
	for _, l := range f.mailFrom {
		ascii, utf8 = utf8, l
	}
	if strings.Contains(ascii, "SMTPUTF8") || !strings.Contains(utf8, "SMTPUTF8") {
		t.Fatalf("MAIL FROM lines %q: SMTPUTF8 should be on the internationalised address's only", f.mailFrom)
	}
}
