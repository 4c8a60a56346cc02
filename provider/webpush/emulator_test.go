package webpush

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"path"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"

	webpushemu "github.com/heraldhq/herald/emulator/webpush"
	"github.com/heraldhq/herald/heraldtype"
)

// pushRequest is a hand-made push, for the failures the Client never
// produces.
type pushRequest struct {
	auth    string
	ttl     string
	urgency string
	topic   string
	enc     string
	body    []byte
}

// validPush is a correct push to m's subscription, signed by the test key.
func validPush(t *testing.T, e *webpushemu.Emulator, m *heraldtype.Message, now time.Time) pushRequest {
	t.Helper()
	c := newTestClient(t, func() time.Time { return now })
	sub, err := c.parseSubscription(m.Device)
	if err != nil {
		t.Fatal(err)
	}
	body, err := encrypt([]byte(`{"hello":"world"}`), sub.uaKey, sub.auth)
	if err != nil {
		t.Fatal(err)
	}
	auth, err := c.signer.header(e.URL())
	if err != nil {
		t.Fatal(err)
	}
	return pushRequest{auth: auth, ttl: "60", enc: "aes128gcm", body: body}
}

func (p pushRequest) do(t *testing.T, endpoint string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, endpoint, bytes.NewReader(p.body))
	for k, v := range map[string]string{"Authorization": p.auth, "TTL": p.ttl, "Urgency": p.urgency, "Topic": p.topic, "Content-Encoding": p.enc} {
		if v != "" {
			req.Header.Set(k, v)
		}
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// vapidHeader signs claims with key and advertises pub as k=.
func vapidHeader(t *testing.T, key *ecdsa.PrivateKey, pub string, claims jwt.MapClaims) string {
	t.Helper()
	tok, err := jwt.NewWithClaims(jwt.SigningMethodES256, claims).SignedString(key)
	if err != nil {
		t.Fatal(err)
	}
	return "vapid t=" + tok + ", k=" + pub
}

// TestEmulatorRejects covers the emulator's validation: every way VAPID
// can be wrong (RFC 8292) and every malformed RFC 8030 request.
func TestEmulatorRejects(t *testing.T) {
	t.Parallel()
	clock := newFakeClock()
	now := clock.Now()
	e := startEmulator(t, webpushemu.Config{Now: clock.Now})
	m := subscribe(e)
	key, pub, err := parseVAPIDKeys(testKeys()[0], testKeys()[1])
	if err != nil {
		t.Fatal(err)
	}
	k := b64(pub)
	other, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	claims := func(edit func(jwt.MapClaims)) jwt.MapClaims {
		c := jwt.MapClaims{"aud": e.URL(), "exp": now.Add(12 * time.Hour).Unix(), "sub": testSubject}
		if edit != nil {
			edit(c)
		}
		return c
	}
	with := func(edit func(p *pushRequest)) pushRequest {
		p := validPush(t, e, m, now)
		edit(&p)
		return p
	}
	tests := []struct {
		name   string
		push   pushRequest
		status int
		reason string
		substr string
	}{
		{"no authorization", with(func(p *pushRequest) { p.auth = "" }), 401, webpushemu.ReasonVAPID, "Missing Authorization"},
		{"bearer scheme", with(func(p *pushRequest) { p.auth = "Bearer abc" }), 401, webpushemu.ReasonVAPID, "want vapid"},
		{"no k", with(func(p *pushRequest) { p.auth = strings.Split(p.auth, ",")[0] }), 401, webpushemu.ReasonVAPID, "lacks t= or k="},
		{"bad k", with(func(p *pushRequest) { p.auth = vapidHeader(t, key, "AAAA", claims(nil)) }), 401, webpushemu.ReasonVAPID, "not an uncompressed"},
		{"bad signature", with(func(p *pushRequest) { p.auth = vapidHeader(t, other, k, claims(nil)) }), 401, webpushemu.ReasonVAPID, "signature"},
		{"wrong aud", with(func(p *pushRequest) {
			p.auth = vapidHeader(t, key, k, claims(func(c jwt.MapClaims) { c["aud"] = "https://fcm.googleapis.com" }))
		}), 401, webpushemu.ReasonVAPID, "aud"},
		{"expired", with(func(p *pushRequest) {
			p.auth = vapidHeader(t, key, k, claims(func(c jwt.MapClaims) { c["exp"] = now.Add(-time.Hour).Unix() }))
		}), 401, webpushemu.ReasonVAPID, "expired"},
		{"no exp", with(func(p *pushRequest) {
			p.auth = vapidHeader(t, key, k, claims(func(c jwt.MapClaims) { delete(c, "exp") }))
		}), 401, webpushemu.ReasonVAPID, "exp"},
		{"exp beyond 24 h", with(func(p *pushRequest) {
			p.auth = vapidHeader(t, key, k, claims(func(c jwt.MapClaims) { c["exp"] = now.Add(25 * time.Hour).Unix() }))
		}), 401, webpushemu.ReasonVAPID, "24 hours"},
		{"no sub", with(func(p *pushRequest) {
			p.auth = vapidHeader(t, key, k, claims(func(c jwt.MapClaims) { delete(c, "sub") }))
		}), 401, webpushemu.ReasonVAPID, "sub"},
		{"bare-address sub", with(func(p *pushRequest) {
			p.auth = vapidHeader(t, key, k, claims(func(c jwt.MapClaims) { c["sub"] = "ops@herald.example" }))
		}), 401, webpushemu.ReasonVAPID, "sub"},
		{"no TTL", with(func(p *pushRequest) { p.ttl = "" }), 400, webpushemu.ReasonTTL, "Missing TTL"},
		{"bad TTL", with(func(p *pushRequest) { p.ttl = "-1" }), 400, webpushemu.ReasonTTL, "Invalid TTL"},
		{"bad urgency", with(func(p *pushRequest) { p.urgency = "urgent" }), 400, webpushemu.ReasonUrgency, "Urgency"},
		{"bad topic", with(func(p *pushRequest) { p.topic = "has spaces" }), 400, webpushemu.ReasonTopic, "Topic"},
		{"long topic", with(func(p *pushRequest) { p.topic = strings.Repeat("a", 33) }), 400, webpushemu.ReasonTopic, "Topic"},
		{"aesgcm", with(func(p *pushRequest) { p.enc = "aesgcm" }), 400, webpushemu.ReasonEncoding, "aes128gcm"},
		{"too large", with(func(p *pushRequest) { p.body = make([]byte, MaxBodyBytes+1) }), 413, webpushemu.ReasonTooLarge, "too large"},
		{"undecryptable", with(func(p *pushRequest) { p.body[len(p.body)-1] ^= 1 }), 400, webpushemu.ReasonDecrypt, "could not decrypt"},
	}
	for _, tt := range tests {
		status, body := tt.push.do(t, m.Device.Token)
		if status != tt.status || !strings.Contains(body, tt.substr) {
			t.Errorf("%s: %d %s, want %d containing %q", tt.name, status, body, tt.status, tt.substr)
		}
	}
	if status, body := validPush(t, e, m, now).do(t, m.Device.Token); status != 201 {
		t.Fatalf("valid push: %d %s", status, body)
	}
	s := e.Stats()
	if s.Accepted != 1 || s.Rejected[webpushemu.ReasonVAPID] != 11 || s.Rejected[webpushemu.ReasonTTL] != 2 || s.Rejected[webpushemu.ReasonDecrypt] != 1 {
		t.Errorf("stats %+v", s)
	}
}

// TestVAPIDFailuresThroughClient: what the Client gets wrong in VAPID
// comes back 401/403 and is classified permanent configuration, never a
// dead device.
func TestVAPIDFailuresThroughClient(t *testing.T) {
	t.Parallel()
	clock := newFakeClock()
	e := startEmulator(t, webpushemu.Config{Now: clock.Now})

	// A sender whose clock is two days behind signs tokens that expired.
	behind := newTestClient(t, func() time.Time { return clock.Now().Add(-48 * time.Hour) })
	se := sendErr(t, behind, subscribe(e))
	if se.Class != heraldtype.ClassPermanent || se.Code != CodeVAPIDRejected || se.TokenInvalid || !strings.Contains(se.Message, "expired") {
		t.Errorf("expired token: %+v", se)
	}

	// A subscription made with another applicationServerKey refuses ours.
	otherPub, _, err := GenerateVAPIDKeys()
	if err != nil {
		t.Fatal(err)
	}
	ep, p, a, err := e.NewSubscriptionFor(otherPub)
	if err != nil {
		t.Fatal(err)
	}
	c := newTestClient(t, clock.Now)
	se = sendErr(t, c, message(ep, p, a, heraldtype.PayloadAlert, heraldtype.PriorityNormal))
	if se.Class != heraldtype.ClassPermanent || se.Code != CodeVAPIDRejected || se.TokenInvalid || !strings.HasPrefix(se.Message, "HTTP 403") {
		t.Errorf("key mismatch: %+v", se)
	}
	// … and accepts the key it was made with.
	ep, p, a, err = e.NewSubscriptionFor(c.PublicKey())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Send(context.Background(), message(ep, p, a, heraldtype.PayloadAlert, heraldtype.PriorityNormal)); err != nil {
		t.Errorf("matching key: %v", err)
	}
	if _, _, _, err := e.NewSubscriptionFor("not-a-key"); err == nil {
		t.Error("a malformed applicationServerKey was accepted")
	}
}

// TestEmulatorHTTPAPI drives the control routes a non-Go test would use.
func TestEmulatorHTTPAPI(t *testing.T) {
	t.Parallel()
	e := startEmulator(t, webpushemu.Config{})
	c := newTestClient(t, nil)
	call := func(method, path, body string, wantStatus int, out any) {
		t.Helper()
		req, _ := http.NewRequest(method, e.URL()+path, strings.NewReader(body))
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		raw, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != wantStatus {
			t.Fatalf("%s %s: %d %s, want %d", method, path, resp.StatusCode, raw, wantStatus)
		}
		if out != nil {
			if err := json.Unmarshal(raw, out); err != nil {
				t.Fatalf("%s %s: %v in %s", method, path, err, raw)
			}
		}
	}
	var sub webpushemu.SubscriptionJSON
	call("POST", "/emulator/subscriptions", "", 201, &sub)
	if !strings.HasPrefix(sub.Endpoint, e.URL()+"/push/") || sub.Keys.P256DH == "" || sub.Keys.Auth == "" {
		t.Fatalf("subscription %+v", sub)
	}
	var bound webpushemu.SubscriptionJSON
	call("POST", "/emulator/subscriptions", `{"applicationServerKey":"`+c.PublicKey()+`"}`, 201, &bound)
	call("POST", "/emulator/subscriptions", `{"applicationServerKey":"xx"}`, 400, nil)
	call("POST", "/emulator/subscriptions", `{"unknown":1}`, 400, nil)

	m := message(sub.Endpoint, sub.Keys.P256DH, sub.Keys.Auth, heraldtype.PayloadData, heraldtype.PriorityLow)
	if _, err := c.Send(context.Background(), m); err != nil {
		t.Fatal(err)
	}
	var msgs []webpushemu.Received
	call("GET", "/emulator/messages?endpoint="+sub.Endpoint, "", 200, &msgs)
	if len(msgs) != 1 || !strings.Contains(string(msgs[0].Payload), `"messageId":"`+testKey+`"`) || msgs[0].Urgency != "low" {
		t.Fatalf("messages %+v", msgs)
	}
	call("GET", "/emulator/messages?endpoint="+bound.Endpoint, "", 200, &msgs)
	if len(msgs) != 0 {
		t.Errorf("messages of an unused subscription: %+v", msgs)
	}

	var f webpushemu.Faults
	call("PUT", "/emulator/faults", `{"subscriptions":{"`+sub.Endpoint+`":{"status":503,"times":1,"retry_after_seconds":5}},"latency_ms":0}`, 200, &f)
	if _, ok := f.Subscriptions[subscriptionID(sub.Endpoint)]; !ok {
		t.Errorf("faults %+v", f)
	}
	call("PUT", "/emulator/faults", `{"subscriptions":{"x":{"status":418}}}`, 400, nil)
	call("PUT", "/emulator/faults", `{"unavailable":{"rate":2}}`, 400, nil)
	if se := sendErr(t, c, m); se.Code != "http_503" || se.RetryAfter != 5*time.Second {
		t.Errorf("injected 503: %+v", se)
	}
	if _, err := c.Send(context.Background(), m); err != nil {
		t.Errorf("the fault outlived times=1: %v", err)
	}
	call("DELETE", "/emulator/faults", "", 204, nil)
	var cleared webpushemu.Faults
	call("GET", "/emulator/faults", "", 200, &cleared)
	if len(cleared.Subscriptions) != 0 {
		t.Errorf("faults after clear %+v", cleared)
	}

	var st webpushemu.Stats
	call("GET", "/emulator/stats", "", 200, &st)
	if st.Accepted != 2 || st.Rejected["fault_503"] != 1 || st.Subscriptions != 2 || st.EarlyRetries != 1 {
		t.Errorf("stats %+v", st)
	}
	call("DELETE", "/emulator/subscriptions/"+subscriptionID(sub.Endpoint), "", 204, nil)
	call("DELETE", "/emulator/subscriptions/unknown", "", 404, nil)
	if se := sendErr(t, c, m); se.Code != CodeGone || !se.TokenInvalid {
		t.Errorf("after DELETE: %+v", se)
	}
	call("DELETE", "/emulator/messages", "", 204, nil)
	call("GET", "/emulator/messages", "", 200, &msgs)
	if len(msgs) != 0 || e.Stats().Accepted != 0 {
		t.Errorf("after reset: %d messages, stats %+v", len(msgs), e.Stats())
	}
}

// TestEmulatorRatesAndEarlyRetries: rate faults follow the seed, and a
// sender that ignores Retry-After is counted.
func TestEmulatorRatesAndEarlyRetries(t *testing.T) {
	t.Parallel()
	clock := newFakeClock()
	e := startEmulator(t, webpushemu.Config{Now: clock.Now, Seed: 7})
	c := newTestClient(t, clock.Now)
	if err := e.SetFaults(webpushemu.Faults{
		TooManyRequests: webpushemu.RateFault{Rate: 0.2, RetryAfterSeconds: 60},
		InternalError:   webpushemu.RateFault{Rate: 0.2},
		Unavailable:     webpushemu.RateFault{Rate: 0.2, RetryAfterSeconds: 10},
	}); err != nil {
		t.Fatal(err)
	}
	m := subscribe(e)
	counts := map[string]int{}
	for range 100 {
		code := ""
		if _, err := c.Send(context.Background(), m); err != nil {
			code = heraldtype.AsSendError(err).Code
		}
		counts[code]++
	}
	for _, code := range []string{"", CodeRateLimited, "http_500", "http_503"} {
		if counts[code] < 5 {
			t.Errorf("code %q drawn %d times in 100: %v", code, counts[code], counts)
		}
	}
	if s := e.Stats(); s.EarlyRetries == 0 {
		t.Error("sends inside Retry-After were not counted as early retries")
	}

	// After waiting out every Retry-After, a send is not early.
	e.ClearFaults()
	e.Reset()
	clock.Advance(time.Minute)
	if _, err := c.Send(context.Background(), m); err != nil {
		t.Fatal(err)
	}
	if s := e.Stats(); s.EarlyRetries != 0 || s.Accepted != 1 {
		t.Errorf("stats %+v", s)
	}
}

// TestEmulatorLatency: injected latency longer than the client's timeout
// is a temporary failure.
func TestEmulatorLatency(t *testing.T) {
	t.Parallel()
	e := startEmulator(t, webpushemu.Config{})
	cfg := testConfig(nil)
	cfg.Timeout = 20 * time.Millisecond
	c, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := e.SetFaults(webpushemu.Faults{LatencyMillis: 2000}); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	se := sendErr(t, c, subscribe(e))
	if se.Class != heraldtype.ClassTemporary || se.Code != codeNetwork {
		t.Errorf("slow push service: %+v", se)
	}
	if time.Since(start) > time.Second {
		t.Error("Send outlived its timeout")
	}
}

// TestEmulatorLoggerAndRing: accepted messages are logged with their
// payload; the recording keeps the newest MaxRecorded.
func TestEmulatorLoggerAndRing(t *testing.T) {
	t.Parallel()
	var buf safeBuffer
	e := startEmulator(t, webpushemu.Config{MaxRecorded: 2, Logger: slog.New(slog.NewJSONHandler(&buf, nil))})
	c := newTestClient(t, nil)
	m := subscribe(e)
	for _, title := range []string{"one", "two", "three"} {
		m.Notification.Title = title
		if _, err := c.Send(context.Background(), m); err != nil {
			t.Fatal(err)
		}
	}
	got := e.Messages()
	if len(got) != 2 || !strings.Contains(got[0].Plaintext, `"two"`) || !strings.Contains(got[1].Plaintext, `"three"`) {
		t.Errorf("ring kept %+v", got)
	}
	if s := buf.String(); strings.Count(s, "webpush emulator: message accepted") != 3 || !strings.Contains(s, testKey) {
		t.Errorf("log:\n%s", s)
	}
}

// subscriptionID is the id at the end of an emulator subscription's
// endpoint (".../push/{id}").
func subscriptionID(endpoint string) string { return path.Base(endpoint) }
