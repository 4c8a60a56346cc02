package httpapi_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/heraldhq/herald/auth"
	"github.com/heraldhq/herald/heraldtype"
	"github.com/heraldhq/herald/store/storetest"
)

// Issue 35 item 4: /v1/webhooks — create (the secret shown once), list,
// read, change, rotate, the messages and their replay, delete; each
// refusal names its field, and the scopes hold.
func TestWebhooksAPI(t *testing.T) {
	e := newEnv(t, envOptions{})
	// Refusals first: each names its field.
	for _, c := range []struct {
		body  map[string]any
		field string
	}{
		{map[string]any{}, "url"},
		{map[string]any{"url": "ftp://example.com/hook"}, "url"},
		{map[string]any{"url": "https://user:pw@example.com/hook"}, "url"},
		{map[string]any{"url": "http://localhost:9000/hook"}, "url"},
		{map[string]any{"url": "http://127.0.0.1/hook"}, "url"},
		{map[string]any{"url": "http://169.254.169.254/latest"}, "url"},
		{map[string]any{"url": "https://example.com/" + strings.Repeat("a", 2100)}, "url"},
		{map[string]any{"url": "https://example.com/hook", "description": strings.Repeat("d", 501)}, "description"},
	} {
		r := e.do("POST", "/v1/webhooks", c.body)
		if r.status != http.StatusBadRequest || r.errorBody(t).Field != c.field {
			t.Fatalf("POST %v: %d %s, want 400 naming %s", c.body, r.status, r.body, c.field)
		}
	}
	// An unknown or repeated event type names its place in the list.
	if r := e.do("POST", "/v1/webhooks", `{"url":"https://example.com/hook","events":["delivery.lost"]}`); r.status != http.StatusBadRequest ||
		r.errorBody(t).Field != "events[0]" {
		t.Fatalf("an unknown event type: %d %s", r.status, r.body)
	}
	if r := e.do("POST", "/v1/webhooks", `{"url":"https://example.com/hook","events":["delivery.finished","delivery.finished"]}`); r.status != http.StatusBadRequest ||
		r.errorBody(t).Field != "events[1]" {
		t.Fatalf("a repeated event type: %d %s", r.status, r.body)
	}

	var created heraldtype.WebhookEndpointSecret
	e.do("POST", "/v1/webhooks", map[string]any{"url": "https://example.com/hook", "description": "crm",
		"events": []string{"delivery.finished"}}).expect(t, http.StatusCreated, &created)
	if !strings.HasPrefix(created.ID, "wh_") || !strings.HasPrefix(created.Secret, "whsec_") || !created.Enabled ||
		created.Description != "crm" || len(created.Events) != 1 {
		t.Fatalf("created %+v", created)
	}
	// The secret is never shown again.
	r := e.do("GET", "/v1/webhooks/"+created.ID, nil)
	if r.status != http.StatusOK || strings.Contains(string(r.body), created.Secret) || strings.Contains(string(r.body), "secret\"") {
		t.Fatalf("GET shows %d %s", r.status, r.body)
	}
	var list struct {
		Webhooks []heraldtype.WebhookEndpoint `json:"webhooks"`
	}
	e.do("GET", "/v1/webhooks", nil).expect(t, http.StatusOK, &list)
	if len(list.Webhooks) != 1 || list.Webhooks[0].ID != created.ID {
		t.Fatalf("list %+v", list)
	}

	var got heraldtype.WebhookEndpoint
	e.do("PATCH", "/v1/webhooks/"+created.ID, map[string]any{"enabled": false, "events": []string{}}).expect(t, http.StatusOK, &got)
	if got.Enabled || len(got.Events) != 0 || got.URL != "https://example.com/hook" || got.Description != "crm" {
		t.Fatalf("after PATCH: %+v", got)
	}
	if r := e.do("PATCH", "/v1/webhooks/"+created.ID, map[string]any{"url": "http://10.0.0.1/x"}); r.status != http.StatusBadRequest ||
		r.errorBody(t).Field != "url" {
		t.Fatalf("PATCH to an internal address: %d %s", r.status, r.body)
	}
	e.do("PATCH", "/v1/webhooks/wh_nope", map[string]any{"enabled": true}).expect(t, http.StatusNotFound, nil)
	e.do("GET", "/v1/webhooks/wh_nope", nil).expect(t, http.StatusNotFound, nil)

	var rotated heraldtype.WebhookEndpointSecret
	e.do("POST", "/v1/webhooks/"+created.ID+"/rotate", nil).expect(t, http.StatusOK, &rotated)
	if rotated.Secret == created.Secret || !strings.HasPrefix(rotated.Secret, "whsec_") || rotated.PreviousSecretUntil == nil ||
		rotated.PreviousSecretUntil.Before(time.Now().Add(23*time.Hour)) {
		t.Fatalf("rotated %+v", rotated)
	}
	e.do("POST", "/v1/webhooks/wh_nope/rotate", nil).expect(t, http.StatusNotFound, nil)

	// A dead message, listed and replayed with its event id.
	on := true
	if _, err := e.client.UpdateWebhook(t.Context(), created.ID, heraldtype.WebhookEndpointUpdate{Enabled: &on}); err != nil {
		t.Fatal(err)
	}
	storetest.DeadWebhookMessage(t, e.store, created.ID, "evt_1", 500, "answered 500")
	var page heraldtype.WebhookMessagePage
	e.do("GET", "/v1/webhooks/"+created.ID+"/messages?state=dead", nil).expect(t, http.StatusOK, &page)
	if len(page.Messages) != 1 || page.Messages[0].EventID != "evt_1" || page.Messages[0].LastStatus != 500 ||
		string(page.Messages[0].Data) != `{"state":"sent"}` {
		t.Fatalf("dead letters %+v", page)
	}
	if r := e.do("GET", "/v1/webhooks/"+created.ID+"/messages?state=lost", nil); r.status != http.StatusBadRequest {
		t.Fatalf("a bad state: %d %s", r.status, r.body)
	}
	if r := e.do("GET", "/v1/webhooks/"+created.ID+"/messages?cursor=x", nil); r.status != http.StatusBadRequest ||
		r.errorBody(t).Field != "cursor" {
		t.Fatalf("a bad cursor: %d %s", r.status, r.body)
	}
	e.do("GET", "/v1/webhooks/wh_nope/messages", nil).expect(t, http.StatusNotFound, nil)
	var replay heraldtype.WebhookReplayResult
	e.do("POST", "/v1/webhooks/"+created.ID+"/replay", map[string]any{"seqs": []int64{page.Messages[0].Seq}}).expect(t, http.StatusOK, &replay)
	if replay.Replayed != 1 {
		t.Fatalf("replayed %+v", replay)
	}
	e.do("POST", "/v1/webhooks/"+created.ID+"/replay", nil).expect(t, http.StatusOK, &replay)
	if replay.Replayed != 0 {
		t.Fatalf("a second replay replayed %d", replay.Replayed)
	}
	e.do("GET", "/v1/webhooks/"+created.ID+"/messages?state=pending", nil).expect(t, http.StatusOK, &page)
	if len(page.Messages) != 1 || page.Messages[0].EventID != "evt_1" || page.Messages[0].Attempt != 0 {
		t.Fatalf("replayed message %+v", page)
	}

	// Scopes: webhooks:read reads, only webhooks:write changes.
	reader := "Bearer " + e.key(auth.ScopeWebhooksRead)
	e.do("GET", "/v1/webhooks", nil, "Authorization", reader).expect(t, http.StatusOK, nil)
	e.do("POST", "/v1/webhooks", map[string]any{"url": "https://example.com/x"}, "Authorization", reader).expect(t, http.StatusForbidden, nil)
	e.do("POST", "/v1/webhooks/"+created.ID+"/replay", nil, "Authorization", reader).expect(t, http.StatusForbidden, nil)
	other := "Bearer " + e.key(auth.ScopeDeliveriesRead)
	e.do("GET", "/v1/webhooks", nil, "Authorization", other).expect(t, http.StatusForbidden, nil)

	e.do("DELETE", "/v1/webhooks/"+created.ID, nil).expect(t, http.StatusNoContent, nil)
	e.do("DELETE", "/v1/webhooks/"+created.ID, nil).expect(t, http.StatusNotFound, nil)
	e.do("GET", "/v1/webhooks/"+created.ID+"/messages", nil).expect(t, http.StatusNotFound, nil)
}
