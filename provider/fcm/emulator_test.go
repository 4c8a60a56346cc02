package fcm

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"

	fcmemu "github.com/heraldhq/herald/emulator/fcm"
	"github.com/heraldhq/herald/heraldtype"
)

// post sends body to the emulator's path with a bearer token and returns
// the status and decoded Google error (if any).
func post(t *testing.T, e *fcmemu.Emulator, path, token, body string) (int, googleError, http.Header) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, e.URL()+path, strings.NewReader(body))
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	var ge googleError
	_ = json.Unmarshal(raw, &ge)
	return resp.StatusCode, ge, resp.Header
}

func hasFcmError(ge googleError, code string) bool {
	for _, d := range ge.Error.Details {
		if d.Type == fcmErrorType && d.ErrorCode == code {
			return true
		}
	}
	return false
}

func TestTokenEndpoint(t *testing.T) {
	t.Parallel()
	e := startEmulator(t, fcmemu.Config{})
	var sa serviceAccount
	if err := json.Unmarshal(e.ServiceAccountJSON("p"), &sa); err != nil {
		t.Fatal(err)
	}
	forgedKey, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	assertion := func(key *rsa.PrivateKey, edit func(jwt.MapClaims)) string {
		claims := jwt.MapClaims{"iss": sa.ClientEmail, "scope": messagingScope, "aud": sa.TokenURI,
			"iat": now.Unix(), "exp": now.Add(time.Hour).Unix()}
		if edit != nil {
			edit(claims)
		}
		s, err := jwt.NewWithClaims(jwt.SigningMethodRS256, claims).SignedString(key)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	tests := []struct {
		name, form string
		status     int
		oauthErr   string
	}{
		{"valid", "assertion=" + assertion(testKey(), nil), 200, ""},
		{"forged signature", "assertion=" + assertion(forgedKey, nil), 400, "invalid_grant"},
		{"unknown account", "assertion=" + assertion(testKey(), func(c jwt.MapClaims) { c["iss"] = "x@y" }), 400, "invalid_grant"},
		{"wrong audience", "assertion=" + assertion(testKey(), func(c jwt.MapClaims) { c["aud"] = "https://oauth2.googleapis.com/token" }), 400, "invalid_grant"},
		{"expired", "assertion=" + assertion(testKey(), func(c jwt.MapClaims) { c["exp"] = now.Add(-time.Hour).Unix() }), 400, "invalid_grant"},
		{"too long-lived", "assertion=" + assertion(testKey(), func(c jwt.MapClaims) { c["exp"] = now.Add(5 * time.Hour).Unix() }), 400, "invalid_grant"},
		{"no scope", "assertion=" + assertion(testKey(), func(c jwt.MapClaims) { c["scope"] = "email" }), 400, "invalid_scope"},
		{"not a JWT", "assertion=abc", 400, "invalid_grant"},
		{"no assertion", "", 400, "invalid_request"},
	}
	for _, tt := range tests {
		form := "grant_type=" + url.QueryEscape("urn:ietf:params:oauth:grant-type:jwt-bearer") + "&" + tt.form
		resp, err := http.Post(sa.TokenURI, "application/x-www-form-urlencoded", strings.NewReader(form))
		if err != nil {
			t.Fatal(err)
		}
		var body struct {
			AccessToken string `json:"access_token"`
			ExpiresIn   int    `json:"expires_in"`
			TokenType   string `json:"token_type"`
			Error       string `json:"error"`
			Description string `json:"error_description"`
		}
		_ = json.NewDecoder(resp.Body).Decode(&body)
		resp.Body.Close()
		if resp.StatusCode != tt.status || body.Error != tt.oauthErr {
			t.Errorf("%s: %d %+v, want %d %q", tt.name, resp.StatusCode, body, tt.status, tt.oauthErr)
		}
		if tt.status == 200 && (body.AccessToken == "" || body.ExpiresIn != 3600 || body.TokenType != "Bearer") {
			t.Errorf("%s: token answer %+v", tt.name, body)
		}
	}
	resp, err := http.PostForm(sa.TokenURI, url.Values{"grant_type": {"client_credentials"}})
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 400 {
		t.Errorf("wrong grant type: %d", resp.StatusCode)
	}
}

func TestEmulatorAuthorization(t *testing.T) {
	t.Parallel()
	e := startEmulator(t, fcmemu.Config{})
	body := `{"message":{"token":"t"}}`
	status, ge, _ := post(t, e, "/v1/projects/p/messages:send", "", body)
	if status != 401 || ge.Error.Status != "UNAUTHENTICATED" || len(ge.Error.Details) != 0 {
		t.Errorf("no token: %d %+v", status, ge)
	}
	status, _, _ = post(t, e, "/v1/projects/p/messages:send", "ya29.made-up", body)
	if status != 401 {
		t.Errorf("unknown token: %d", status)
	}
	status, ge, _ = post(t, e, "/v1/projects/other/messages:send", e.IssueToken("p"), body)
	if status != 403 || ge.Error.Status != "PERMISSION_DENIED" {
		t.Errorf("other project: %d %+v", status, ge)
	}
	open := startEmulator(t, fcmemu.Config{AcceptAnyToken: true})
	if status, _, _ := post(t, open, "/v1/projects/x/messages:send", "static", body); status != 200 {
		t.Errorf("AcceptAnyToken: %d", status)
	}
	if s := e.Stats(); s.Rejected["UNAUTHENTICATED"] != 2 || s.Rejected["PERMISSION_DENIED"] != 1 {
		t.Errorf("stats %+v", s)
	}
}

func TestEmulatorValidation(t *testing.T) {
	t.Parallel()
	e := startEmulator(t, fcmemu.Config{})
	tok := e.IssueToken("p")
	big := strings.Repeat("x", 4100)
	tests := []struct {
		name, body string
		status     int // 200 or 400
		fcmError   bool
		contains   string
	}{
		{"minimal", `{"message":{"token":"t"}}`, 200, false, ""},
		{"camelCase and options", `{"validateOnly":false,"message":{"token":"t","fcmOptions":{"analyticsLabel":"l"},
			"android":{"collapseKey":"c","priority":"HIGH","ttl":"3.5s","directBootOk":true,"notification":{"title":"x","channel_id":"c"}},
			"apns":{"headers":{"apns-priority":"5","apns-push-type":"background"},"payload":{"aps":{"content-available":1},"custom":"x"}},
			"webpush":{"headers":{"TTL":"60","Urgency":"very-low"},"data":{"a":"b"},"notification":{"title":"x"}}}}`, 200, false, ""},
		{"topic", `{"message":{"topic":"/topics/news.kr"}}`, 200, false, ""},
		{"not JSON", `{"message":`, 400, false, "Invalid JSON payload"},
		{"unknown field", `{"message":{"token":"t","tokn":"x"}}`, 400, false, `Unknown name "tokn" at 'message'`},
		{"unknown android field", `{"message":{"token":"t","android":{"prio":"high"}}}`, 400, false, `Unknown name "prio"`},
		{"no target", `{"message":{"data":{"a":"b"}}}`, 400, true, "Recipient of the message is not set"},
		{"two targets", `{"message":{"token":"t","topic":"x"}}`, 400, false, "oneof field 'target' is already set"},
		{"empty token", `{"message":{"token":""}}`, 400, true, "not a valid FCM registration token"},
		{"bad topic", `{"message":{"topic":"a b"}}`, 400, true, "Invalid topic name"},
		{"data not string", `{"message":{"token":"t","data":{"n":1}}}`, 400, false, "TYPE_STRING"},
		{"reserved data key", `{"message":{"token":"t","data":{"from":"x"}}}`, 400, true, "from"},
		{"android priority", `{"message":{"token":"t","android":{"priority":"urgent"}}}`, 400, false, "AndroidMessagePriority"},
		{"ttl format", `{"message":{"token":"t","android":{"ttl":"3600"}}}`, 400, false, "google.protobuf.Duration"},
		{"ttl range", `{"message":{"token":"t","android":{"ttl":"2419201s"}}}`, 400, true, "TTL"},
		{"apns priority", `{"message":{"token":"t","apns":{"headers":{"apns-priority":"7"}}}}`, 400, true, "apns-priority"},
		{"background at 10", `{"message":{"token":"t","apns":{"headers":{"apns-priority":"10","apns-push-type":"background"}}}}`, 400, true, "apns-priority 5"},
		{"push type", `{"message":{"token":"t","apns":{"headers":{"apns-push-type":"loud"}}}}`, 400, true, "apns-push-type"},
		{"aps not object", `{"message":{"token":"t","apns":{"payload":{"aps":1}}}}`, 400, false, "aps"},
		{"webpush urgency", `{"message":{"token":"t","webpush":{"headers":{"Urgency":"asap"}}}}`, 400, true, "Urgency"},
		{"too big", `{"message":{"token":"t","data":{"k":"` + big + `"}}}`, 400, false, "Message is too big"},
	}
	for _, tt := range tests {
		status, ge, _ := post(t, e, "/v1/projects/p/messages:send", tok, tt.body)
		if status != tt.status {
			t.Errorf("%s: status %d (%+v), want %d", tt.name, status, ge, tt.status)
			continue
		}
		if status == 200 {
			continue
		}
		if ge.Error.Code != 400 || ge.Error.Status != "INVALID_ARGUMENT" || hasFcmError(ge, CodeInvalidArgument) != tt.fcmError ||
			!strings.Contains(ge.Error.Message, tt.contains) {
			t.Errorf("%s: %+v, want FcmError=%v and a message containing %q", tt.name, ge, tt.fcmError, tt.contains)
		}
	}
	if n := len(e.Messages()); n != 3 {
		t.Errorf("recorded %d messages, want 3", n)
	}
}

func TestEmulatorRecordingOverHTTP(t *testing.T) {
	t.Parallel()
	e := startEmulator(t, fcmemu.Config{})
	c := newTestClient(t, e, nil)
	for _, tok := range []string{"a", "b", "a"} {
		if _, err := c.Send(context.Background(), message(heraldtype.PlatformAndroid, tok, heraldtype.PayloadAlert, heraldtype.PriorityHigh)); err != nil {
			t.Fatal(err)
		}
	}
	list := func(query string) []fcmemu.Received {
		resp, err := http.Get(e.URL() + "/emulator/messages" + query)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var out []fcmemu.Received
		if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
			t.Fatal(err)
		}
		return out
	}
	if all, a := list(""), list("?token=a"); len(all) != 3 || len(a) != 2 || a[0].Token != "a" || len(a[0].Message) == 0 {
		t.Fatalf("all=%+v a=%+v", all, a)
	}
	req, _ := http.NewRequest(http.MethodDelete, e.URL()+"/emulator/messages", nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if got := list(""); resp.StatusCode != 204 || len(got) != 0 || e.Stats().Accepted != 0 {
		t.Fatalf("after DELETE: %d, %d messages, stats %+v", resp.StatusCode, len(got), e.Stats())
	}
}

func TestEmulatorRingKeepsNewest(t *testing.T) {
	t.Parallel()
	e := startEmulator(t, fcmemu.Config{MaxRecorded: 2})
	c := newTestClient(t, e, nil)
	for _, tok := range []string{"1", "2", "3"} {
		if _, err := c.Send(context.Background(), message(heraldtype.PlatformAndroid, tok, heraldtype.PayloadAlert, heraldtype.PriorityHigh)); err != nil {
			t.Fatal(err)
		}
	}
	got := e.Messages()
	if len(got) != 2 || got[0].Token != "2" || got[1].Token != "3" || e.Stats().Accepted != 3 {
		t.Fatalf("got %+v", got)
	}
}

func TestEmulatorFaultsOverHTTP(t *testing.T) {
	t.Parallel()
	e := startEmulator(t, fcmemu.Config{})
	do := func(method, body string) (int, string) {
		req, _ := http.NewRequest(method, e.URL()+"/emulator/faults", strings.NewReader(body))
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	if status, body := do(http.MethodPut, `{"tokens":{"dead":{"code":"UNREGISTERED"}},"unavailable":{"rate":0.1,"retry_after_seconds":2},"latency_ms":1}`); status != 200 || !strings.Contains(body, "UNREGISTERED") {
		t.Fatalf("PUT: %d %s", status, body)
	}
	tok := e.IssueToken("p")
	if status, ge, _ := post(t, e, "/v1/projects/p/messages:send", tok, `{"message":{"token":"dead"}}`); status != 404 || !hasFcmError(ge, CodeUnregistered) || ge.Error.Message != "Requested entity was not found." {
		t.Fatalf("dead token: %d %+v", status, ge)
	}
	for _, bad := range []string{`{"tokens":{"x":{"code":"NOPE"}}}`, `{"unavailable":{"rate":2}}`, `{"latency":5}`, `nope`} {
		if status, _ := do(http.MethodPut, bad); status != 400 {
			t.Errorf("PUT %s: %d, want 400", bad, status)
		}
	}
	if status, body := do(http.MethodGet, ""); status != 200 || !strings.Contains(body, `"rate":0.1`) {
		t.Fatalf("GET: %d %s", status, body)
	}
	if status, _ := do(http.MethodDelete, ""); status != 204 {
		t.Fatalf("DELETE: %d", status)
	}
	if status, _, _ := post(t, e, "/v1/projects/p/messages:send", tok, `{"message":{"token":"dead"}}`); status != 200 {
		t.Fatalf("after clearing faults: %d", status)
	}
}

// TestEarlyRetries: a send arriving before the Retry-After the emulator gave
// that token is counted; one after it is not.
func TestEarlyRetries(t *testing.T) {
	t.Parallel()
	clock := newFakeClock()
	e := startEmulator(t, fcmemu.Config{Now: clock.Now})
	c := newTestClient(t, e, clock.Now)
	m := message(heraldtype.PlatformAndroid, "t", heraldtype.PayloadAlert, heraldtype.PriorityHigh)
	if err := e.FailToken("t", fcmemu.TokenFault{Code: CodeUnavailable, Times: 2, RetryAfterSeconds: 10}); err != nil {
		t.Fatal(err)
	}
	if se := sendErr(t, c, m); se.RetryAfter != 10*time.Second {
		t.Fatalf("got %+v", se)
	}
	clock.Advance(10 * time.Second) // exactly on time
	sendErr(t, c, m)
	clock.Advance(9 * time.Second) // one second early
	if _, err := c.Send(context.Background(), m); err != nil {
		t.Fatal(err)
	}
	if s := e.Stats(); s.EarlyRetries != 1 || s.Rejected[CodeUnavailable] != 2 || s.Accepted != 1 {
		t.Fatalf("stats %+v", s)
	}
}

// TestFaultRatesAreSeeded: the same seed gives the same outcomes.
func TestFaultRatesAreSeeded(t *testing.T) {
	t.Parallel()
	run := func() (fcmemu.Stats, []string) {
		e := startEmulator(t, fcmemu.Config{Seed: 7})
		if err := e.SetFaults(fcmemu.Faults{Unavailable: fcmemu.RateFault{Rate: 0.2}, Internal: fcmemu.RateFault{Rate: 0.1}, QuotaExceeded: fcmemu.RateFault{Rate: 0.1}}); err != nil {
			t.Fatal(err)
		}
		c := newTestClient(t, e, nil)
		var codes []string
		for range 200 {
			_, err := c.Send(context.Background(), message(heraldtype.PlatformAndroid, "t", heraldtype.PayloadAlert, heraldtype.PriorityHigh))
			if err != nil {
				codes = append(codes, heraldtype.AsSendError(err).Code)
			} else {
				codes = append(codes, "ok")
			}
		}
		return e.Stats(), codes
	}
	s1, c1 := run()
	_, c2 := run()
	if strings.Join(c1, ",") != strings.Join(c2, ",") {
		t.Fatal("same seed, different outcomes")
	}
	// 40% faults over 200 sends: loose bounds, the sequence is fixed anyway.
	failed := s1.Rejected[CodeUnavailable] + s1.Rejected[CodeInternal] + s1.Rejected[CodeQuotaExceeded]
	if failed < 50 || failed > 110 || s1.Rejected[CodeUnavailable] == 0 || s1.Rejected[CodeInternal] == 0 || s1.Rejected[CodeQuotaExceeded] == 0 {
		t.Fatalf("stats %+v", s1)
	}
}

func TestEmulatorLatencyAndConcurrency(t *testing.T) {
	t.Parallel()
	e := startEmulator(t, fcmemu.Config{})
	c := newTestClient(t, e, nil)
	if err := e.SetFaults(fcmemu.Faults{LatencyMillis: 30}); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	var wg sync.WaitGroup
	const workers, each = 8, 25
	errs := make(chan error, workers*each)
	for w := range workers {
		wg.Go(func() {
			for i := range each {
				tok := string(rune('a'+w)) + string(rune('a'+i))
				if _, err := c.Send(context.Background(), message(heraldtype.PlatformIOS, tok, heraldtype.PayloadData, heraldtype.PriorityHigh)); err != nil {
					errs <- err
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	elapsed := time.Since(start)
	// Latency is slept outside the lock: 8 workers overlap, so 25 rounds
	// take about 25×30 ms, not 200×30 ms.
	if elapsed < each*30*time.Millisecond || elapsed > workers*each*30*time.Millisecond/2 {
		t.Errorf("200 sends with 30 ms latency took %v", elapsed)
	}
	if s := e.Stats(); s.Accepted != workers*each || s.TokensIssued != 1 {
		t.Fatalf("stats %+v", s)
	}
}

func TestServiceAccountOverHTTP(t *testing.T) {
	t.Parallel()
	e := startEmulator(t, fcmemu.Config{})
	resp, err := http.Get(e.URL() + "/emulator/service-account?project=demo")
	if err != nil {
		t.Fatal(err)
	}
	creds, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	c, err := New(Config{CredentialsJSON: creds, Endpoint: e.URL()})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Send(context.Background(), message(heraldtype.PlatformWeb, "w", heraldtype.PayloadAlert, heraldtype.PriorityLow)); err != nil || c.ProjectID() != "demo" {
		t.Fatalf("send with fetched credentials: %v (project %q)", err, c.ProjectID())
	}
	if resp, err := http.Get(e.URL() + "/emulator/service-account"); err != nil || resp.StatusCode != 400 {
		t.Fatalf("no project: %v %v", resp.StatusCode, err)
	}
}
