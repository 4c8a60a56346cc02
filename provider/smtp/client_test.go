package smtp

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	smtpemu "github.com/heraldhq/herald/emulator/smtp"
	"github.com/heraldhq/herald/heraldtype"
)

// TestSendTextAndHTML sends a mail with both bodies and parses it back:
// multipart/alternative, the subject, the stable Message-ID and the
// idempotency key header (issue 5 item 4).
func TestSendTextAndHTML(t *testing.T) {
	t.Parallel()
	e := startEmulator(t, smtpemu.Config{})
	c := newTestClient(t, e, nil)
	m := message(testTo)
	m.Notification.Title = "Ihre Bestellung – versandt ✓"
	m.Notification.Body = "Zustellung am Dienstag.\nDanke!"
	m.Notification.Data = map[string]string{DataHTML: "<p>Zustellung am <b>Dienstag</b>.</p>", "order": "o-1"}

	id, err := c.Send(context.Background(), m)
	if err != nil {
		t.Fatal(err)
	}
	got := e.MessagesTo(testTo)
	if len(got) != 1 {
		t.Fatalf("recorded %+v", e.Messages())
	}
	r := got[0]
	if id != "01HZX3K9Q8N7M6V5T4R3E2W1Q0.42@acme.example" || r.MessageID != id {
		t.Errorf("Send returned %q, mail has Message-ID %q", id, r.MessageID)
	}
	if r.Subject != m.Notification.Title || r.Text != m.Notification.Body {
		t.Errorf("subject %q text %q", r.Subject, r.Text)
	}
	if !strings.Contains(r.HTML, "<b>Dienstag</b>") {
		t.Errorf("html %q", r.HTML)
	}
	h := func(k string) string {
		if v := r.Headers[k]; len(v) > 0 {
			return v[0]
		}
		return ""
	}
	if h("X-Herald-Message-Id") != m.Key || !strings.HasPrefix(h("Content-Type"), "multipart/alternative") ||
		h("From") != `"Acme" <noreply@acme.example>` || h("To") != "<"+testTo+">" {
		t.Errorf("headers %v", r.Headers)
	}
	if _, ok := r.Headers["Order"]; ok || strings.Contains(fmt.Sprint(r.Headers), "o-1") {
		t.Errorf("data leaked into headers: %v", r.Headers)
	}
	if r.From != "noreply@acme.example" || len(r.To) != 1 || r.To[0] != testTo {
		t.Errorf("envelope %q -> %v", r.From, r.To)
	}

	// A retry of the same delivery carries the same Message-ID.
	id2, err := c.Send(context.Background(), m)
	if err != nil || id2 != id {
		t.Errorf("retry: %q, %v", id2, err)
	}
}

// TestSendMessageHTML: a Message's HTML (e-mail tracking's copy for one
// delivery, issue 35 item 2) is sent in place of the notification's
// data.html, which is left as it was.
func TestSendMessageHTML(t *testing.T) {
	t.Parallel()
	e := startEmulator(t, smtpemu.Config{})
	c := newTestClient(t, e, nil)
	m := message(testTo)
	m.Notification.Data = map[string]string{DataHTML: `<a href="https://shop.example/">Shop</a>`}
	m.HTML = `<a href="https://herald.example/t/c/t1.x.y">Shop</a>`
	if _, err := c.Send(context.Background(), m); err != nil {
		t.Fatal(err)
	}
	r := e.Messages()[0]
	if !strings.Contains(r.HTML, "herald.example/t/c/t1.x.y") || strings.Contains(r.HTML, "shop.example") || r.Text != m.Notification.Body {
		t.Errorf("html %q text %q", r.HTML, r.Text)
	}
	if m.Notification.Data[DataHTML] != `<a href="https://shop.example/">Shop</a>` {
		t.Errorf("the notification changed: %q", m.Notification.Data[DataHTML])
	}
}

func TestSendTextOnly(t *testing.T) {
	t.Parallel()
	e := startEmulator(t, smtpemu.Config{})
	c := newTestClient(t, e, nil)
	if _, err := c.Send(context.Background(), message(testTo)); err != nil {
		t.Fatal(err)
	}
	r := e.Messages()[0]
	if r.HTML != "" || !strings.HasPrefix(r.Headers["Content-Type"][0], "text/plain") || r.Text != "It arrives Tuesday." {
		t.Errorf("%+v", r)
	}
}

func TestMessageID(t *testing.T) {
	t.Parallel()
	if got := messageID("n1.42", "a@b.example"); got != "n1.42@b.example" {
		t.Errorf("got %q", got)
	}
	odd := messageID("n 1<>", "a@b.example")
	if odd != messageID("n 1<>", "a@b.example") || strings.ContainsAny(odd, " <>") || !strings.HasSuffix(odd, "@b.example") {
		t.Errorf("got %q", odd)
	}
}

func TestCheckPayload(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		n    *heraldtype.Notification
		ok   bool
	}{
		{"text", &heraldtype.Notification{Title: "S", Body: "b"}, true},
		{"html only", &heraldtype.Notification{Title: "S", Data: map[string]string{DataHTML: "<p>b</p>"}}, true},
		{"no subject", &heraldtype.Notification{Body: "b"}, true},
		{"empty", &heraldtype.Notification{Title: "S"}, false},
		{"two-line subject", &heraldtype.Notification{Title: "S\r\nBcc: x@y", Body: "b"}, false},
		{"nil", nil, false},
	}
	for _, tt := range tests {
		err := CheckPayload(tt.n)
		if (err == nil) != tt.ok || err != nil && heraldtype.ErrorCode(err) != heraldtype.EINVALID {
			t.Errorf("%s: %v", tt.name, err)
		}
	}
}

func TestSendRejectsUnusableMessages(t *testing.T) {
	t.Parallel()
	e := startEmulator(t, smtpemu.Config{})
	c := newTestClient(t, e, nil)
	noKey := message(testTo)
	noKey.Key = ""
	tests := []struct {
		name string
		m    *heraldtype.Message
		code string
	}{
		{"nil", nil, codeInvalidMessage},
		{"no key", noKey, codeInvalidMessage},
		{"no address", message(""), codeInvalidMessage},
		{"bad address", message("not an address"), CodeBadAddress},
	}
	for _, tt := range tests {
		se := sendErr(t, c, tt.m)
		if se.Class != heraldtype.ClassPermanent || se.Code != tt.code {
			t.Errorf("%s: %+v", tt.name, se)
		}
	}
	if n := len(e.Messages()); n != 0 {
		t.Errorf("%d mails reached the emulator", n)
	}
}

func TestConfigValidation(t *testing.T) {
	t.Parallel()
	ok := Config{Host: "smtp.example.com", From: "noreply@acme.example"}
	tests := []struct {
		name string
		mod  func(*Config)
		want string
	}{
		{"valid", func(*Config) {}, ""},
		{"ipv6", func(c *Config) { c.Host = "::1" }, ""},
		{"no host", func(c *Config) { c.Host = "" }, "Host"},
		{"host with port", func(c *Config) { c.Host = "smtp.example.com:587" }, "Host"},
		{"bad TLS", func(c *Config) { c.TLS = "ssl" }, "TLS"},
		{"bad port", func(c *Config) { c.Port = 70000 }, "Port"},
		{"password without user", func(c *Config) { c.Password = "x" }, "Username"},
		{"no from", func(c *Config) { c.From = "" }, "From is required"},
		{"bad from", func(c *Config) { c.From = "acme" }, "From"},
		{"negative timeout", func(c *Config) { c.Timeout = -time.Second }, "Timeout"},
	}
	for _, tt := range tests {
		cfg := ok
		tt.mod(&cfg)
		_, err := New(cfg)
		switch {
		case tt.want == "" && err != nil:
			t.Errorf("%s: %v", tt.name, err)
		case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
			t.Errorf("%s: error %v, want one containing %q", tt.name, err, tt.want)
		}
	}
	for tlsMode, port := range map[string]int{"": 587, TLSStartTLS: 587, TLSImplicit: 465, TLSNone: 587} {
		cfg := ok
		cfg.TLS = tlsMode
		r, err := cfg.validate()
		if err != nil || r.Port != port {
			t.Errorf("TLS %q: port %d, %v", tlsMode, r.Port, err)
		}
	}
}

// TestSecretsNeverPrinted checks that the SMTP password reaches neither
// errors nor any printed form of Config or Client.
func TestSecretsNeverPrinted(t *testing.T) {
	t.Parallel()
	e := startEmulator(t, smtpemu.Config{Username: testUser, Password: testPass})
	const secret = "hunter2-s3cr3t"
	c := newTestClient(t, e, func(c *Config) { c.Password = secret })
	se := sendErr(t, c, message(testTo)) // 535
	bad := Config{Host: "h", From: "x", Username: "u", Password: secret}
	_, cfgErr := New(bad)
	var out strings.Builder
	for _, s := range []string{
		fmt.Sprint(c), fmt.Sprintf("%+v", c), fmt.Sprintf("%#v", c), c.String(),
		fmt.Sprint(c.cfg.Config), fmt.Sprintf("%#v", c.cfg.Config), c.cfg.Config.LogValue().String(),
		se.Error(), fmt.Sprint(se.Err), fmt.Sprint(cfgErr),
	} {
		out.WriteString(s + "\n")
	}
	if strings.Contains(out.String(), secret) {
		t.Fatalf("secret printed:\n%s", out.String())
	}
	if !strings.Contains(out.String(), "[redacted]") {
		t.Errorf("Config does not say the password is set:\n%s", out.String())
	}
}
