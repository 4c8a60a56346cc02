package httpapi_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/heraldhq/herald/heraldtype"
	"github.com/heraldhq/herald/httpapi"
)

// Every bad input is a 4xx with a catalogued code (and the field, where
// there is one) — never a 500 and never a panic.
func TestBadRequests(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOptions{provider: &fakeProvider{maxBody: 100}})
	e.seedUser("alice")

	many := make([]string, 1001)
	for i := range many {
		many[i] = fmt.Sprintf("u%d", i)
	}
	notify := func(extra string) string {
		return `{"user_id":"alice","type":"t","title":"x"` + extra + `}`
	}
	tests := []struct {
		name, method, path string
		body               any
		header             []string
		status             int
		code, field        string
	}{
		// Decoding.
		{name: "unknown field", method: "PUT", path: "/v1/users/bob", body: `{"tz":"UTC"}`, status: 400, code: heraldtype.EINVALID, field: "tz"},
		{name: "wrong type", method: "PUT", path: "/v1/users/bob", body: `{"timezone":5}`, status: 400, code: heraldtype.EINVALID, field: "timezone"},
		{name: "wrong nested type", method: "POST", path: "/v1/notifications", body: notify(`,"data":{"k":1}`), status: 400, code: heraldtype.EINVALID, field: "data.k"},
		{name: "wrong bool", method: "POST", path: "/v1/users/alice/devices", body: `{"device_id":"d","token":"t","platform":"ios","push_opt_in":"yes"}`, status: 400, code: heraldtype.EINVALID, field: "push_opt_in"},
		{name: "trailing JSON", method: "PUT", path: "/v1/users/bob", body: `{}{}`, status: 400, code: heraldtype.EINVALID},
		{name: "trailing garbage", method: "POST", path: "/v1/notifications", body: notify("") + ` x`, status: 400, code: heraldtype.EINVALID},
		{name: "truncated JSON", method: "PUT", path: "/v1/users/bob", body: `{"timezone":`, status: 400, code: heraldtype.EINVALID},
		{name: "syntax error", method: "PUT", path: "/v1/users/bob", body: `{timezone}`, status: 400, code: heraldtype.EINVALID},
		{name: "array body", method: "POST", path: "/v1/notifications", body: `[]`, status: 400, code: heraldtype.EINVALID},
		{name: "null body", method: "POST", path: "/v1/notifications", body: `null`, status: 400, code: heraldtype.EINVALID},
		{name: "empty trigger body", method: "POST", path: "/v1/notifications", body: ``, status: 400, code: heraldtype.EINVALID},
		{name: "invalid UTF-8", method: "POST", path: "/v1/notifications", body: notify(`,"body":"` + "\xff\xfe" + `"`), status: 400, code: heraldtype.EINVALID},
		{name: "oversized body", method: "POST", path: "/v1/notifications", body: notify(`,"body":"` + strings.Repeat("a", httpapi.DefaultMaxBodyBytes) + `"`), status: 413, code: httpapi.ERequestTooLarge},
		{name: "XML content type", method: "PUT", path: "/v1/users/bob", body: `{}`, header: []string{"Content-Type", "", "Content-Type", "application/xml"}, status: 415, code: httpapi.EUnsupportedMediaType},
		{name: "latin1 charset", method: "PUT", path: "/v1/users/bob", body: `{}`, header: []string{"Content-Type", "", "Content-Type", "application/json; charset=iso-8859-1"}, status: 415, code: httpapi.EUnsupportedMediaType},
		{name: "bad send_at", method: "POST", path: "/v1/notifications", body: notify(`,"send_at":"tomorrow"`), status: 400, code: heraldtype.EINVALID, field: "send_at"},
		{name: "numeric send_at", method: "POST", path: "/v1/notifications", body: notify(`,"send_at":12`), status: 400, code: heraldtype.EINVALID, field: "send_at"},

		// Validation by the Client.
		{name: "invalid tz", method: "PUT", path: "/v1/users/bob", body: `{"timezone":"Mars/Olympus"}`, status: 400, code: heraldtype.EINVALID, field: "timezone"},
		{name: "bad platform", method: "POST", path: "/v1/users/alice/devices", body: `{"device_id":"d","token":"t","platform":"symbian"}`, status: 400, code: heraldtype.EINVALID, field: "platform"},
		{name: "1001 recipients", method: "POST", path: "/v1/notifications", body: map[string]any{"user_ids": many, "type": "t", "title": "x"}, status: 400, code: heraldtype.EINVALID, field: "user_ids"},
		{name: "missing type", method: "POST", path: "/v1/notifications", body: `{"user_id":"alice","title":"x"}`, status: 400, code: heraldtype.EINVALID, field: "type"},
		{name: "provider payload limit", method: "POST", path: "/v1/notifications", body: notify(`,"body":"` + strings.Repeat("b", 101) + `"`), status: 400, code: heraldtype.ETOOLARGE},
		{name: "long path id", method: "GET", path: "/v1/users/" + strings.Repeat("x", 200), status: 400, code: heraldtype.EINVALID, field: "id"},
		{name: "encoded slash in id", method: "GET", path: "/v1/users/a%2Fb", status: 400, code: heraldtype.EINVALID, field: "id"},
		{name: "invalid UTF-8 id", method: "GET", path: "/v1/users/%FF", status: 400, code: heraldtype.EINVALID, field: "id"},
		{name: "control char id", method: "POST", path: "/v1/devices/a%00b/heartbeat", status: 400, code: heraldtype.EINVALID, field: "device_id"},

		// Idempotency keys.
		{name: "key mismatch", method: "POST", path: "/v1/notifications", body: notify(`,"idempotency_key":"k1"`), header: []string{"Idempotency-Key", "k2"}, status: 400, code: heraldtype.EINVALID, field: "idempotency_key"},
		{name: "key twice", method: "POST", path: "/v1/notifications", body: notify(""), header: []string{"Idempotency-Key", "k1", "Idempotency-Key", "k2"}, status: 400, code: heraldtype.EINVALID, field: "idempotency_key"},
		{name: "empty key", method: "POST", path: "/v1/notifications", body: notify(""), header: []string{"Idempotency-Key", `""`}, status: 400, code: heraldtype.EINVALID, field: "idempotency_key"},
		{name: "long key", method: "POST", path: "/v1/notifications", body: notify(""), header: []string{"Idempotency-Key", strings.Repeat("k", 300)}, status: 400, code: heraldtype.EINVALID, field: "idempotency_key"},

		// Things that do not exist.
		{name: "unknown user", method: "GET", path: "/v1/users/ghost", status: 404, code: heraldtype.ENOTFOUND},
		{name: "notify unknown user", method: "POST", path: "/v1/notifications", body: `{"user_id":"ghost","type":"t","title":"x"}`, status: 404, code: heraldtype.ENOTFOUND},
		{name: "device of unknown user", method: "POST", path: "/v1/users/ghost/devices", body: `{"device_id":"d","token":"t","platform":"ios"}`, status: 404, code: heraldtype.ENOTFOUND},
		{name: "devices of unknown user", method: "GET", path: "/v1/users/ghost/devices", status: 404, code: heraldtype.ENOTFOUND},
		{name: "delete unknown device", method: "DELETE", path: "/v1/users/alice/devices/nope", status: 404, code: heraldtype.ENOTFOUND},
		{name: "heartbeat unknown device", method: "POST", path: "/v1/devices/nope/heartbeat", status: 404, code: heraldtype.ENOTFOUND},
		{name: "unknown notification", method: "GET", path: "/v1/notifications/01ARZ3NDEKTSV4RRFFQ69G5FAV", status: 404, code: heraldtype.ENOTFOUND},
		{name: "unknown delivery", method: "POST", path: "/v1/deliveries/999999/replay", status: 404, code: heraldtype.ENOTFOUND},

		// Deliveries.
		{name: "bad delivery id", method: "POST", path: "/v1/deliveries/abc/replay", status: 400, code: heraldtype.EINVALID, field: "id"},
		{name: "zero delivery id", method: "POST", path: "/v1/deliveries/0/replay", status: 400, code: heraldtype.EINVALID, field: "id"},
		{name: "huge delivery id", method: "POST", path: "/v1/deliveries/99999999999999999999/replay", status: 400, code: heraldtype.EINVALID, field: "id"},
		{name: "unknown query parameter", method: "GET", path: "/v1/deliveries?sate=dead", status: 400, code: heraldtype.EINVALID, field: "sate"},
		{name: "repeated query parameter", method: "GET", path: "/v1/deliveries?state=dead&state=sent", status: 400, code: heraldtype.EINVALID, field: "state"},
		{name: "unknown state", method: "GET", path: "/v1/deliveries?state=lost", status: 400, code: heraldtype.EINVALID, field: "state"},
		{name: "bad from", method: "GET", path: "/v1/deliveries?from=yesterday", status: 400, code: heraldtype.EINVALID, field: "from"},
		{name: "unescaped plus", method: "GET", path: "/v1/deliveries?to=2026-01-01T00:00:00+09:00", status: 400, code: heraldtype.EINVALID, field: "to"},
		{name: "from after to", method: "GET", path: "/v1/deliveries?from=2026-02-01T00:00:00Z&to=2026-01-01T00:00:00Z", status: 400, code: heraldtype.EINVALID, field: "from"},
		{name: "bad limit", method: "GET", path: "/v1/deliveries?limit=ten", status: 400, code: heraldtype.EINVALID, field: "limit"},
		{name: "limit too big", method: "GET", path: "/v1/deliveries?limit=5000", status: 400, code: heraldtype.EINVALID, field: "limit"},
		{name: "malformed query", method: "GET", path: "/v1/deliveries?state=%zz", status: 400, code: heraldtype.EINVALID},
		{name: "bulk replay of sent", method: "POST", path: "/v1/deliveries/replay", body: `{"state":"sent"}`, status: 400, code: heraldtype.EINVALID, field: "state"},
		{name: "bulk replay bad time", method: "POST", path: "/v1/deliveries/replay", body: `{"state":"dead","from":"last week"}`, status: 400, code: heraldtype.EINVALID, field: "from"},
		{name: "bulk replay needs a body", method: "POST", path: "/v1/deliveries/replay", status: 400, code: heraldtype.EINVALID},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r := e.do(tc.method, tc.path, tc.body, tc.header...)
			if r.status != tc.status {
				t.Fatalf("status %d, want %d; body %s", r.status, tc.status, r.body)
			}
			eb := r.errorBody(t)
			if eb.Code != tc.code || eb.Field != tc.field {
				t.Fatalf("code %q field %q, want %q %q; body %s", eb.Code, eb.Field, tc.code, tc.field, r.body)
			}
		})
	}
}

func TestStatusForCodeCoversTheCatalogue(t *testing.T) {
	t.Parallel()
	want := map[string]int{
		heraldtype.EINVALID: 400, heraldtype.ETOOLARGE: 400, heraldtype.EUNAUTHENTICATED: 401,
		heraldtype.EPERMISSIONDENIED: 403, heraldtype.ENOTFOUND: 404, httpapi.EMethodNotAllowed: 405,
		heraldtype.ECONFLICT: 409, httpapi.ERequestTooLarge: 413, httpapi.EUnsupportedMediaType: 415,
		heraldtype.ERATELIMITED: 429, heraldtype.EINTERNAL: 500, heraldtype.EUNAVAILABLE: 503,
		"no_such_code": 500,
	}
	for code, status := range want {
		if got := httpapi.StatusForCode(code); got != status {
			t.Errorf("StatusForCode(%q) = %d, want %d", code, got, status)
		}
	}
}

// A body limit set in Config is honoured.
func TestConfiguredBodyLimit(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOptions{maxBodyBytes: 64})
	r := e.do("PUT", "/v1/users/bob", `{"timezone":"Asia/Seoul","email":"a-rather-long-address@example.com"}`)
	if r.status != http.StatusRequestEntityTooLarge || r.errorBody(t).Code != httpapi.ERequestTooLarge {
		t.Fatalf("status %d body %s", r.status, r.body)
	}
	e.do("PUT", "/v1/users/bob", `{"timezone":"UTC"}`).expect(t, 200, nil)
}
