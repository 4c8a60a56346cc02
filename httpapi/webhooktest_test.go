package httpapi_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/heraldhq/herald/auth"
	"github.com/heraldhq/herald/heraldtype"
	"github.com/heraldhq/herald/internal/webhook"
	"github.com/heraldhq/herald/store"
)

// testReceiver is an endpoint that answers status and keeps what it was
// sent.
type testReceiver struct {
	srv    *httptest.Server
	mu     sync.Mutex
	status int
	got    []*http.Request
	bodies [][]byte
}

func newTestReceiver(t *testing.T) *testReceiver {
	t.Helper()
	r := &testReceiver{status: http.StatusNoContent}
	r.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		b, _ := io.ReadAll(req.Body)
		r.mu.Lock()
		r.got, r.bodies = append(r.got, req), append(r.bodies, b)
		status := r.status
		r.mu.Unlock()
		if status/100 == 3 {
			w.Header().Set("Location", "http://example.com/elsewhere")
		}
		w.WriteHeader(status)
	}))
	t.Cleanup(r.srv.Close)
	return r
}

func (r *testReceiver) answer(status int) { r.mu.Lock(); r.status = status; r.mu.Unlock() }
func (r *testReceiver) count() int        { r.mu.Lock(); defer r.mu.Unlock(); return len(r.got) }

// Issue 35 item 4: POST /v1/webhooks/{id}/test sends a signed webhook.test
// now, through the guard, and answers what the endpoint answered; a
// failure is the answer's, not the API's, and changes nothing.
func TestWebhookTestRoute(t *testing.T) {
	e := newEnv(t, envOptions{calloutAllow: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}})
	recv := newTestReceiver(t)

	// Failures first: no such endpoint, a read-only key.
	e.do("POST", "/v1/webhooks/wh_nope/test", nil).expect(t, http.StatusNotFound, nil)
	var created heraldtype.WebhookEndpointSecret
	e.do("POST", "/v1/webhooks", map[string]any{"url": recv.srv.URL + "/hooks", "events": []string{"delivery.finished"}}).
		expect(t, http.StatusCreated, &created)
	e.do("POST", "/v1/webhooks/"+created.ID+"/test", nil, "Authorization", "Bearer "+e.key(auth.ScopeWebhooksRead)).
		expect(t, http.StatusForbidden, nil)

	// test sends a test event and decodes the answer afresh.
	test := func(id string) heraldtype.WebhookTestResult {
		t.Helper()
		var res heraldtype.WebhookTestResult
		e.do("POST", "/v1/webhooks/"+id+"/test", nil).expect(t, http.StatusOK, &res)
		return res
	}
	// The endpoint answers 503: 200 from the API, the endpoint's answer in
	// the body.
	recv.answer(http.StatusServiceUnavailable)
	res := test(created.ID)
	if res.OK || res.Status != 503 || res.Error != "answered 503" {
		t.Fatalf("a 503: %+v", res)
	}
	// A redirect is refused, never followed.
	recv.answer(http.StatusFound)
	res = test(created.ID)
	if res.OK || res.Status != 0 || !strings.HasPrefix(res.Error, "refused") || !strings.Contains(res.Error, "redirect") {
		t.Fatalf("a redirect: %+v", res)
	}
	if n := recv.count(); n != 2 {
		t.Fatalf("the receiver saw %d requests, want 2 (the redirect not followed)", n)
	}
	// The endpoint down: no answer, and nothing about the network.
	down := httptest.NewServer(http.NotFoundHandler())
	downURL := down.URL + "/hooks"
	down.Close()
	var other heraldtype.WebhookEndpointSecret
	e.do("POST", "/v1/webhooks", map[string]any{"url": downURL}).expect(t, http.StatusCreated, &other)
	res = test(other.ID)
	if res.OK || res.Status != 0 || !strings.HasPrefix(res.Error, "failed") || strings.Contains(res.Error, "refused") {
		t.Fatalf("an endpoint that is down: %+v", res)
	}
	// None of it touched the endpoint or queued a message.
	for _, id := range []string{created.ID, other.ID} {
		ep, err := e.client.GetWebhook(t.Context(), id)
		if err != nil || ep.FailingSince != nil || !ep.Enabled {
			t.Fatalf("%s after failed tests: %+v, %v", id, ep, err)
		}
		page, err := e.client.ListWebhookMessages(t.Context(), id, heraldtype.WebhookMessageFilter{})
		if err != nil || len(page.Messages) != 0 {
			t.Fatalf("%s's messages after tests: %+v, %v", id, page.Messages, err)
		}
	}

	// A disabled endpoint, subscribed to another type, is tested all the
	// same: signed with its secret, the body a webhook.test.
	off := false
	if _, err := e.client.UpdateWebhook(t.Context(), created.ID, heraldtype.WebhookEndpointUpdate{Enabled: &off}); err != nil {
		t.Fatal(err)
	}
	recv.answer(http.StatusOK)
	res = test(created.ID)
	if !res.OK || res.Status != 200 || res.Error != "" || res.Type != "webhook.test" || !strings.HasPrefix(res.EventID, "evt_test_") ||
		res.DurationMS < 0 {
		t.Fatalf("a 200: %+v", res)
	}
	recv.mu.Lock()
	req, body := recv.got[len(recv.got)-1], recv.bodies[len(recv.bodies)-1]
	recv.mu.Unlock()
	secret, err := webhook.ParseSecret(created.Secret)
	if err != nil {
		t.Fatal(err)
	}
	if err := webhook.Verify(req.Header, body, time.Now(), 5*time.Minute, secret); err != nil {
		t.Fatalf("the test's signature: %v", err)
	}
	if req.Header.Get("webhook-id") != res.EventID {
		t.Fatalf("webhook-id %q, answered %q", req.Header.Get("webhook-id"), res.EventID)
	}
	var msg struct {
		Type string `json:"type"`
		Data struct {
			EndpointID string `json:"endpoint_id"`
		} `json:"data"`
	}
	if err := json.Unmarshal(body, &msg); err != nil || msg.Type != "webhook.test" || msg.Data.EndpointID != created.ID {
		t.Fatalf("body %s: %+v, %v", body, msg, err)
	}
}

// The guard refuses an internal address at the test's dial as at every
// send: here an endpoint written straight to the store (the API refuses
// such a URL at registration) on loopback, with no callout.allow.
func TestWebhookTestRouteGoesThroughTheGuard(t *testing.T) {
	e := newEnv(t, envOptions{})
	recv := newTestReceiver(t)
	now := time.Now().UTC()
	if err := e.store.CreateWebhookEndpoint(t.Context(), store.WebhookEndpoint{WebhookEndpoint: heraldtype.WebhookEndpoint{ID: "wh_inside",
		URL: recv.srv.URL + "/hooks", Enabled: true, CreatedAt: now, UpdatedAt: now}, Secret: "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"}); err != nil {
		t.Fatal(err)
	}
	var res heraldtype.WebhookTestResult
	e.do("POST", "/v1/webhooks/wh_inside/test", nil).expect(t, http.StatusOK, &res)
	if res.OK || res.Status != 0 || !strings.HasPrefix(res.Error, "refused") || !strings.Contains(res.Error, "not public") {
		t.Fatalf("a loopback endpoint without callout.allow: %+v", res)
	}
	if n := recv.count(); n != 0 {
		t.Fatalf("the receiver saw %d requests", n)
	}
}
