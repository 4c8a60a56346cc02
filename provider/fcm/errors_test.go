package fcm

import (
	"context"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	fcmemu "github.com/heraldhq/herald/emulator/fcm"
	"github.com/heraldhq/herald/heraldtype"
)

// TestErrorTable drives every row of PROTOCOLS.md's FCM table (and the
// detail-less answers around it) through the emulator and checks the
// classification (S0.3).
func TestErrorTable(t *testing.T) {
	t.Parallel()
	clock := newFakeClock()
	e := startEmulator(t, fcmemu.Config{Now: clock.Now})
	c := newTestClient(t, e, clock.Now)

	tests := []struct {
		fault        fcmemu.TokenFault
		class        heraldtype.ErrorClass
		code         string
		retryAfter   time.Duration
		tokenInvalid bool
	}{
		{fcmemu.TokenFault{Code: CodeUnregistered}, heraldtype.ClassPermanent, CodeUnregistered, 0, true},
		{fcmemu.TokenFault{Code: CodeInvalidArgument}, heraldtype.ClassPermanent, CodeInvalidArgument, 0, false},
		{fcmemu.TokenFault{Code: fcmemu.FaultInvalidToken}, heraldtype.ClassPermanent, CodeInvalidArgument, 0, true},
		// Configuration errors are the sender's fault: never invalidate
		// the token (S0.3 note).
		{fcmemu.TokenFault{Code: CodeSenderIDMismatch}, heraldtype.ClassPermanent, CodeSenderIDMismatch, 0, false},
		{fcmemu.TokenFault{Code: CodeThirdPartyAuthError}, heraldtype.ClassPermanent, CodeThirdPartyAuthError, 0, false},
		// QUOTA_EXCEEDED waits at least 60 s whatever Retry-After says.
		{fcmemu.TokenFault{Code: CodeQuotaExceeded}, heraldtype.ClassThrottled, CodeQuotaExceeded, time.Minute, false},
		{fcmemu.TokenFault{Code: CodeQuotaExceeded, RetryAfterSeconds: 5}, heraldtype.ClassThrottled, CodeQuotaExceeded, time.Minute, false},
		{fcmemu.TokenFault{Code: CodeQuotaExceeded, RetryAfterSeconds: 120}, heraldtype.ClassThrottled, CodeQuotaExceeded, 2 * time.Minute, false},
		{fcmemu.TokenFault{Code: fcmemu.FaultProjectQuota, RetryAfterSeconds: 90}, heraldtype.ClassThrottled, CodeQuotaExceeded, 90 * time.Second, false},
		{fcmemu.TokenFault{Code: CodeUnavailable}, heraldtype.ClassTemporary, CodeUnavailable, 0, false},
		{fcmemu.TokenFault{Code: CodeUnavailable, RetryAfterSeconds: 30}, heraldtype.ClassTemporary, CodeUnavailable, 30 * time.Second, false},
		{fcmemu.TokenFault{Code: CodeUnavailable, RetryAfterSeconds: 30, RetryAfterHTTPDate: true}, heraldtype.ClassTemporary, CodeUnavailable, 30 * time.Second, false},
		{fcmemu.TokenFault{Code: CodeInternal, RetryAfterSeconds: 7}, heraldtype.ClassTemporary, CodeInternal, 7 * time.Second, false},
		{fcmemu.TokenFault{Code: fcmemu.FaultUnauthenticated}, heraldtype.ClassTemporary, CodeUnauthenticated, 0, false},
		{fcmemu.TokenFault{Code: fcmemu.FaultBadGateway, RetryAfterSeconds: 3}, heraldtype.ClassTemporary, "http_502", 3 * time.Second, false},
	}
	for i, tt := range tests {
		token := "tok-" + tt.fault.Code + "-" + string(rune('a'+i))
		if err := e.FailToken(token, tt.fault); err != nil {
			t.Fatal(err)
		}
		se := sendErr(t, c, message(heraldtype.PlatformAndroid, token, heraldtype.PayloadAlert, heraldtype.PriorityNormal))
		if se.Class != tt.class || se.Code != tt.code || se.RetryAfter != tt.retryAfter || se.TokenInvalid != tt.tokenInvalid {
			t.Errorf("fault %+v:\n got  class=%s code=%s retryAfter=%v tokenInvalid=%v (%q)\n want class=%s code=%s retryAfter=%v tokenInvalid=%v",
				tt.fault, se.Class, se.Code, se.RetryAfter, se.TokenInvalid, se.Message, tt.class, tt.code, tt.retryAfter, tt.tokenInvalid)
		}
		if se.Message == "" {
			t.Errorf("fault %s: empty message", tt.fault.Code)
		}
	}
}

func TestClassifyResponseWithoutDetails(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	h := http.Header{}
	tests := []struct {
		status       int
		body         string
		class        heraldtype.ErrorClass
		code         string
		tokenInvalid bool
	}{
		{400, `{"error":{"code":400,"message":"Invalid JSON payload received. Unknown name \"x\"","status":"INVALID_ARGUMENT","details":[{"@type":"type.googleapis.com/google.rpc.BadRequest","fieldViolations":[{"field":"message","description":"x"}]}]}}`, heraldtype.ClassPermanent, "INVALID_ARGUMENT", false},
		{400, `{"error":{"code":400,"message":"bad","status":"INVALID_ARGUMENT","details":[{"@type":"type.googleapis.com/google.rpc.BadRequest","fieldViolations":[{"field":"message.token","description":"x"}]}]}}`, heraldtype.ClassPermanent, "INVALID_ARGUMENT", true},
		{403, `{"error":{"code":403,"message":"Permission denied","status":"PERMISSION_DENIED"}}`, heraldtype.ClassPermanent, "PERMISSION_DENIED", false},
		{404, `not json`, heraldtype.ClassPermanent, "http_404", false},
		{500, `{"error":{"code":500,"message":"x","status":"INTERNAL"}}`, heraldtype.ClassTemporary, "INTERNAL", false},
		{503, ``, heraldtype.ClassTemporary, "http_503", false},
		{408, ``, heraldtype.ClassTemporary, "http_408", false},
		{401, `{"error":{"code":401,"message":"x","status":"UNAUTHENTICATED"}}`, heraldtype.ClassTemporary, CodeUnauthenticated, false},
	}
	for _, tt := range tests {
		se := classifyResponse(tt.status, h, []byte(tt.body), now, quotaMinRetry)
		if se.Class != tt.class || se.Code != tt.code || se.TokenInvalid != tt.tokenInvalid {
			t.Errorf("%d %s: got %+v", tt.status, tt.body, se)
		}
	}
}

func TestParseRetryAfter(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for v, want := range map[string]time.Duration{
		"":                              0,
		"0":                             0,
		"-5":                            0,
		"12":                            12 * time.Second,
		" 12 ":                          12 * time.Second,
		"Thu, 01 Jan 2026 00:01:00 GMT": time.Minute,
		"Wed, 31 Dec 2025 23:00:00 GMT": 0, // in the past
		"soon":                          0,
		"99999999999999":                MaxTTL,
	} {
		if got := parseRetryAfter(v, now); got != want {
			t.Errorf("parseRetryAfter(%q) = %v, want %v", v, got, want)
		}
	}
}

// TestUnauthenticatedRefreshesToken: a 401 without FcmError is temporary
// and makes the next Send fetch a new access token, without retrying
// inside the provider.
func TestUnauthenticatedRefreshesToken(t *testing.T) {
	t.Parallel()
	e := startEmulator(t, fcmemu.Config{})
	c := newTestClient(t, e, nil)
	m := message(heraldtype.PlatformAndroid, "t", heraldtype.PayloadAlert, heraldtype.PriorityNormal)
	if _, err := c.Send(context.Background(), m); err != nil {
		t.Fatal(err)
	}
	e.RevokeTokens()
	se := sendErr(t, c, m)
	if se.Class != heraldtype.ClassTemporary || se.Code != CodeUnauthenticated {
		t.Fatalf("got %+v", se)
	}
	if n := e.Stats().TokensIssued; n != 1 {
		t.Fatalf("the provider retried by itself: %d tokens issued after one 401", n)
	}
	if _, err := c.Send(context.Background(), m); err != nil {
		t.Fatalf("send after the 401: %v", err)
	}
	if s := e.Stats(); s.TokensIssued != 2 || s.Accepted != 2 {
		t.Fatalf("stats %+v, want a second token and two accepted messages", s)
	}
}

func TestTokenEndpointFailures(t *testing.T) {
	t.Parallel()
	e := startEmulator(t, fcmemu.Config{})
	c := newTestClient(t, e, nil)
	m := message(heraldtype.PlatformAndroid, "t", heraldtype.PayloadAlert, heraldtype.PriorityNormal)
	if err := e.SetFaults(fcmemu.Faults{TokenEndpointFailures: 1}); err != nil {
		t.Fatal(err)
	}
	se := sendErr(t, c, m)
	if se.Class != heraldtype.ClassTemporary || se.Code != codeAuthToken {
		t.Fatalf("token endpoint 503: got %+v", se)
	}
	if _, err := c.Send(context.Background(), m); err != nil {
		t.Fatalf("send once the token endpoint recovered: %v", err)
	}

	// Credentials signed by a key the token endpoint does not know are a
	// configuration error: permanent.
	other := fcmemu.New(fcmemu.Config{PublicURL: e.URL()}) // same token_uri, its own key
	forged, err := New(Config{CredentialsJSON: other.ServiceAccountJSON("p"), Endpoint: e.URL()})
	if err != nil {
		t.Fatal(err)
	}
	se = sendErr(t, forged, m)
	if se.Class != heraldtype.ClassPermanent || se.Code != codeAuthConfig || !strings.Contains(se.Message, "invalid_grant") {
		t.Fatalf("forged credentials: got %+v", se)
	}
}

func TestNetworkErrorIsTemporary(t *testing.T) {
	t.Parallel()
	e := startEmulator(t, fcmemu.Config{})
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	dead := "http://" + l.Addr().String()
	l.Close()
	c, err := New(Config{CredentialsJSON: e.ServiceAccountJSON("p"), Endpoint: dead})
	if err != nil {
		t.Fatal(err)
	}
	se := sendErr(t, c, message(heraldtype.PlatformAndroid, "t", heraldtype.PayloadAlert, heraldtype.PriorityNormal))
	if se.Class != heraldtype.ClassTemporary || se.Code != codeNetwork {
		t.Fatalf("got %+v", se)
	}
}

func TestSendHonoursTimeout(t *testing.T) {
	t.Parallel()
	e := startEmulator(t, fcmemu.Config{})
	// The timeout is far below the emulator's added latency and far
	// above what a loaded machine takes for the token and a plain send
	// (CI under load took more than 50 ms for them).
	c, err := New(Config{CredentialsJSON: e.ServiceAccountJSON("p"), Endpoint: e.URL(), Timeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	m := message(heraldtype.PlatformAndroid, "t", heraldtype.PayloadAlert, heraldtype.PriorityNormal)
	if _, err := c.Send(context.Background(), m); err != nil { // fetch the token first
		t.Fatal(err)
	}
	if err := e.SetFaults(fcmemu.Faults{LatencyMillis: 30000}); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	se := sendErr(t, c, m)
	if se.Class != heraldtype.ClassTemporary || se.Code != codeNetwork || time.Since(start) > 10*time.Second {
		t.Fatalf("got %+v after %v", se, time.Since(start))
	}
}
