package twilio

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	twilioemu "github.com/heraldhq/herald/emulator/twilio"
	"github.com/heraldhq/herald/heraldtype"
)

const (
	testFrom = "+15005550006"
	testTo   = "+14155552671"
)

// fakeClock is a settable clock shared by an emulator and a client.
type fakeClock struct{ ns atomic.Int64 }

func newFakeClock() *fakeClock {
	c := &fakeClock{}
	c.ns.Store(time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC).UnixNano())
	return c
}

func (c *fakeClock) Now() time.Time          { return time.Unix(0, c.ns.Load()).UTC() }
func (c *fakeClock) Advance(d time.Duration) { c.ns.Add(int64(d)) }

// startEmulator serves a new emulator on a loopback port until the test ends.
func startEmulator(t testing.TB, cfg twilioemu.Config) *twilioemu.Emulator {
	t.Helper()
	if cfg.Seed == 0 {
		cfg.Seed = 42
	}
	e := twilioemu.New(cfg)
	if _, err := e.Start("127.0.0.1:0"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	return e
}

// newTestClient returns a Client for e's account, sending from testFrom.
func newTestClient(t testing.TB, e *twilioemu.Emulator, mod func(*Config)) *Client {
	t.Helper()
	cfg := Config{AccountSID: e.AccountSID(), AuthToken: e.AuthToken(), From: testFrom, BaseURL: e.URL(), Timeout: 5 * time.Second}
	if mod != nil {
		mod(&cfg)
	}
	c, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// message builds a test message to number.
func message(number string) *heraldtype.Message {
	return &heraldtype.Message{
		Key:          "01HZX3K9Q8N7M6V5T4R3E2W1Q0.42",
		Notification: &heraldtype.Notification{ID: "01HZX3K9Q8N7M6V5T4R3E2W1Q0", Title: "Your code", Body: "123456"},
		Address:      number,
	}
}

// sendErr sends m and returns the *heraldtype.SendError it failed with.
func sendErr(t *testing.T, c *Client, m *heraldtype.Message) *heraldtype.SendError {
	t.Helper()
	id, err := c.Send(context.Background(), m)
	if err == nil {
		t.Fatalf("Send succeeded with sid %q, want an error", id)
	}
	var se *heraldtype.SendError
	if !errors.As(err, &se) {
		t.Fatalf("Send error %T %v is not a *heraldtype.SendError", err, err)
	}
	return se
}
