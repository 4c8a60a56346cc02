package webpush

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	webpushemu "github.com/heraldhq/herald/emulator/webpush"
	"github.com/heraldhq/herald/heraldtype"
)

// testKeys is one VAPID key pair shared by the tests.
var testKeys = sync.OnceValue(func() [2]string {
	pub, priv, err := GenerateVAPIDKeys()
	if err != nil {
		panic(err)
	}
	return [2]string{pub, priv}
})

const testSubject = "mailto:ops@herald.example"

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
func startEmulator(t testing.TB, cfg webpushemu.Config) *webpushemu.Emulator {
	t.Helper()
	if cfg.Seed == 0 {
		cfg.Seed = 42
	}
	e := webpushemu.New(cfg)
	if _, err := e.Start("127.0.0.1:0"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	return e
}

// testConfig is a Config able to reach a plain-HTTP emulator on loopback.
func testConfig(now func() time.Time) Config {
	k := testKeys()
	return Config{
		VAPIDPublicKey: k[0], VAPIDPrivateKey: k[1], Subject: testSubject,
		AllowInsecureEndpoints: true, AllowPrivateEndpoints: true,
		Timeout: 5 * time.Second, Now: now,
	}
}

func newTestClient(t testing.TB, now func() time.Time) *Client {
	t.Helper()
	c, err := New(testConfig(now))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

const testKey = "01HZX3K9Q8N7M6V5T4R3E2W1Q0.42"

// message builds a test message to a web device with the given
// subscription.
func message(endpoint, p256dh, auth string, mode heraldtype.PayloadMode, prio heraldtype.Priority) *heraldtype.Message {
	return &heraldtype.Message{
		Key: testKey,
		Notification: &heraldtype.Notification{
			ID: "01HZX3K9Q8N7M6V5T4R3E2W1Q0", Type: "PRICE_DROP", Title: "Price drop", Body: "Now 20% off",
			Data: map[string]string{"product": "p-1"}, Priority: prio, PayloadMode: mode,
		},
		Device: &heraldtype.Device{ID: "d1", Platform: heraldtype.PlatformWeb, Token: endpoint, WebPushP256DH: p256dh, WebPushAuth: auth},
	}
}

// subscribe creates a subscription on e and returns a message to it.
func subscribe(e *webpushemu.Emulator) *heraldtype.Message {
	ep, p, a := e.NewSubscription()
	return message(ep, p, a, heraldtype.PayloadAlert, heraldtype.PriorityNormal)
}

// sendErr sends m and returns the *heraldtype.SendError it failed with.
func sendErr(t *testing.T, c *Client, m *heraldtype.Message) *heraldtype.SendError {
	t.Helper()
	id, err := c.Send(context.Background(), m)
	if err == nil {
		t.Fatalf("Send succeeded with id %q, want an error", id)
	}
	return heraldtype.AsSendError(err)
}

// safeBuffer is a bytes.Buffer safe for a logger writing from the
// emulator's handler goroutines.
type safeBuffer struct {
	mu  sync.Mutex
	buf []byte
}

func (b *safeBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.buf = append(b.buf, p...)
	return len(p), nil
}

func (b *safeBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return string(b.buf)
}
