package webpush

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	webpushemu "github.com/heraldhq/herald/emulator/webpush"
	"github.com/heraldhq/herald/heraldtype"
)

// TestErrorTable drives every status of PROTOCOLS.md's Web Push rules
// through the emulator and checks the classification: only 404/410
// invalidate the device; 401/403 are configuration; 429 throttles; 5xx
// retries, honouring Retry-After.
func TestErrorTable(t *testing.T) {
	t.Parallel()
	clock := newFakeClock()
	e := startEmulator(t, webpushemu.Config{Now: clock.Now})
	c := newTestClient(t, clock.Now)

	tests := []struct {
		fault        webpushemu.SubscriptionFault
		class        heraldtype.ErrorClass
		code         string
		retryAfter   time.Duration
		tokenInvalid bool
	}{
		{webpushemu.SubscriptionFault{Status: 404}, heraldtype.ClassPermanent, CodeNotFound, 0, true},
		{webpushemu.SubscriptionFault{Status: 410}, heraldtype.ClassPermanent, CodeGone, 0, true},
		{webpushemu.SubscriptionFault{Status: 413}, heraldtype.ClassPermanent, CodePayloadTooLarge, 0, false},
		{webpushemu.SubscriptionFault{Status: 400}, heraldtype.ClassPermanent, CodeBadRequest, 0, false},
		// A VAPID problem is the sender's configuration, never the
		// device's fault (S0.3 note).
		{webpushemu.SubscriptionFault{Status: 401}, heraldtype.ClassPermanent, CodeVAPIDRejected, 0, false},
		{webpushemu.SubscriptionFault{Status: 403}, heraldtype.ClassPermanent, CodeVAPIDRejected, 0, false},
		{webpushemu.SubscriptionFault{Status: 429}, heraldtype.ClassThrottled, CodeRateLimited, 0, false},
		{webpushemu.SubscriptionFault{Status: 429, RetryAfterSeconds: 120}, heraldtype.ClassThrottled, CodeRateLimited, 2 * time.Minute, false},
		{webpushemu.SubscriptionFault{Status: 429, RetryAfterSeconds: 30, RetryAfterHTTPDate: true}, heraldtype.ClassThrottled, CodeRateLimited, 30 * time.Second, false},
		{webpushemu.SubscriptionFault{Status: 500, RetryAfterSeconds: 7}, heraldtype.ClassTemporary, "http_500", 7 * time.Second, false},
		{webpushemu.SubscriptionFault{Status: 502}, heraldtype.ClassTemporary, "http_502", 0, false},
		{webpushemu.SubscriptionFault{Status: 503, RetryAfterSeconds: 30}, heraldtype.ClassTemporary, "http_503", 30 * time.Second, false},
		// Retry-After on a permanent answer means nothing: no retry.
		{webpushemu.SubscriptionFault{Status: 410, RetryAfterSeconds: 30}, heraldtype.ClassPermanent, CodeGone, 0, true},
	}
	for _, tt := range tests {
		m := subscribe(e)
		if err := e.FailSubscription(m.Device.Token, tt.fault); err != nil {
			t.Fatal(err)
		}
		se := sendErr(t, c, m)
		if se.Class != tt.class || se.Code != tt.code || se.RetryAfter != tt.retryAfter || se.TokenInvalid != tt.tokenInvalid {
			t.Errorf("fault %+v:\n got  class=%s code=%s retryAfter=%v tokenInvalid=%v (%q)\n want class=%s code=%s retryAfter=%v tokenInvalid=%v",
				tt.fault, se.Class, se.Code, se.RetryAfter, se.TokenInvalid, se.Message, tt.class, tt.code, tt.retryAfter, tt.tokenInvalid)
		}
		if !strings.HasPrefix(se.Message, "HTTP ") || !strings.Contains(se.Message, "errno") {
			t.Errorf("fault %d: message %q lacks the status and the service's errno", tt.fault.Status, se.Message)
		}
	}
	if n := len(e.Messages()); n != 0 {
		t.Errorf("%d faulted messages were recorded", n)
	}
}

// TestSubscriptionGone: the user revoked permission → 410 → the dispatcher
// invalidates the device; an unknown subscription → 404, the same.
func TestSubscriptionGone(t *testing.T) {
	t.Parallel()
	e := startEmulator(t, webpushemu.Config{})
	c := newTestClient(t, nil)
	m := subscribe(e)
	if _, err := c.Send(context.Background(), m); err != nil {
		t.Fatal(err)
	}
	if err := e.ExpireSubscription(m.Device.Token); err != nil {
		t.Fatal(err)
	}
	if se := sendErr(t, c, m); se.Code != CodeGone || !se.TokenInvalid || se.Class != heraldtype.ClassPermanent {
		t.Errorf("expired subscription: %+v", se)
	}
	m.Device.Token = e.URL() + "/push/never-created"
	if se := sendErr(t, c, m); se.Code != CodeNotFound || !se.TokenInvalid || se.Class != heraldtype.ClassPermanent {
		t.Errorf("unknown subscription: %+v", se)
	}
	if err := e.ExpireSubscription("nope"); err == nil {
		t.Error("expiring an unknown subscription succeeded")
	}
	if s := e.Stats(); s.Accepted != 1 || s.Rejected[webpushemu.ReasonGone] != 1 || s.Rejected[webpushemu.ReasonNotFound] != 1 {
		t.Errorf("stats %+v", s)
	}
}

// TestNetworkErrors: no answer at all is temporary; an endpoint that the
// dial guard refuses is permanent but leaves the device alone.
func TestNetworkErrors(t *testing.T) {
	t.Parallel()
	e := startEmulator(t, webpushemu.Config{})
	m := subscribe(e)
	e.Close()
	se := sendErr(t, newTestClient(t, nil), m)
	if se.Class != heraldtype.ClassTemporary || se.Code != codeNetwork || se.TokenInvalid {
		t.Errorf("closed server: %+v", se)
	}

	// The dial guard sees the address actually dialled, whatever the
	// name: here the loopback literal slips past nothing but the guard.
	guarded := startEmulator(t, webpushemu.Config{})
	m = subscribe(guarded)
	cfg := testConfig(nil)
	cfg.AllowPrivateEndpoints = false
	c, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	req, _ := http.NewRequest(http.MethodPost, m.Device.Token, nil)
	_, err = c.http.Do(req)
	if !errors.Is(err, errForbiddenAddress) {
		t.Errorf("the default transport dialled loopback: %v", err)
	}
	for addr, ok := range map[string]bool{
		"127.0.0.1:443": false, "10.1.2.3:443": false, "169.254.169.254:80": false, "100.64.0.1:443": false,
		"[::1]:443": false, "[fe80::1]:443": false, "0.0.0.0:443": false, "[::ffff:192.168.1.1]:443": false,
		"142.250.74.10:443": true, "[2a00:1450:4001:80b::200a]:443": true,
	} {
		if err := guardDial("tcp", addr, nil); (err == nil) != ok {
			t.Errorf("guardDial(%s) = %v, want allowed=%v", addr, err, ok)
		}
	}
}

func TestClassifyResponseEdges(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)
	tests := []struct {
		status int
		body   string
		class  heraldtype.ErrorClass
		code   string
		msg    string
	}{
		{408, "", heraldtype.ClassTemporary, "http_408", "HTTP 408 Request Timeout"},
		{307, "", heraldtype.ClassPermanent, "http_307", "HTTP 307 Temporary Redirect"},
		{422, "nope", heraldtype.ClassPermanent, "http_422", "HTTP 422 Unprocessable Entity: nope"},
		{502, "<html><body>Bad Gateway</body></html>", heraldtype.ClassTemporary, "http_502", "HTTP 502 Bad Gateway"},
		{400, `{"reason":"BadJwtToken"}`, heraldtype.ClassPermanent, CodeBadRequest, "HTTP 400 Bad Request: BadJwtToken"},
		{400, "line one\nline two", heraldtype.ClassPermanent, CodeBadRequest, "HTTP 400 Bad Request: line one line two"},
	}
	for _, tt := range tests {
		se := classifyResponse(tt.status, http.Header{}, []byte(tt.body), now)
		if se.Class != tt.class || se.Code != tt.code || se.Message != tt.msg {
			t.Errorf("%d %q: %+v", tt.status, tt.body, se)
		}
	}
	long := classifyResponse(400, http.Header{}, []byte(strings.Repeat("é", 300)), now)
	if len(long.Message) > maxErrorText+40 || !strings.HasSuffix(long.Message, "…") {
		t.Errorf("long body kept as %d bytes: %q", len(long.Message), long.Message)
	}
	for v, want := range map[string]time.Duration{
		"": 0, "0": 0, "-5": 0, "abc": 0, " 12 ": 12 * time.Second, "999999999999": MaxTTL,
		now.Add(90 * time.Second).Format(http.TimeFormat): 90 * time.Second,
		now.Add(-time.Hour).Format(http.TimeFormat):       0,
	} {
		if got := parseRetryAfter(v, now); got != want {
			t.Errorf("Retry-After %q = %v, want %v", v, got, want)
		}
	}
}
