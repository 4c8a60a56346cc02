package httpapi_test

import (
	"strconv"
	"strings"
	"testing"

	"github.com/golang-jwt/jwt/v5"
)

// Hostile requests, each answered with a 4xx and a stable code from the
// catalogue: never a 500, never a panic (security issue, item 7).
func TestHostileRequests(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOptions{maxBodyBytes: 64 << 10, userTokens: userTokens(t)})
	e.seedUser("alice")
	none := jwt.NewWithClaims(jwt.SigningMethodNone, jwt.MapClaims{"sub": "alice", "exp": 9999999999})
	noneTok, _ := none.SignedString(jwt.UnsafeAllowNoneSignatureType)
	expired := jwt.NewWithClaims(jwt.SigningMethodHS256, jwt.MapClaims{"sub": "alice", "exp": 1})
	expired.Header["kid"] = "app1"
	expiredTok, _ := expired.SignedString(userTokenSecret)
	wrongKid := jwt.NewWithClaims(jwt.SigningMethodHS256, jwt.MapClaims{"sub": "alice", "exp": 9999999999})
	wrongKid.Header["kid"] = "other"
	wrongKidTok, _ := wrongKid.SignedString(userTokenSecret)
	trigger := func(extra string) string {
		return `{"user_id":"alice","type":"t","title":"x"` + extra + `}`
	}
	cases := []struct {
		name, method, path, body string
		header                   []string
		status                   int
		code                     string
	}{
		{"oversized body", "POST", "/v1/notifications", trigger(`,"body":"` + strings.Repeat("a", 70<<10) + `"`), nil, 413, "request_too_large"},
		{"title over 2000", "POST", "/v1/notifications", trigger(`,"body":"` + strings.Repeat("가", 2001) + `"`), nil, 400, "invalid_argument"},
		{"malformed UTF-8", "POST", "/v1/notifications", "{\"user_id\":\"alice\",\"type\":\"t\",\"title\":\"\xff\xfe\"}", nil, 400, "invalid_argument"},
		{"NUL in title", "POST", "/v1/notifications", `{"user_id":"alice","type":"t","title":"a\u0000b"}`, nil, 400, "invalid_argument"},
		{"wrong type", "POST", "/v1/notifications", `{"user_id":42,"type":"t"}`, nil, 400, "invalid_argument"},
		{"array body", "POST", "/v1/notifications", `[1,2,3]`, nil, 400, "invalid_argument"},
		{"deep nesting", "POST", "/v1/notifications", trigger(`,"data":` + strings.Repeat(`{"a":`, 5000) + `1` + strings.Repeat(`}`, 5000)), nil, 400, "invalid_argument"},
		{"SQL injection id", "GET", "/v1/users/alice'%3B%20DROP%20TABLE%20users%3B--", "", nil, 400, "invalid_argument"},
		{"SQL injection user_id", "POST", "/v1/notifications", `{"user_id":"x' OR '1'='1","type":"t","title":"x"}`, nil, 400, "invalid_argument"},
		{"HTML injection user", "PUT", "/v1/users/%3Cscript%3Ealert(1)%3C%2Fscript%3E", "{}", nil, 400, "invalid_argument"},
		{"HTML in locale", "PUT", "/v1/users/bob", `{"locale":"<img src=x onerror=alert(1)>"}`, nil, 400, "invalid_argument"},
		{"negative limit", "GET", "/v1/deliveries?limit=-1", "", nil, 400, "invalid_argument"},
		{"huge limit", "GET", "/v1/deliveries?limit=99999999999999999999", "", nil, 400, "invalid_argument"},
		{"negative delivery id", "POST", "/v1/deliveries/-5/replay", "", nil, 400, "invalid_argument"},
		{"huge delivery id", "POST", "/v1/deliveries/99999999999999999999999/replay", "", nil, 400, "invalid_argument"},
		{"huge number field", "POST", "/v1/users/alice/inbox/read", `{"ids":[1e400]}`, nil, 400, "invalid_argument"},
		{"negative inbox id", "POST", "/v1/users/alice/inbox/-1/archive", "", nil, 400, "invalid_argument"},
		{"negative inbox id clicked", "POST", "/v1/users/alice/inbox/-1/click", "", nil, 400, "invalid_argument"},
		{"huge seen id", "POST", "/v1/users/alice/inbox/seen", `{"ids":[1e400]}`, nil, 400, "invalid_argument"},
		{"unknown user", "GET", "/v1/users/nobody", "", nil, 404, "not_found"},
		{"unknown user trigger", "POST", "/v1/notifications", `{"user_id":"nobody","type":"t","title":"x"}`, nil, 404, "not_found"},
		{"path traversal", "GET", "/v1/users/..%2F..%2Fetc%2Fpasswd", "", nil, 400, "invalid_argument"},
		{"dot-dot id", "GET", "/v1/users/%2E%2E/devices", "", nil, 400, "invalid_argument"},
		{"encoded slash device", "DELETE", "/v1/users/alice/devices/a%2Fb", "", nil, 400, "invalid_argument"},
		{"too many recipients", "POST", "/v1/notifications", `{"user_ids":[` + strings.Repeat(`"u",`, 1000) + `"u"],"type":"t","title":"x"}`, nil, 400, "invalid_argument"},
		{"token too long", "POST", "/v1/users/alice/devices", `{"device_id":"d","platform":"ios","token":"` + strings.Repeat("t", 5000) + `"}`, nil, 400, "invalid_argument"},
		{"unknown field", "PUT", "/v1/users/alice", `{"is_admin":true}`, nil, 400, "invalid_argument"},
		{"duplicate key", "POST", "/v1/notifications", `{"user_id":"alice","user_id":"nobody","type":"t","title":"x"}`, nil, 400, "invalid_argument"},
		{"case-variant key", "POST", "/v1/notifications", `{"User_Id":"alice","type":"t","title":"x"}`, nil, 400, "invalid_argument"},
		{"nested duplicate key", "PUT", "/v1/users/alice/preferences", `{"types":{"t":{"disabled":true,"disabled":false}}}`, nil, 400, "invalid_argument"},
		{"two idempotency keys", "POST", "/v1/notifications", trigger(""), []string{"Idempotency-Key", "a", "Idempotency-Key", "b"}, 400, "invalid_argument"},
		{"no credentials", "GET", "/v1/users/alice", "", []string{"Authorization", ""}, 401, "unauthenticated"},
		{"bad API key", "GET", "/v1/users/alice", "", []string{"Authorization", "Bearer hk_aaaaaaaaaaaaaaaa_" + strings.Repeat("a", 52)}, 401, "unauthenticated"},
		{"SQL in API key", "GET", "/v1/users/alice", "", []string{"Authorization", "Bearer hk_' OR 1=1--"}, 401, "unauthenticated"},
		{"expired user token", "GET", "/v1/users/alice/inbox", "", []string{"Authorization", "Bearer " + expiredTok}, 401, "unauthenticated"},
		{"alg none user token", "GET", "/v1/users/alice/inbox", "", []string{"Authorization", "Bearer " + noneTok}, 401, "unauthenticated"},
		{"wrong kid user token", "GET", "/v1/users/alice/inbox", "", []string{"Authorization", "Bearer " + wrongKidTok}, 401, "unauthenticated"},
		{"garbage user token", "GET", "/v1/users/alice/inbox", "", []string{"Authorization", "Bearer a.b.c"}, 401, "unauthenticated"},
		{"huge user token", "GET", "/v1/users/alice/inbox", "", []string{"Authorization", "Bearer " + strings.Repeat("a.", 10000)}, 401, "unauthenticated"},
		{"other user's inbox", "GET", "/v1/users/alice/inbox", "", []string{"Authorization", "Bearer " + userToken(t, "mallory")}, 403, "permission_denied"},
		{"user token on admin route", "POST", "/v1/deliveries/replay", "{}", []string{"Authorization", "Bearer " + userToken(t, "alice")}, 403, "permission_denied"},
		{"in-app data over max_data_bytes", "POST", "/v1/notifications", trigger(`,"channels":["in_app"],"data":{"k":"` + strings.Repeat("d", 5000) + `"}`), nil, 400, "invalid_argument"},
		{"too many preference types", "PUT", "/v1/users/alice/preferences", `{"types":{` + manyPreferenceTypes(201) + `}}`, nil, 400, "invalid_argument"},
		{"dot-dot path", "GET", "/v1/users/alice/../alice", "", nil, 404, "not_found"},
		{"double-slash path", "GET", "/v1//users/alice", "", nil, 404, "not_found"},
		{"encoded dot-dot segment path", "GET", "/v1/users/./alice", "", nil, 404, "not_found"},
		{"over-long suppression address", "DELETE", "/v1/suppressions/email/" + strings.Repeat("a", 321), "", nil, 400, "invalid_argument"},
		{"unknown SSE parameter", "GET", "/v1/users/alice/inbox/stream?afterr=3", "", nil, 400, "invalid_argument"},
		{"repeated SSE parameter", "GET", "/v1/users/alice/inbox/stream?after=1&after=2", "", nil, 400, "invalid_argument"},
		{"send_at far future", "POST", "/v1/notifications", trigger(`,"send_at":"9999-12-31T23:59:59Z"`), nil, 400, "invalid_argument"},
		{"send_at garbage", "POST", "/v1/notifications", trigger(`,"send_at":"tomorrow"`), nil, 400, "invalid_argument"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var body any
			if c.body != "" {
				body = c.body
			}
			r := e.do(c.method, c.path, body, c.header...)
			if r.status != c.status {
				t.Fatalf("%s %s: %d %s, want %d", c.method, c.path, r.status, r.body, c.status)
			}
			if got := r.errorBody(t).Code; got != c.code {
				t.Fatalf("code %s, want %s (%s)", got, c.code, r.body)
			}
		})
	}
}

func manyPreferenceTypes(n int) string {
	types := make([]string, n)
	for i := range types {
		types[i] = `"type` + strconv.Itoa(i) + `":{"disabled":true}`
	}
	return strings.Join(types, ",")
}
