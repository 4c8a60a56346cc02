package apns

import (
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	apnsemu "github.com/heraldhq/herald/emulator/apns"
	"github.com/heraldhq/herald/heraldtype"
)

// TestErrorTable drives every APNs reason through the emulator's fault
// injection and checks the classification (PROTOCOLS.md APNs section).
func TestErrorTable(t *testing.T) {
	t.Parallel()
	clock := newFakeClock()
	e := startEmulator(t, apnsemu.Config{Now: clock.Now})
	c, _ := newTestClient(t, e, clock.Now)

	const (
		perm     = heraldtype.ClassPermanent
		temp     = heraldtype.ClassTemporary
		throttle = heraldtype.ClassThrottled
	)
	tests := []struct {
		fault        apnsemu.TokenFault
		class        heraldtype.ErrorClass
		retryAfter   time.Duration
		tokenInvalid bool
	}{
		// The device token is dead: never use it again (S0.3).
		{apnsemu.TokenFault{Reason: ReasonUnregistered}, perm, 0, true},
		{apnsemu.TokenFault{Reason: ReasonExpiredToken}, perm, 0, true},
		// A bad token is usually an environment mismatch: permanent, but
		// the device is not invalidated.
		{apnsemu.TokenFault{Reason: ReasonBadDeviceToken}, perm, 0, false},
		{apnsemu.TokenFault{Reason: ReasonDeviceTokenNotForTopic}, perm, 0, false},
		// Request bugs.
		{apnsemu.TokenFault{Reason: ReasonBadCollapseID}, perm, 0, false},
		{apnsemu.TokenFault{Reason: ReasonBadExpirationDate}, perm, 0, false},
		{apnsemu.TokenFault{Reason: ReasonBadMessageID}, perm, 0, false},
		{apnsemu.TokenFault{Reason: ReasonBadPriority}, perm, 0, false},
		{apnsemu.TokenFault{Reason: ReasonBadTopic}, perm, 0, false},
		{apnsemu.TokenFault{Reason: ReasonDuplicateHeaders}, perm, 0, false},
		{apnsemu.TokenFault{Reason: ReasonInvalidPushType}, perm, 0, false},
		{apnsemu.TokenFault{Reason: ReasonMissingDeviceToken}, perm, 0, false},
		{apnsemu.TokenFault{Reason: ReasonMissingTopic}, perm, 0, false},
		{apnsemu.TokenFault{Reason: ReasonPayloadEmpty}, perm, 0, false},
		{apnsemu.TokenFault{Reason: ReasonTopicDisallowed}, perm, 0, false},
		{apnsemu.TokenFault{Reason: ReasonPayloadTooLarge}, perm, 0, false},
		{apnsemu.TokenFault{Reason: ReasonBadPath}, perm, 0, false},
		{apnsemu.TokenFault{Reason: ReasonMethodNotAllowed}, perm, 0, false},
		// Configuration: the sender's fault, never the device's.
		{apnsemu.TokenFault{Reason: ReasonInvalidProviderToken}, perm, 0, false},
		{apnsemu.TokenFault{Reason: ReasonMissingProviderToken}, perm, 0, false},
		{apnsemu.TokenFault{Reason: ReasonBadCertificate}, perm, 0, false},
		{apnsemu.TokenFault{Reason: ReasonBadCertificateEnvironment}, perm, 0, false},
		{apnsemu.TokenFault{Reason: ReasonForbidden}, perm, 0, false},
		{apnsemu.TokenFault{Reason: ReasonUnrelatedKeyIDInToken}, perm, 0, false},
		{apnsemu.TokenFault{Reason: ReasonBadEnvironmentKeyIDInToken}, perm, 0, false},
		// New JWT, then the dispatcher's next attempt.
		{apnsemu.TokenFault{Reason: ReasonExpiredProviderToken}, temp, 0, false},
		{apnsemu.TokenFault{Reason: ReasonTooManyProviderTokenUpdates}, temp, 0, false},
		// Throttled, honouring Retry-After in either form.
		{apnsemu.TokenFault{Reason: ReasonTooManyRequests}, throttle, 0, false},
		{apnsemu.TokenFault{Reason: ReasonTooManyRequests, RetryAfterSeconds: 30}, throttle, 30 * time.Second, false},
		{apnsemu.TokenFault{Reason: ReasonTooManyRequests, RetryAfterSeconds: 30, RetryAfterHTTPDate: true}, throttle, 30 * time.Second, false},
		// Transient.
		{apnsemu.TokenFault{Reason: ReasonInternalServerError}, temp, 0, false},
		{apnsemu.TokenFault{Reason: ReasonServiceUnavailable, RetryAfterSeconds: 7}, temp, 7 * time.Second, false},
		{apnsemu.TokenFault{Reason: ReasonShutdown}, temp, 0, false},
		{apnsemu.TokenFault{Reason: ReasonIdleTimeout}, temp, 0, false},
	}
	for i, tt := range tests {
		tok := deviceToken(1000 + i)
		if err := e.FailToken(tok, tt.fault); err != nil {
			t.Fatal(err)
		}
		se := sendErr(t, c, message(tok, heraldtype.PayloadAlert, heraldtype.PriorityNormal))
		if se.Class != tt.class || se.Code != tt.fault.Reason || se.RetryAfter != tt.retryAfter || se.TokenInvalid != tt.tokenInvalid {
			t.Errorf("fault %+v:\n got  class=%s code=%s retryAfter=%v tokenInvalid=%v (%q)\n want class=%s retryAfter=%v tokenInvalid=%v",
				tt.fault, se.Class, se.Code, se.RetryAfter, se.TokenInvalid, se.Message, tt.class, tt.retryAfter, tt.tokenInvalid)
		}
		status, desc := reasonStatus(tt.fault.Reason)
		if want := "APNs answered HTTP " + strconv.Itoa(status) + " " + tt.fault.Reason + ": " + desc; !strings.HasPrefix(se.Message, want) {
			t.Errorf("fault %s: message %q, want it to start with %q", tt.fault.Reason, se.Message, want)
		}
	}
	if n := e.Stats().Accepted; n != 0 {
		t.Errorf("emulator accepted %d messages", n)
	}
}

// TestGoneCarriesTimestamp checks the 410 body's timestamp reaches the
// message, for operators reading dead letters.
func TestGoneCarriesTimestamp(t *testing.T) {
	t.Parallel()
	clock := newFakeClock()
	e := startEmulator(t, apnsemu.Config{Now: clock.Now})
	c, _ := newTestClient(t, e, clock.Now)
	tok := deviceToken(7)
	if err := e.FailToken(tok, apnsemu.TokenFault{Reason: ReasonUnregistered}); err != nil {
		t.Fatal(err)
	}
	se := sendErr(t, c, message(tok, heraldtype.PayloadAlert, heraldtype.PriorityNormal))
	if want := "token invalid since 2026-03-01T09:00:00Z"; !strings.Contains(se.Message, want) {
		t.Fatalf("message %q lacks %q", se.Message, want)
	}
}

func TestClassifyResponseFallbacks(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	tests := []struct {
		status       int
		body         string
		class        heraldtype.ErrorClass
		code         string
		tokenInvalid bool
	}{
		{400, `{"reason":"SomethingNew"}`, heraldtype.ClassPermanent, "SomethingNew", false},
		{400, `{"reason":"BadPayload"}`, heraldtype.ClassPermanent, "BadPayload", false},
		{403, `{"reason":"SomethingNew"}`, heraldtype.ClassPermanent, "SomethingNew", false},
		{410, `{"reason":"SomethingNew","timestamp":1}`, heraldtype.ClassPermanent, "SomethingNew", true},
		{429, `{}`, heraldtype.ClassThrottled, "http_429", false},
		{500, `<html>oops</html>`, heraldtype.ClassTemporary, "http_500", false},
		{502, ``, heraldtype.ClassTemporary, "http_502", false},
		{408, ``, heraldtype.ClassTemporary, "http_408", false},
		{404, `not json`, heraldtype.ClassPermanent, "http_404", false},
	}
	for _, tt := range tests {
		se := classifyResponse(tt.status, http.Header{}, []byte(tt.body), now)
		if se.Class != tt.class || se.Code != tt.code || se.TokenInvalid != tt.tokenInvalid || se.Message == "" {
			t.Errorf("%d %s: got %+v", tt.status, tt.body, se)
		}
	}
}

func TestParseRetryAfter(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	tests := map[string]time.Duration{
		"":    0,
		"12":  12 * time.Second,
		" 3 ": 3 * time.Second,
		"0":   0,
		"-5":  0,
		"abc": 0,
		now.Add(90 * time.Second).Format(http.TimeFormat): 90 * time.Second,
		now.Add(-time.Hour).Format(http.TimeFormat):       0,
		"99999999999999": maxRetryAfter,
	}
	for in, want := range tests {
		if got := parseRetryAfter(in, now); got != want {
			t.Errorf("parseRetryAfter(%q) = %v, want %v", in, got, want)
		}
	}
}
