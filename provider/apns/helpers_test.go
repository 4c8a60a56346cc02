package apns

import (
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	apnsemu "github.com/heraldhq/herald/emulator/apns"
	"github.com/heraldhq/herald/heraldtype"
)

// testTopic is the bundle id the tests send for.
const testTopic = "com.example.shop"

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
func startEmulator(t testing.TB, cfg apnsemu.Config) *apnsemu.Emulator {
	t.Helper()
	if cfg.Seed == 0 {
		cfg.Seed = 42
	}
	e, err := apnsemu.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.Start("127.0.0.1:0"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	return e
}

// newTestClient returns a Client for testTopic on e with a new provider
// key, and its Config.
func newTestClient(t testing.TB, e *apnsemu.Emulator, now func() time.Time) (*Client, Config) {
	t.Helper()
	cfg := clientConfig(t, e)
	cfg.Now = now
	cfg.Timeout = 5 * time.Second
	c, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return c, cfg
}

// h2Client is an HTTP/2 client that trusts e, for raw requests.
func h2Client(e *apnsemu.Emulator) *http.Client {
	return &http.Client{Transport: &http.Transport{
		TLSClientConfig:   &tls.Config{RootCAs: e.CertPool()},
		ForceAttemptHTTP2: true,
	}}
}

// deviceToken returns a well-formed 64-hex-digit device token named by i.
func deviceToken(i int) string {
	return fmt.Sprintf("%064x", i+0xabc000)
}

// testKey is the idempotency key of the test messages.
const testKey = "01HZX3K9Q8N7M6V5T4R3E2W1Q0.42"

// message builds a test message.
func message(token string, mode heraldtype.PayloadMode, prio heraldtype.Priority) *heraldtype.Message {
	return &heraldtype.Message{
		Key: testKey,
		Notification: &heraldtype.Notification{
			ID: "01HZX3K9Q8N7M6V5T4R3E2W1Q0", Title: "Price drop", Body: "Now 20% off",
			Data: map[string]string{"product": "p-1"}, Priority: prio, PayloadMode: mode,
		},
		Device: &heraldtype.Device{ID: "d1", Platform: heraldtype.PlatformIOS, Token: token},
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
		t.Fatalf("Send returned %T %v, want a *heraldtype.SendError", err, err)
	}
	return se
}

// mustSend sends m and fails the test on error.
func mustSend(t *testing.T, c *Client, m *heraldtype.Message) string {
	t.Helper()
	id, err := c.Send(context.Background(), m)
	if err != nil {
		t.Fatalf("Send: %v", err)
	}
	return id
}

// currentJWT is the provider token c would send now.
func currentJWT(t *testing.T, c *Client) string {
	t.Helper()
	tok, err := c.tokens.token()
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

// containsAny reports which of needles occur in s.
func containsAny(s string, needles ...string) []string {
	var found []string
	for _, n := range needles {
		if n != "" && strings.Contains(s, n) {
			found = append(found, n)
		}
	}
	return found
}

// syncBuffer is a bytes.Buffer safe for a logger and a test to share.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// clientConfig returns a Config for testTopic on e, with a new provider key
// of the emulator's default team.
func clientConfig(t testing.TB, e *apnsemu.Emulator) Config {
	t.Helper()
	p8, keyID, err := e.NewProviderKey(apnsemu.DefaultTeamID)
	if err != nil {
		t.Fatal(err)
	}
	return Config{KeyP8: p8, KeyID: keyID, TeamID: apnsemu.DefaultTeamID, Topic: testTopic, Endpoint: e.URL(), RootCAs: e.CertPool()}
}
