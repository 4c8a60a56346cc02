package httpapi_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/heraldhq/herald"
	"github.com/heraldhq/herald/auth"
)

// Issue 20 item 3: POST /v1/interests takes one interest or a batch;
// GET /v1/users/{id}/interests lists them; bad input is a 400 naming the
// field (inside a batch, its index); the endpoints need their scopes.
func TestInterestsAPI(t *testing.T) {
	e := newEnv(t, envOptions{})
	e.seedUser("u1")
	var out map[string]int
	e.do("POST", "/v1/interests", map[string]any{"user_id": "u1", "subject": "product:42", "kind": "VIEW"}).
		expect(t, http.StatusOK, &out)
	if out["recorded"] != 1 {
		t.Fatalf("single: %v", out)
	}
	e.do("POST", "/v1/interests", map[string]any{"interests": []map[string]any{
		{"user_id": "u1", "subject": "product:42", "kind": "ADD_TO_CART", "at": "2026-01-02T03:04:05Z"},
		{"user_id": "u1", "subject": "product:7", "kind": "WATCH", "data": map[string]string{"target_price": "8000"}},
	}}).expect(t, http.StatusOK, &out)
	if out["recorded"] != 2 {
		t.Fatalf("batch: %v", out)
	}
	var page herald.InterestPage
	e.do("GET", "/v1/users/u1/interests", nil).expect(t, http.StatusOK, &page)
	if len(page.Interests) != 3 || page.Interests[2].Data["target_price"] != "8000" {
		t.Fatalf("interests: %+v", page)
	}
	e.do("GET", "/v1/users/u1/interests?subject=product:42&limit=1", nil).expect(t, http.StatusOK, &page)
	if len(page.Interests) != 1 || page.NextCursor == "" || page.Interests[0].Kind != "ADD_TO_CART" {
		t.Fatalf("filtered page: %+v", page)
	}

	for name, tc := range map[string]struct {
		body  any
		field string
	}{
		"no kind":      {map[string]any{"user_id": "u1", "subject": "product:42"}, "kind"},
		"bad kind":     {map[string]any{"user_id": "u1", "subject": "product:42", "kind": "a view"}, "kind"},
		"no subject":   {map[string]any{"user_id": "u1", "kind": "VIEW"}, "subject"},
		"future":       {map[string]any{"user_id": "u1", "subject": "s", "kind": "VIEW", "at": "2999-01-01T00:00:00Z"}, "at"},
		"bad time":     {map[string]any{"user_id": "u1", "subject": "s", "kind": "VIEW", "at": "yesterday"}, "at"},
		"in a batch":   {map[string]any{"interests": []map[string]any{{"user_id": "u1", "subject": "s", "kind": "VIEW"}, {"user_id": "u1", "kind": "VIEW"}}}, "interests[1].subject"},
		"empty batch":  {map[string]any{"interests": []map[string]any{}}, "interests"},
		"both":         {map[string]any{"user_id": "u1", "interests": []map[string]any{{"user_id": "u1", "subject": "s", "kind": "VIEW"}}}, "interests"},
		"unknown":      {map[string]any{"user_id": "u1", "subject": "s", "kind": "VIEW", "weight": 3}, "weight"},
		"bad user id":  {map[string]any{"user_id": "a/b", "subject": "s", "kind": "VIEW"}, "user_id"},
		"reserved key": {map[string]any{"user_id": "u1", "subject": "s", "kind": "VIEW", "data": map[string]string{"messageId": "x"}}, "data"},
	} {
		res := e.do("POST", "/v1/interests", tc.body)
		if res.status != http.StatusBadRequest {
			t.Fatalf("%s: status %d %s", name, res.status, res.body)
		}
		if eb := res.errorBody(t); eb.Field != tc.field || !strings.HasPrefix(eb.Message, tc.field) {
			t.Fatalf("%s: field %q message %q, want %q (%s)", name, eb.Field, eb.Message, tc.field, res.body)
		}
	}
	e.do("GET", "/v1/users/u1/interests?color=red", nil).expect(t, http.StatusBadRequest, nil)

	_, key, err := e.keys.Create(t.Context(), "notify-only", []auth.Scope{auth.ScopeNotificationsWrite})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ method, path string }{{"POST", "/v1/interests"}, {"GET", "/v1/users/u1/interests"}} {
		if res := e.do(c.method, c.path, map[string]any{}, "Authorization", "Bearer "+key); res.status != http.StatusForbidden {
			t.Fatalf("%s %s with notifications:write: %d", c.method, c.path, res.status)
		}
	}
}
