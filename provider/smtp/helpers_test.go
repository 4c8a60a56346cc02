package smtp

import (
	"context"
	"errors"
	"testing"
	"time"

	smtpemu "github.com/heraldhq/herald/emulator/smtp"
	"github.com/heraldhq/herald/heraldtype"
)

const (
	testUser = "herald"
	testPass = "correct horse battery staple"
	testTo   = "ada@example.com"
)

// startEmulator serves a new emulator on a loopback port until the test ends.
func startEmulator(t testing.TB, cfg smtpemu.Config) *smtpemu.Emulator {
	t.Helper()
	if cfg.Seed == 0 {
		cfg.Seed = 42
	}
	e, err := smtpemu.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.Start("127.0.0.1:0"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	return e
}

// newTestClient returns a Client for e, in e's TLS mode, trusting e's
// certificate, with the test credentials.
func newTestClient(t testing.TB, e *smtpemu.Emulator, mod func(*Config)) *Client {
	t.Helper()
	host, port := e.HostPort()
	cfg := Config{Host: host, Port: port, TLS: e.TLS(), Username: testUser, Password: testPass,
		From: "Acme <noreply@acme.example>", RootCAs: e.CertPool(), Timeout: 5 * time.Second}
	if mod != nil {
		mod(&cfg)
	}
	c, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// message builds a test message to addr.
func message(addr string) *heraldtype.Message {
	return &heraldtype.Message{
		Key: "01HZX3K9Q8N7M6V5T4R3E2W1Q0.42",
		Notification: &heraldtype.Notification{
			ID: "01HZX3K9Q8N7M6V5T4R3E2W1Q0", Title: "Your order shipped", Body: "It arrives Tuesday.",
		},
		Address: addr,
	}
}

// sendErr sends m and returns the *heraldtype.SendError it failed with.
func sendErr(t *testing.T, c *Client, m *heraldtype.Message) *heraldtype.SendError {
	t.Helper()
	id, err := c.Send(context.Background(), m)
	if err == nil {
		t.Fatalf("Send succeeded with id %q, want an error", id)
	}
	var se *heraldtype.SendError
	if !errors.As(err, &se) {
		t.Fatalf("Send error %T %v is not a *heraldtype.SendError", err, err)
	}
	return se
}
