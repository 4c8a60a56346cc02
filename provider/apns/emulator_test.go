package apns

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"

	apnsemu "github.com/heraldhq/herald/emulator/apns"
	"github.com/heraldhq/herald/heraldtype"
)

// rawSend posts body to /3/device/token over HTTP/2 with headers, and
// returns the status, the reason and the answer's headers.
func rawSend(t *testing.T, hc *http.Client, e *apnsemu.Emulator, method, path string, h map[string]string, body string) (int, string, http.Header) {
	t.Helper()
	req, err := http.NewRequest(method, e.URL()+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range h {
		req.Header.Set(k, v)
	}
	resp, err := hc.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	var eb errorBody
	_ = json.Unmarshal(raw, &eb)
	if resp.StatusCode != 200 && resp.ProtoMajor == 2 && eb.Reason == "" {
		t.Errorf("%s %s: error answer %d without a reason: %s", method, path, resp.StatusCode, raw)
	}
	return resp.StatusCode, eb.Reason, resp.Header
}

// signJWT signs a provider token with key.
func signJWT(t *testing.T, key any, method jwt.SigningMethod, kid, iss string, iat time.Time) string {
	t.Helper()
	tok := jwt.NewWithClaims(method, jwt.MapClaims{"iss": iss, "iat": iat.Unix()})
	tok.Header["kid"] = kid
	s, err := tok.SignedString(key)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// parseP8 reads a .p8 key.
func parseP8(t *testing.T, p8 []byte) *ecdsa.PrivateKey {
	t.Helper()
	block, _ := pem.Decode(p8)
	k, err := x509.ParsePKCS8PrivateKey(block.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	return k.(*ecdsa.PrivateKey)
}

func TestEmulatorRejectsHTTP1(t *testing.T) {
	t.Parallel()
	e := startEmulator(t, apnsemu.Config{})
	hc := &http.Client{Transport: &http.Transport{
		TLSClientConfig: &tls.Config{RootCAs: e.CertPool()},
		TLSNextProto:    map[string]func(string, *tls.Conn) http.RoundTripper{}, // HTTP/1.1 only
	}}
	resp, err := hc.Post(e.URL()+"/3/device/"+deviceToken(1), "application/json", strings.NewReader(`{"aps":{}}`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusHTTPVersionNotSupported || resp.ProtoMajor != 1 {
		t.Fatalf("HTTP/1.1 send answered %d over %s", resp.StatusCode, resp.Proto)
	}
}

func TestEmulatorValidation(t *testing.T) {
	t.Parallel()
	clock := newFakeClock()
	e := startEmulator(t, apnsemu.Config{Now: clock.Now, Topics: []string{testTopic}})
	cfg := clientConfig(t, e)
	auth := "bearer " + signJWT(t, parseP8(t, cfg.KeyP8), jwt.SigningMethodES256, cfg.KeyID, cfg.TeamID, clock.Now())
	hc := h2Client(e)
	dev := "/3/device/" + deviceToken(1)
	ok := `{"aps":{"alert":"hi"}}`
	hdr := func(edit map[string]string) map[string]string {
		h := map[string]string{"authorization": auth, "apns-topic": testTopic, "apns-push-type": "alert"}
		for k, v := range edit {
			if v == "" {
				delete(h, k)
			} else {
				h[k] = v
			}
		}
		return h
	}
	tests := []struct {
		name, method, path string
		h                  map[string]string
		body               string
		status             int
		reason             string
	}{
		{"minimal", "POST", dev, hdr(nil), ok, 200, ""},
		{"all headers", "POST", dev, hdr(map[string]string{"apns-priority": "5", "apns-expiration": "0",
			"apns-collapse-id": strings.Repeat("c", 64), "apns-id": "123e4567-e89b-12d3-a456-426655440000"}), ok, 200, ""},
		{"background at 5", "POST", dev, hdr(map[string]string{"apns-push-type": "background", "apns-priority": "5"}), `{"aps":{"content-available":1}}`, 200, ""},
		{"no push type", "POST", dev, hdr(map[string]string{"apns-push-type": ""}), ok, 200, ""},
		{"GET", "GET", dev, hdr(nil), "", 405, ReasonMethodNotAllowed},
		{"bad path", "POST", "/3/devices/x", hdr(nil), ok, 404, ReasonBadPath},
		{"no token", "POST", "/3/device/", hdr(nil), ok, 400, ReasonMissingDeviceToken},
		{"non-hex token", "POST", "/3/device/" + strings.Repeat("z", 64), hdr(nil), ok, 400, ReasonBadDeviceToken},
		{"short token", "POST", "/3/device/abcd", hdr(nil), ok, 400, ReasonBadDeviceToken},
		{"no auth", "POST", dev, hdr(map[string]string{"authorization": ""}), ok, 403, ReasonMissingProviderToken},
		{"no topic", "POST", dev, hdr(map[string]string{"apns-topic": ""}), ok, 400, ReasonMissingTopic},
		{"bad topic", "POST", dev, hdr(map[string]string{"apns-topic": "com.example shop"}), ok, 400, ReasonBadTopic},
		{"other topic", "POST", dev, hdr(map[string]string{"apns-topic": "com.other.app"}), ok, 400, ReasonTopicDisallowed},
		{"push type", "POST", dev, hdr(map[string]string{"apns-push-type": "loud"}), ok, 400, ReasonInvalidPushType},
		{"priority", "POST", dev, hdr(map[string]string{"apns-priority": "7"}), ok, 400, ReasonBadPriority},
		{"background at 10", "POST", dev, hdr(map[string]string{"apns-push-type": "background", "apns-priority": "10"}), ok, 400, ReasonBadPriority},
		{"background default priority", "POST", dev, hdr(map[string]string{"apns-push-type": "background"}), ok, 400, ReasonBadPriority},
		{"expiration", "POST", dev, hdr(map[string]string{"apns-expiration": "tomorrow"}), ok, 400, ReasonBadExpirationDate},
		{"collapse id", "POST", dev, hdr(map[string]string{"apns-collapse-id": strings.Repeat("c", 65)}), ok, 400, ReasonBadCollapseID},
		{"apns-id", "POST", dev, hdr(map[string]string{"apns-id": "not-a-uuid"}), ok, 400, ReasonBadMessageID},
		{"empty", "POST", dev, hdr(nil), "", 400, ReasonPayloadEmpty},
		{"not JSON", "POST", dev, hdr(nil), `{"aps":`, 400, "BadPayload"},
		{"aps not object", "POST", dev, hdr(nil), `{"aps":1}`, 400, "BadPayload"},
		{"too large", "POST", dev, hdr(nil), `{"aps":{},"x":"` + strings.Repeat("x", 4090) + `"}`, 413, ReasonPayloadTooLarge},
	}
	for _, tt := range tests {
		status, reason, h := rawSend(t, hc, e, tt.method, tt.path, tt.h, tt.body)
		if status != tt.status || reason != tt.reason {
			t.Errorf("%s: %d %q, want %d %q", tt.name, status, reason, tt.status, tt.reason)
		}
		if id := h.Get("apns-id"); !uuidPattern.MatchString(id) {
			t.Errorf("%s: apns-id %q", tt.name, id)
		}
	}
	if n := len(e.Messages()); n != 4 {
		t.Errorf("recorded %d messages, want 4", n)
	}
	if got := e.Messages()[1].APNsID; got != "123e4567-e89b-12d3-a456-426655440000" {
		t.Errorf("the request's apns-id was not kept: %q", got)
	}
	// Duplicate headers need the raw header map.
	req, _ := http.NewRequest("POST", e.URL()+dev, strings.NewReader(ok))
	for k, v := range hdr(nil) {
		req.Header.Set(k, v)
	}
	req.Header.Add("apns-priority", "10")
	req.Header.Add("apns-priority", "5")
	resp, err := hc.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	var eb errorBody
	_ = json.NewDecoder(resp.Body).Decode(&eb)
	resp.Body.Close()
	if resp.StatusCode != 400 || eb.Reason != ReasonDuplicateHeaders {
		t.Errorf("duplicate headers: %d %+v", resp.StatusCode, eb)
	}
}

func TestEmulatorAuthentication(t *testing.T) {
	t.Parallel()
	clock := newFakeClock()
	e := startEmulator(t, apnsemu.Config{Now: clock.Now})
	p8, kid, err := e.NewProviderKey("TEAM000001")
	if err != nil {
		t.Fatal(err)
	}
	key := parseP8(t, p8)
	other, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	now := clock.Now()
	hc := h2Client(e)
	tests := []struct {
		name, auth, reason string
	}{
		{"valid", "bearer " + signJWT(t, key, jwt.SigningMethodES256, kid, "TEAM000001", now), ""},
		{"Bearer capitalised", "Bearer " + signJWT(t, key, jwt.SigningMethodES256, kid, "TEAM000001", now.Add(-time.Second)), ""},
		{"59 minutes old", "bearer " + signJWT(t, key, jwt.SigningMethodES256, kid, "TEAM000001", now.Add(-59*time.Minute)), ""},
		{"skew forgiven", "bearer " + signJWT(t, key, jwt.SigningMethodES256, kid, "TEAM000001", now.Add(30*time.Second)), ""},
		{"over an hour old", "bearer " + signJWT(t, key, jwt.SigningMethodES256, kid, "TEAM000001", now.Add(-61*time.Minute)), ReasonExpiredProviderToken},
		{"from the future", "bearer " + signJWT(t, key, jwt.SigningMethodES256, kid, "TEAM000001", now.Add(5*time.Minute)), ReasonInvalidProviderToken},
		{"forged signature", "bearer " + signJWT(t, other, jwt.SigningMethodES256, kid, "TEAM000001", now), ReasonInvalidProviderToken},
		{"wrong team", "bearer " + signJWT(t, key, jwt.SigningMethodES256, kid, "TEAM000002", now), ReasonInvalidProviderToken},
		{"unknown key", "bearer " + signJWT(t, key, jwt.SigningMethodES256, "UNKNOWN001", "TEAM000001", now), ReasonInvalidProviderToken},
		{"HS256", "bearer " + signJWT(t, []byte("secret"), jwt.SigningMethodHS256, kid, "TEAM000001", now), ReasonInvalidProviderToken},
		{"garbage", "bearer abc.def.ghi", ReasonInvalidProviderToken},
		{"basic", "basic dXNlcjpwYXNz", ReasonMissingProviderToken},
		{"empty bearer", "bearer ", ReasonMissingProviderToken},
	}
	for _, tt := range tests {
		h := map[string]string{"authorization": tt.auth, "apns-topic": testTopic}
		status, reason, _ := rawSend(t, hc, e, "POST", "/3/device/"+deviceToken(1), h, `{"aps":{"alert":"x"}}`)
		if reason != tt.reason || (tt.reason == "" && status != 200) || (tt.reason != "" && status != 403) {
			t.Errorf("%s: %d %q, want %q", tt.name, status, reason, tt.reason)
		}
	}
	open := startEmulator(t, apnsemu.Config{Now: clock.Now, AcceptUnknownKeys: true})
	h := map[string]string{"authorization": "bearer " + signJWT(t, other, jwt.SigningMethodES256, "REALKEY001", "REALTEAM01", now), "apns-topic": testTopic}
	if status, reason, _ := rawSend(t, h2Client(open), open, "POST", "/3/device/"+deviceToken(1), h, `{"aps":{}}`); status != 200 {
		t.Errorf("AcceptUnknownKeys: %d %q", status, reason)
	}
	if err := e.RegisterKey("short", kid, &key.PublicKey); err == nil {
		t.Error("RegisterKey accepted a malformed team id")
	}
	if err := e.RegisterKey("TEAM000001", kid, nil); err == nil {
		t.Error("RegisterKey accepted a nil key")
	}
}

func TestEmulatorHTTPAPI(t *testing.T) {
	t.Parallel()
	e := startEmulator(t, apnsemu.Config{})
	hc := h2Client(e)
	get := func(path string) []byte {
		t.Helper()
		resp, err := hc.Get(e.URL() + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != 200 {
			t.Fatalf("GET %s: %d %s", path, resp.StatusCode, b)
		}
		return b
	}
	do := func(method, path, body string) (int, []byte) {
		t.Helper()
		req, _ := http.NewRequest(method, e.URL()+path, strings.NewReader(body))
		resp, err := hc.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, b
	}

	// A key over HTTP, as a client in another language would get it.
	status, raw := do("POST", "/emulator/keys?team_id=TEAM000009", "")
	var key struct{ TeamID, KeyID, KeyP8 string }
	if err := json.Unmarshal(raw, &struct {
		TeamID *string `json:"team_id"`
		KeyID  *string `json:"key_id"`
		KeyP8  *string `json:"key_p8"`
	}{&key.TeamID, &key.KeyID, &key.KeyP8}); err != nil || status != 200 {
		t.Fatalf("POST /emulator/keys: %d %s", status, raw)
	}
	if status, _ := do("POST", "/emulator/keys?team_id=bad", ""); status != 400 {
		t.Errorf("bad team id: %d", status)
	}
	// The CA over HTTP is the one the client trusts.
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(get("/emulator/ca.pem")) || !bytes.Equal(get("/emulator/ca.pem"), e.CACertPEM()) {
		t.Fatal("/emulator/ca.pem is not the emulator's certificate")
	}
	c, err := New(Config{KeyP8: []byte(key.KeyP8), KeyID: key.KeyID, TeamID: key.TeamID, Topic: testTopic, Endpoint: e.URL(), RootCAs: pool})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		mustSend(t, c, message(deviceToken(i%2), heraldtype.PayloadAlert, heraldtype.PriorityHigh))
	}
	var msgs []apnsemu.Received
	if err := json.Unmarshal(get("/emulator/messages?token="+deviceToken(0)), &msgs); err != nil || len(msgs) != 2 {
		t.Fatalf("messages to token 0: %v %+v", err, msgs)
	}
	var stats apnsemu.Stats
	if err := json.Unmarshal(get("/emulator/stats"), &stats); err != nil || stats.Accepted != 3 || stats.ProviderTokens != 1 {
		t.Fatalf("stats %v %+v", err, stats)
	}

	// Faults over HTTP.
	if status, b := do("PUT", "/emulator/faults", `{"tokens":{"`+deviceToken(5)+`":{"reason":"Unregistered"}},"latency_ms":1}`); status != 200 {
		t.Fatalf("PUT faults: %d %s", status, b)
	}
	for _, bad := range []string{`{"tokens":{"t":{"reason":"Nope"}}}`, `{"too_many_requests":{"rate":2}}`, `{"unknown":1}`,
		`{"too_many_requests":{"rate":0.6},"service_unavailable":{"rate":0.6}}`, `{"latency_ms":-1}`} {
		if status, _ := do("PUT", "/emulator/faults", bad); status != 400 {
			t.Errorf("PUT faults %s: %d, want 400", bad, status)
		}
	}
	var f apnsemu.Faults
	if err := json.Unmarshal(get("/emulator/faults"), &f); err != nil || f.Tokens[deviceToken(5)].Reason != ReasonUnregistered || f.LatencyMillis != 1 {
		t.Fatalf("GET faults: %v %+v", err, f)
	}
	if se := sendErr(t, c, message(deviceToken(5), heraldtype.PayloadAlert, heraldtype.PriorityHigh)); !se.TokenInvalid {
		t.Fatalf("injected Unregistered: %+v", se)
	}
	if status, _ := do("DELETE", "/emulator/faults", ""); status != 204 || len(e.CurrentFaults().Tokens) != 0 {
		t.Fatalf("DELETE faults: %d", status)
	}
	if status, _ := do("DELETE", "/emulator/messages", ""); status != 204 || len(e.Messages()) != 0 || e.Stats().Accepted != 0 {
		t.Fatal("DELETE messages did not reset")
	}
}

// TestEmulatorEarlyRetries counts sends that ignore a Retry-After.
func TestEmulatorEarlyRetries(t *testing.T) {
	t.Parallel()
	clock := newFakeClock()
	e := startEmulator(t, apnsemu.Config{Now: clock.Now})
	c, _ := newTestClient(t, e, clock.Now)
	tok := deviceToken(1)
	m := message(tok, heraldtype.PayloadAlert, heraldtype.PriorityHigh)
	if err := e.FailToken(tok, apnsemu.TokenFault{Reason: ReasonTooManyRequests, RetryAfterSeconds: 30, Times: 1}); err != nil {
		t.Fatal(err)
	}
	if se := sendErr(t, c, m); se.RetryAfter != 30*time.Second {
		t.Fatalf("got %+v", se)
	}
	clock.Advance(10 * time.Second)
	mustSend(t, c, m) // too early
	clock.Advance(21 * time.Second)
	mustSend(t, c, m)
	if n := e.Stats().EarlyRetries; n != 1 {
		t.Fatalf("EarlyRetries = %d, want 1", n)
	}
}

func TestEmulatorRateFaults(t *testing.T) {
	t.Parallel()
	e := startEmulator(t, apnsemu.Config{})
	c, _ := newTestClient(t, e, nil)
	m := message(deviceToken(1), heraldtype.PayloadAlert, heraldtype.PriorityHigh)
	for _, tc := range []struct {
		f      apnsemu.Faults
		reason string
		class  heraldtype.ErrorClass
	}{
		{apnsemu.Faults{TooManyRequests: apnsemu.RateFault{Rate: 1, RetryAfterSeconds: 2}}, ReasonTooManyRequests, heraldtype.ClassThrottled},
		{apnsemu.Faults{InternalServerError: apnsemu.RateFault{Rate: 1}}, ReasonInternalServerError, heraldtype.ClassTemporary},
		{apnsemu.Faults{ServiceUnavailable: apnsemu.RateFault{Rate: 1}}, ReasonServiceUnavailable, heraldtype.ClassTemporary},
	} {
		if err := e.SetFaults(tc.f); err != nil {
			t.Fatal(err)
		}
		if se := sendErr(t, c, m); se.Code != tc.reason || se.Class != tc.class {
			t.Errorf("%s: got %+v", tc.reason, se)
		}
	}
	// Half the sends fail at rate 0.5 (seeded, so the count is stable).
	if err := e.SetFaults(apnsemu.Faults{ServiceUnavailable: apnsemu.RateFault{Rate: 0.5}}); err != nil {
		t.Fatal(err)
	}
	failed := 0
	for range 40 {
		if _, err := c.Send(context.Background(), m); err != nil {
			failed++
		}
	}
	if failed < 10 || failed > 30 {
		t.Errorf("%d of 40 sends failed at rate 0.5", failed)
	}
}

// TestEmulatorLatency: a send slower than the Client's timeout is a
// temporary network failure.
func TestEmulatorLatency(t *testing.T) {
	t.Parallel()
	e := startEmulator(t, apnsemu.Config{})
	cfg := clientConfig(t, e)
	cfg.Timeout = 50 * time.Millisecond
	c, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := e.SetFaults(apnsemu.Faults{LatencyMillis: 5000}); err != nil {
		t.Fatal(err)
	}
	se := sendErr(t, c, message(deviceToken(1), heraldtype.PayloadAlert, heraldtype.PriorityHigh))
	if se.Class != heraldtype.ClassTemporary || se.Code != codeNetwork {
		t.Fatalf("got %+v", se)
	}
}

func TestEmulatorLogsAcceptedMessages(t *testing.T) {
	t.Parallel()
	var buf syncBuffer
	e := startEmulator(t, apnsemu.Config{Logger: slog.New(slog.NewJSONHandler(&buf, nil))})
	c, _ := newTestClient(t, e, nil)
	mustSend(t, c, message(deviceToken(3), heraldtype.PayloadAlert, heraldtype.PriorityHigh))
	out := buf.String()
	if !strings.Contains(out, "apns emulator: message accepted") || !strings.Contains(out, deviceToken(3)) || !strings.Contains(out, "Price drop") {
		t.Fatalf("log %s", out)
	}
}
