package fcm

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	fcmemu "github.com/heraldhq/herald/emulator/fcm"
	"github.com/heraldhq/herald/heraldtype"
)

// testKey is one RSA key shared by the tests' emulators: generating a key
// per emulator would dominate the run time under -race.
var testKey = sync.OnceValue(func() *rsa.PrivateKey {
	k, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		panic(err)
	}
	return k
})

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
func startEmulator(t testing.TB, cfg fcmemu.Config) *fcmemu.Emulator {
	t.Helper()
	if cfg.SigningKey == nil {
		cfg.SigningKey = testKey()
	}
	if cfg.Seed == 0 {
		cfg.Seed = 42
	}
	e := fcmemu.New(cfg)
	if _, err := e.Start("127.0.0.1:0"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	return e
}

// newTestClient returns a Client for project "p" on e, with the
// emulator-issued service account.
func newTestClient(t testing.TB, e *fcmemu.Emulator, now func() time.Time) *Client {
	t.Helper()
	c, err := New(Config{CredentialsJSON: e.ServiceAccountJSON("p"), Endpoint: e.URL(), Now: now, Timeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// message builds a test message.
func message(platform heraldtype.Platform, token string, mode heraldtype.PayloadMode, prio heraldtype.Priority) *heraldtype.Message {
	return &heraldtype.Message{
		Key: "01HZX3K9Q8N7M6V5T4R3E2W1Q0.42",
		Notification: &heraldtype.Notification{
			ID: "01HZX3K9Q8N7M6V5T4R3E2W1Q0", Title: "Price drop", Body: "Now 20% off",
			Data: map[string]string{"product": "p-1"}, Priority: prio, PayloadMode: mode,
		},
		Device: &heraldtype.Device{ID: "d1", Platform: platform, Token: token},
	}
}

// sendErr sends m and returns the *heraldtype.SendError it failed with.
func sendErr(t *testing.T, c *Client, m *heraldtype.Message) *heraldtype.SendError {
	t.Helper()
	id, err := c.Send(context.Background(), m)
	if err == nil {
		t.Fatalf("Send succeeded with id %q, want an error", id)
	}
	se := heraldtype.AsSendError(err)
	return se
}
