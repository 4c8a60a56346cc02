package httpapi_test

import (
	"net/http"
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
		"channels": []string{"email"}}).expect(t, http.StatusAccepted, &trig)

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
