package httpapi_test

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/heraldhq/herald"
	"github.com/heraldhq/herald/heraldtype"
	"github.com/heraldhq/herald/httpapi"
	"github.com/heraldhq/herald/internal/emailtrack"
)

// The e-mail tracking routes (issue 35 item 2), every exchange checked
// against api/openapi.yaml by the env's validator.

var trackSecret = []byte(strings.Repeat("t", 32))

// trackedDelivery triggers one e-mail to alice and returns its messageId.
func trackedDelivery(t *testing.T, e *env) string {
	t.Helper()
	e.do("PUT", "/v1/users/alice", map[string]string{"email": "alice@example.com"}).expect(t, 200, nil)
	var trig triggerAnswer
	e.do("POST", "/v1/notifications", map[string]any{"user_id": "alice", "type": "news", "title": "News",
		"body": "b", "channels": []string{"email"}}).expect(t, http.StatusAccepted, &trig)
	var st herald.NotificationStatus
	e.do("GET", "/v1/notifications/"+trig.ID, nil).expect(t, 200, &st)
	return heraldtype.DeliveryKey(trig.ID, st.Deliveries[0].ID)
}

func trackToken(t *testing.T, secret []byte, c emailtrack.Claims) string {
	t.Helper()
	s, err := emailtrack.NewSigner(secret)
	if err != nil {
		t.Fatal(err)
	}
	if c.Expires.IsZero() {
		c.Expires = time.Now().Add(time.Hour)
	}
	return s.Token(c)
}

// TestTrackingRoutes: without credentials the pixel is a GIF and records
// opened once; a link redirects to its original URL only — whatever host
// or query the request brings — and records clicked; tampered, foreign,
// malformed and expired tokens get a page with their status and no
// Location.
func TestTrackingRoutes(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOptions{addresses: true,
		emailTracking: herald.EmailTrackingConfig{Secret: trackSecret, BaseURL: "https://herald.test"}})
	key := trackedDelivery(t, e)
	noAuth := []string{"Authorization", ""}
	const original = "https://shop.example/p/42?utm=mail"

	open := trackToken(t, trackSecret, emailtrack.Claims{Kind: emailtrack.Open, MessageID: key})
	for range 3 {
		r := e.do("GET", "/t/o/"+open, nil, noAuth...)
		if r.status != 200 || r.header.Get("Content-Type") != "image/gif" || !bytes.HasPrefix(r.body, []byte("GIF89a")) || len(r.body) != 43 {
			t.Fatalf("pixel: %d %v %q", r.status, r.header, r.body)
		}
	}

	click := trackToken(t, trackSecret, emailtrack.Claims{Kind: emailtrack.Click, MessageID: key, URL: original})
	for _, extra := range [][]string{nil, {"Host", "evil.example"}, {"X-Forwarded-Host", "evil.example"}} {
		r := e.do("GET", "/t/c/"+click+"?url=https://evil.example/&next=//evil.example", nil, append(noAuth, extra...)...)
		if r.status != http.StatusFound || r.header.Get("Location") != original || r.header.Get("Referrer-Policy") != "no-referrer" {
			t.Fatalf("click %v: %d Location %q", extra, r.status, r.header.Get("Location"))
		}
	}
	nid, _, _ := strings.Cut(key, ".")
	var st herald.NotificationStatus
	e.do("GET", "/v1/notifications/"+nid, nil).expect(t, 200, &st)
	var got []string
	for _, r := range st.Deliveries[0].Receipts {
		got = append(got, string(r.Event)+" "+r.Action)
	}
	if strings.Join(got, "|") != "opened |clicked "+original {
		t.Errorf("receipts %q", got)
	}

	parts := strings.Split(click, ".")
	evil := strings.Split(trackToken(t, trackSecret, emailtrack.Claims{Kind: emailtrack.Click, MessageID: key, URL: "https://evil.example/"}), ".")
	for _, c := range []struct {
		name, token string
		status      int
	}{
		{"another link under this MAC", parts[0] + "." + evil[1] + "." + parts[2], 404},
		{"another secret", trackToken(t, []byte(strings.Repeat("q", 32)), emailtrack.Claims{Kind: emailtrack.Click, MessageID: key, URL: "https://evil.example/"}), 404},
		{"expired", trackToken(t, trackSecret, emailtrack.Claims{Kind: emailtrack.Click, MessageID: key, URL: original, Expires: time.Now().Add(-time.Second)}), 404},
		{"the pixel's token", open, 400},
		{"cut", click[:len(click)-10], 400},
		{"not a token", "not-a-token", 400},
	} {
		r := e.do("GET", "/t/c/"+c.token, nil, noAuth...)
		if r.status != c.status || r.header.Get("Location") != "" || !strings.HasPrefix(r.header.Get("Content-Type"), "text/html") ||
			!strings.Contains(string(r.body), "This link cannot be followed") || strings.Contains(string(r.body), "evil.example") {
			t.Errorf("%s: %d Location %q %s", c.name, r.status, r.header.Get("Location"), r.body)
		}
	}
	if eb := e.do("GET", "/t/o/"+click, nil, noAuth...).errorBody(t); eb.Code != heraldtype.EINVALID {
		t.Errorf("a link's token as a pixel: %s", eb.Code)
	}

	// Without a secret the routes exist and know no token.
	off := newEnv(t, envOptions{})
	if r := off.do("GET", "/t/c/"+click, nil, noAuth...); r.status != 404 || r.header.Get("Location") != "" {
		t.Errorf("unconfigured click: %d", r.status)
	}
	if eb := off.do("GET", "/t/o/"+open, nil, noAuth...).errorBody(t); eb.Code != heraldtype.ENOTFOUND {
		t.Errorf("unconfigured pixel: %s", eb.Code)
	}
}

// TestTrackingRoutesRateLimitedPerAddress: over RateLimitConfig.PublicLinks
// one address gets 429 with Retry-After; another address is not held up.
func TestTrackingRoutesRateLimitedPerAddress(t *testing.T) {
	t.Parallel()
	now := time.Now()
	e := newEnv(t, envOptions{addresses: true,
		emailTracking: herald.EmailTrackingConfig{Secret: trackSecret, BaseURL: "https://herald.test"},
		rateLimit:     httpapi.RateLimitConfig{PublicLinks: httpapi.RateLimit{PerSecond: 1, Burst: 2}, Now: func() time.Time { return now }}})
	open := trackToken(t, trackSecret, emailtrack.Claims{Kind: emailtrack.Open, MessageID: trackedDelivery(t, e)})
	from := func(addr string) response {
		t.Helper()
		req := httptest.NewRequest("GET", "/t/o/"+open, nil)
		req.RemoteAddr = addr
		rec := httptest.NewRecorder()
		e.h.ServeHTTP(rec, req)
		return response{status: rec.Code, header: rec.Header(), body: rec.Body.Bytes()}
	}
	for range 2 {
		if r := from("198.51.100.7:1234"); r.status != 200 {
			t.Fatalf("within the burst: %d", r.status)
		}
	}
	r := from("198.51.100.7:1235")
	if eb := r.errorBody(t); eb.Code != heraldtype.ERATELIMITED || r.header.Get("Retry-After") != "1" {
		t.Fatalf("over the limit: %d %s %v", r.status, eb.Code, r.header)
	}
	if r := from("203.0.113.9:1234"); r.status != 200 {
		t.Fatalf("another address: %d", r.status)
	}
}

// TestTypeEmailTracking: PUT /v1/types turns tracking on where the server
// has a secret and GET shows it; without one it is invalid_argument
// naming the field.
func TestTypeEmailTracking(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOptions{emailTracking: herald.EmailTrackingConfig{Secret: trackSecret, BaseURL: "https://herald.test"}})
	var got herald.NotificationType
	e.do("PUT", "/v1/types/news", map[string]any{"channels": []string{"email"}, "email_tracking": true}).expect(t, 200, &got)
	if !got.EmailTracking {
		t.Errorf("PUT answered %+v", got)
	}
	got = herald.NotificationType{}
	e.do("GET", "/v1/types/news", nil).expect(t, 200, &got)
	if !got.EmailTracking {
		t.Errorf("GET answered %+v", got)
	}
	e.do("GET", "/v1/types/other", nil).expect(t, 200, &got)
	if got.EmailTracking {
		t.Errorf("an undeclared type is tracked: %+v", got)
	}
	off := newEnv(t, envOptions{})
	r := off.do("PUT", "/v1/types/news", map[string]any{"email_tracking": true})
	if eb := r.errorBody(t); eb.Code != heraldtype.EINVALID || eb.Field != "email_tracking" {
		t.Errorf("without a secret: %+v", eb)
	}
}
