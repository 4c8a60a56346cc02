package console_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/heraldhq/herald/heraldtype"
	"github.com/heraldhq/herald/store/storetest"
)

// deadWebhookMessage writes a message for the endpoint and makes it dead,
// as retrying it for webhooks.retry_for would, and returns its seq.
func deadWebhookMessage(t *testing.T, e *env, endpoint, eventID string) int64 {
	t.Helper()
	return storetest.DeadWebhookMessage(t, e.store, endpoint, eventID, 500, "answered 500")
}

// Issue 35 item 4: the webhooks views — the list, an endpoint's page with
// its dead letters; a test event, disabling, rotating (the secret shown
// on that answer only) and replaying, each POST-redirect-GET but the
// rotation; a read-only session sees and may do none of it.
func TestWebhookViews(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOptions{calloutAllow: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}})
	var status atomic.Int32
	status.Store(http.StatusNoContent)
	recv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(int(status.Load())) }))
	defer recv.Close()
	ep, err := e.client.CreateWebhook(context.Background(), heraldtype.WebhookEndpointInput{URL: recv.URL + "/hooks", Description: "crm"})
	if err != nil {
		t.Fatal(err)
	}
	seq := deadWebhookMessage(t, e, ep.ID, "evt_dead")
	base := "/console/webhooks/" + ep.ID

	// A read-only session reads both pages and sees no action.
	e.signIn("key-console").expect(t, 303)
	e.get("/console/webhooks").expect(t, 200).has(t, `data-endpoint="`+ep.ID+`"`, "crm", "every type")
	p := e.get(base).expect(t, 200).has(t, `<tr data-seq="`, "evt_dead", "500: answered 500").
		lacks(t, `id="test-endpoint"`, `id="toggle-endpoint"`, `id="rotate-secret"`, `id="replay-all"`, `class="replay"`, "whsec_")
	wellFormed(t, p.body)
	csrf := p.csrf(t)
	e.post(base+"/test", url.Values{"csrf": {csrf}}).expect(t, 403).has(t, `data-code="permission_denied"`)

	e.signIn("key-admin").expect(t, 303)
	p = e.get(base).expect(t, 200).has(t, `id="test-endpoint"`, `id="toggle-endpoint"`, `id="rotate-secret"`, `id="replay-all"`, `class="replay"`).
		lacks(t, "whsec_")
	wellFormed(t, p.body)
	csrf = p.csrf(t)
	e.get("/console/webhooks/wh_nope").expect(t, 404).has(t, `data-code="not_found"`)
	// Refusals: no CSRF token, a bad form value, no such endpoint.
	e.post(base+"/test", url.Values{}).expect(t, 403).has(t, `data-code="csrf_invalid"`)
	e.post(base+"/enabled", url.Values{"csrf": {csrf}, "enabled": {"maybe"}}).expect(t, 400).has(t, `data-code="invalid_argument"`)
	e.post(base+"/replay", url.Values{"csrf": {csrf}, "seq": {"x"}}).expect(t, 400).has(t, `data-code="invalid_argument"`)
	e.post("/console/webhooks/wh_nope/test", url.Values{"csrf": {csrf}}).expect(t, 404)

	// The test event: the endpoint's answer shown after the redirect.
	r := e.post(base+"/test", url.Values{"csrf": {csrf}}).expect(t, 303)
	e.get(r.header.Get("Location")).expect(t, 200).has(t, `id="test-result" data-ok="true" data-status="204"`)
	status.Store(http.StatusServiceUnavailable)
	r = e.post(base+"/test", url.Values{"csrf": {csrf}}).expect(t, 303)
	e.get(r.header.Get("Location")).expect(t, 200).has(t, `data-ok="false" data-status="503"`, "answered 503")

	// Disable, then enable again.
	r = e.post(base+"/enabled", url.Values{"csrf": {csrf}, "enabled": {"0"}}).expect(t, 303)
	e.get(r.header.Get("Location")).expect(t, 200).has(t, `id="change-result"`, `data-enabled="false"`, ">Enable</button>")
	e.post(base+"/enabled", url.Values{"csrf": {csrf}, "enabled": {"1"}}).expect(t, 303)
	if got, err := e.client.GetWebhook(context.Background(), ep.ID); err != nil || !got.Enabled {
		t.Fatalf("after enabling: %+v, %v", got, err)
	}

	// Rotation answers the new secret on its own page, once.
	p = e.post(base+"/rotate", url.Values{"csrf": {csrf}}).expect(t, 200).has(t, `id="secret-value">whsec_`)
	if p.header.Get("Cache-Control") != "no-store" {
		t.Errorf("the rotation's answer has Cache-Control %q", p.header.Get("Cache-Control"))
	}
	if strings.Contains(p.body, ep.Secret) {
		t.Error("the rotation's answer shows the old secret")
	}
	e.get(base).expect(t, 200).lacks(t, "whsec_")

	// Replay the dead message: it is pending again.
	r = e.post(base+"/replay", url.Values{"csrf": {csrf}, "seq": {strconv.FormatInt(seq, 10)}}).expect(t, 303)
	e.get(r.header.Get("Location")).expect(t, 200).has(t, `id="replay-result" data-replayed="1"`, "No dead letters.")
	r = e.post(base+"/replay", url.Values{"csrf": {csrf}}).expect(t, 303)
	e.get(r.header.Get("Location")).expect(t, 200).has(t, `data-replayed="0"`)
}
