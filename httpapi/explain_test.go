package httpapi_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/heraldhq/herald/auth"
	"github.com/heraldhq/herald/heraldtype"
)

// GET /v1/users/{id}/explain answers from the records, refuses a bad
// question naming its parameter, is not found for an unknown user, needs
// notifications:read, and masks addresses without users:read — every
// exchange checked against api/openapi.yaml.
func TestExplain(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOptions{addresses: true})
	e.do("PUT", "/v1/users/alice", map[string]string{"email": "alice@example.com"}).expect(t, 200, nil)
	var none heraldtype.Explanation
	e.do("GET", "/v1/users/alice/explain?type=receipt", nil).expect(t, 200, &none)
	if none.Verdict != heraldtype.ExplainNoNotification || none.Message == "" {
		t.Fatalf("before any: %+v", none)
	}
	var trig triggerAnswer
	e.do("POST", "/v1/notifications", map[string]any{"user_id": "alice", "type": "receipt", "title": "Paid",
		"channels": []string{"email"}}, "Idempotency-Key", "order-4711").expect(t, http.StatusAccepted, &trig)
	var byKey heraldtype.Explanation
	e.do("GET", "/v1/users/alice/explain?idempotency_key=order-4711", nil).expect(t, 200, &byKey)
	if byKey.NotificationID != trig.ID {
		t.Fatalf("by idempotency key: %+v", byKey)
	}
	// Only admin sees a trigger's key, so only admin looks one up.
	if r := e.do("GET", "/v1/users/alice/explain?idempotency_key=order-4711", nil, "Authorization", "Bearer "+e.key(auth.ScopeNotificationsRead)); r.status != 403 {
		t.Fatalf("by idempotency key without admin: %d %s", r.status, r.body)
	}

	for _, c := range []struct {
		scopes  []auth.Scope
		address string
	}{
		{[]auth.Scope{auth.ScopeNotificationsRead}, "a***@example.com"},
		{[]auth.Scope{auth.ScopeNotificationsRead, auth.ScopeUsersRead}, "alice@example.com"},
	} {
		var x heraldtype.Explanation
		e.do("GET", "/v1/users/alice/explain?notification_id="+trig.ID, nil, "Authorization", "Bearer "+e.key(c.scopes...)).expect(t, 200, &x)
		if x.Verdict != heraldtype.ExplainPending || x.NotificationID != trig.ID || len(x.Reasons) != 1 || x.Reasons[0].Address != c.address {
			t.Fatalf("%v: %+v", c.scopes, x)
		}
	}
	var x heraldtype.Explanation
	e.do("GET", "/v1/users/alice/explain?type=receipt&since=2026-01-01T00:00:00Z", nil).expect(t, 200, &x)
	if x.NotificationID != trig.ID {
		t.Fatalf("by type: %+v", x)
	}

	for _, c := range []struct {
		query  string
		status int
		field  string
	}{
		{"", 400, "type"},
		{"?type=Bad%20Type", 400, "type"},
		{"?type=receipt&since=yesterday", 400, "since"},
		{"?type=receipt&type=promo", 400, "type"},
		{"?kind=receipt", 400, "kind"},
		{"?rule=price-drop", 400, "rule_run"},
		{"?rule_run=http%2Fev-1", 400, "rule"},
		{"?rule=price-drop&rule_run=http%2Fev-1", 404, ""},
		{"?notification_id=01NOPE", 404, ""},
		{"?idempotency_key=nope", 404, ""},
	} {
		r := e.do("GET", "/v1/users/alice/explain"+c.query, nil)
		if r.status != c.status {
			t.Fatalf("%q: status %d, want %d: %s", c.query, r.status, c.status, r.body)
		}
		if eb := r.errorBody(t); eb.Field != c.field {
			t.Errorf("%q: field %q, want %q", c.query, eb.Field, c.field)
		}
	}
	if r := e.do("GET", "/v1/users/nobody/explain?type=receipt", nil); r.status != 404 {
		t.Errorf("unknown user: %d %s", r.status, r.body)
	}
	if r := e.do("GET", "/v1/users/alice/explain?type=receipt", nil, "Authorization", "Bearer "+e.key(auth.ScopeDeliveriesRead)); r.status != 403 {
		t.Errorf("without notifications:read: %d %s", r.status, r.body)
	}
}

// GET /v1/users/{id}/explain?event=: an event posted to the API is looked
// up under the calling key's id unless another namespace is named, which
// only admin may do; event_source and event_namespace need the event.
func TestExplainEvent(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOptions{})
	e.seedUser("u1")
	e.do("PUT", "/v1/types/price_drop", map[string]any{"channels": []string{"push"}}).expect(t, http.StatusOK, nil)
	e.do("POST", "/v1/interests", map[string]any{"user_id": "u1", "subject": "product:42", "kind": "VIEW"}).expect(t, http.StatusOK, nil)
	e.do("PUT", "/v1/rules/price-drop", map[string]any{
		"when":     map[string]any{"event": "PRICE_CHANGE", "detect": map[string]any{"price_drop_pct": 10}},
		"audience": map[string]any{"interest": map[string]any{"kinds": []string{"VIEW"}}},
		"notify":   map[string]any{"type": "price_drop", "title": "{{.product_name}} is {{.drop_pct}}% off"},
	}).expect(t, http.StatusCreated, nil)
	key := func(name string, scopes ...auth.Scope) (string, string) {
		k, secret, err := e.keys.Create(t.Context(), name, scopes)
		if err != nil {
			t.Fatal(err)
		}
		return k.ID, "Bearer " + secret
	}
	posterID, poster := key("poster", auth.ScopeEventsWrite, auth.ScopeNotificationsRead)
	_, reader := key("reader", auth.ScopeNotificationsRead)
	e.do("POST", "/v1/events", map[string]any{"id": "ev-1", "name": "PRICE_CHANGE", "subject": "product:42",
		"data": map[string]any{"product_name": "Kettle", "previous_price": 10000, "current_price": 8500}}, "Authorization", poster).
		expect(t, http.StatusOK, nil)

	// The poster finds its own event without naming its namespace, or
	// naming it.
	for _, q := range []string{"?event=ev-1", "?event=ev-1&event_namespace=" + posterID} {
		var x heraldtype.Explanation
		e.do("GET", "/v1/users/u1/explain"+q, nil, "Authorization", poster).expect(t, 200, &x)
		if x.Event != "ev-1" || x.Rule != "price-drop" || x.RuleRun != "http/"+posterID+"/ev-1" || x.Verdict != heraldtype.ExplainPending {
			t.Fatalf("%s: %+v", q, x)
		}
	}
	// Admin's own namespace holds no such event; admin may name the
	// poster's.
	if r := e.do("GET", "/v1/users/u1/explain?event=ev-1", nil); r.status != 404 || !strings.Contains(r.errorBody(t).Message, "some rule considered") {
		t.Fatalf("admin, its own namespace: %d %s", r.status, r.body)
	}
	var x heraldtype.Explanation
	e.do("GET", "/v1/users/u1/explain?event=ev-1&event_namespace="+posterID, nil).expect(t, 200, &x)
	if x.RuleRun != "http/"+posterID+"/ev-1" {
		t.Fatalf("admin naming the poster's namespace: %+v", x)
	}
	// Another key without admin may not name the poster's namespace.
	r := e.do("GET", "/v1/users/u1/explain?event=ev-1&event_namespace="+posterID, nil, "Authorization", reader)
	if eb := r.errorBody(t); r.status != 403 || eb.Code != heraldtype.EPERMISSIONDENIED || eb.Field != "event_namespace" {
		t.Fatalf("a reader naming another key's namespace: %d %s", r.status, r.body)
	}
	// A topic's event has no namespace: none is filled in for it.
	if r := e.do("GET", "/v1/users/u1/explain?event=ev-1&event_source=product.inventory.v1", nil, "Authorization", reader); r.status != 404 {
		t.Fatalf("a topic's event: %d %s", r.status, r.body)
	}

	for _, c := range []struct {
		query  string
		status int
		field  string
	}{
		{"?event_source=product.inventory.v1", 400, "event"},
		{"?event_namespace=" + posterID, 400, "event"},
		{"?event=a%2Fb", 400, "event"},
		{"?event=ev-1&event=ev-2", 400, "event"},
		{"?event=ev-1&event_namespace=a%2Fb", 400, "event_namespace"},
		{"?event=ev-9", 404, ""},
	} {
		r := e.do("GET", "/v1/users/u1/explain"+c.query, nil)
		if r.status != c.status {
			t.Fatalf("%q: status %d, want %d: %s", c.query, r.status, c.status, r.body)
		}
		if eb := r.errorBody(t); eb.Field != c.field {
			t.Errorf("%q: field %q, want %q", c.query, eb.Field, c.field)
		}
	}
}
