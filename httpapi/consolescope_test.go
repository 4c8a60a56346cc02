package httpapi_test

import (
	"context"
	"fmt"
	"net/http"
	"testing"

	"github.com/heraldhq/herald"
	"github.com/heraldhq/herald/auth"
)

// Issue 34 item 1: a key of the console scope reads what the console
// shows through the API's own access rules, and is refused every change
// — a replay above all — with permission_denied.
func TestConsoleKeyReadsButCannotReplay(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOptions{})
	e.seedUser("alice")
	e.do("POST", "/v1/notifications", map[string]any{"user_id": "alice", "type": "reservation", "title": "Confirmed"}).
		expect(t, http.StatusAccepted, nil)
	_, key, err := e.keys.Create(context.Background(), "console", []auth.Scope{auth.ScopeConsole})
	if err != nil {
		t.Fatal(err)
	}
	bearer := []string{"Authorization", "Bearer " + key}

	var page herald.DeliveryPage
	e.do("GET", "/v1/deliveries", nil, bearer...).expect(t, 200, &page)
	if len(page.Deliveries) != 1 {
		t.Fatalf("the console key read %d deliveries, want 1", len(page.Deliveries))
	}
	for _, path := range []string{"/v1/users/alice", "/v1/users/alice/devices", "/v1/users/alice/preferences", "/v1/rules", "/v1/campaigns"} {
		if r := e.do("GET", path, nil, bearer...); r.status != 200 {
			t.Errorf("GET %s with the console key: %d %s", path, r.status, r.body)
		}
	}

	refused := []struct {
		method, path string
		body         any
	}{
		{"POST", fmt.Sprintf("/v1/deliveries/%d/replay", page.Deliveries[0].ID), nil},
		{"POST", "/v1/deliveries/replay", map[string]string{"state": "dead"}},
		{"PUT", "/v1/users/alice/preferences", map[string]any{}},
		{"POST", "/v1/notifications", map[string]any{"user_id": "alice", "type": "reservation", "title": "Again"}},
	}
	for _, c := range refused {
		r := e.do(c.method, c.path, c.body, bearer...)
		if r.status != http.StatusForbidden {
			t.Errorf("%s %s with the console key: %d %s, want 403", c.method, c.path, r.status, r.body)
			continue
		}
		if eb := r.errorBody(t); eb.Code != "permission_denied" {
			t.Errorf("%s %s: code %q, want permission_denied", c.method, c.path, eb.Code)
		}
	}
}
