package httpapi_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/heraldhq/herald/auth"
	"github.com/heraldhq/herald/heraldtype"
	"github.com/heraldhq/herald/httpapi"
	"github.com/heraldhq/herald/internal/apitest"
)

var userTokenSecret = []byte("test-user-token-secret-0123456789abcdef")

func userTokens(t *testing.T) *auth.UserTokens {
	t.Helper()
	v, err := auth.NewUserTokens(auth.UserTokenConfig{Keys: []auth.UserTokenKey{{ID: "app1", Algorithm: auth.AlgHS256, Secret: userTokenSecret}}})
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// userToken signs a token for sub valid for an hour.
func userToken(t testing.TB, sub string) string {
	t.Helper()
	tok := jwt.NewWithClaims(jwt.SigningMethodHS256, jwt.MapClaims{"sub": sub, "exp": time.Now().Add(time.Hour).Unix()})
	tok.Header["kid"] = "app1"
	s, err := tok.SignedString(userTokenSecret)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// key creates an API key with the given scopes.
func (e *env) key(scopes ...auth.Scope) string {
	e.t.Helper()
	_, k, err := e.keys.Create(context.Background(), "test", scopes)
	if err != nil {
		e.t.Fatal(err)
	}
	return k
}

// concretePath fills a route pattern's wildcards.
func concretePath(pattern, user string) (method, path string) {
	method, path, _ = strings.Cut(pattern, " ")
	r := strings.NewReplacer("{id}", user, "{device_id}", user+"-phone", "{item_id}", "1", "{channel}", "sms", "{address}", "%2B15550100")
	return method, r.Replace(path)
}

// Every route but the health probes needs credentials; a key needs the
// route's scope; a user token reaches only its own user's routes and the
// app routes. This walks the server's own route table, so a route added
// later is covered without touching the test.
func TestEveryRouteIsGuarded(t *testing.T) {
	t.Parallel()
	metrics := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
		_, _ = w.Write([]byte("# no metrics\n"))
	})
	e := newEnv(t, envOptions{userTokens: userTokens(t), metrics: metrics, console: http.NotFoundHandler()})
	e.seedUser("alice")
	e.seedUser("bob")
	bobToken := userToken(t, "bob")
	aliceToken := userToken(t, "alice")
	noScope := e.key(auth.ScopeMetricsRead)
	rules := httpapi.Rules(e.srv)
	if len(rules) < 20 {
		t.Fatalf("only %d routes registered", len(rules))
	}
	for pattern, rule := range rules {
		if consoleMount(t, pattern, rule) {
			continue // the console guards itself: console's own tests
		}
		method, path := concretePath(pattern, "alice")
		if pattern == "GET /metrics" {
			path = "/metrics"
		}
		t.Run(pattern, func(t *testing.T) {
			r := e.do(method, path, nil, "Authorization", "")
			if rule.Open {
				if r.status == 401 || r.status == 403 {
					t.Fatalf("open route answered %d", r.status)
				}
				return
			}
			if r.status != 401 || !strings.HasPrefix(r.header.Get("WWW-Authenticate"), "Bearer") {
				t.Fatalf("without credentials: %d (WWW-Authenticate %q), want 401", r.status, r.header.Get("WWW-Authenticate"))
			}
			r.errorBody(t)
			if rule.User {
				// Any user's token gets in, speaking for its own user
				// (the Client keeps it to that user's records:
				// TestReceipts); a key needs the scope.
				for _, cred := range []string{bobToken, e.key(auth.Scope(rule.Scope))} {
					if r := e.do(method, path, nil, "Authorization", "Bearer "+cred); r.status == 401 || r.status == 403 {
						t.Fatalf("a user token or a key with scope %s: %d %s", rule.Scope, r.status, r.body)
					}
				}
				if r := e.do(method, path, nil, "Authorization", "Bearer "+noScope); r.status != 403 {
					t.Fatalf("key without scope %s: %d, want 403", rule.Scope, r.status)
				}
				return
			}
			// Another user's token never gets in.
			r = e.do(method, path, nil, "Authorization", "Bearer "+bobToken)
			if !rule.UserOnly && (r.status != 403 || r.errorBody(t).Code != heraldtype.EPERMISSIONDENIED) {
				t.Fatalf("bob's token on alice's route: %d %s, want 403", r.status, r.body)
			}
			if rule.UserOnly {
				// Keys may not call the app routes; the user comes from the token.
				if r := e.do(method, path, nil, "Authorization", "Bearer "+e.adminKey); r.status != 403 {
					t.Fatalf("server key on an app route: %d", r.status)
				}
				return
			}
			if strings.HasSuffix(pattern, "/stream") {
				return // allowed, it streams until the client leaves: TestInboxStreamAuth
			}
			if pattern != "GET /metrics" {
				if r := e.do(method, path, nil, "Authorization", "Bearer "+noScope); r.status != 403 {
					t.Fatalf("key without scope %s: %d, want 403", rule.Scope, r.status)
				}
			}
			if r := e.do(method, path, nil, "Authorization", "Bearer "+e.key(auth.Scope(rule.Scope))); r.status == 401 || r.status == 403 {
				t.Fatalf("key with scope %s: %d %s", rule.Scope, r.status, r.body)
			}
			r = e.do(method, path, nil, "Authorization", "Bearer "+aliceToken)
			if rule.Self && (r.status == 401 || r.status == 403) {
				t.Fatalf("alice's token on her own route: %d %s", r.status, r.body)
			}
			if !rule.Self && r.status != 403 {
				t.Fatalf("a user token on a server route: %d, want 403", r.status)
			}
		})
	}
}

// A user sees and changes only its own devices and inbox: the behaviour
// behind each user route, beyond the 403s above.
func TestUserCannotReachAnotherUser(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOptions{userTokens: userTokens(t)})
	e.seedUser("alice") // device alice-phone, token tok-alice
	e.seedUser("bob")
	alice := "Bearer " + userToken(t, "alice")
	bob := "Bearer " + userToken(t, "bob")

	// POST /v1/tokens registers for the token's user only; the body
	// cannot name another.
	e.do("POST", "/v1/tokens", map[string]any{"device_id": "bob-tablet", "token": "tok-bt", "platform": "ios"}, "Authorization", bob).expect(t, 200, nil)
	e.do("POST", "/v1/tokens", map[string]any{"user_id": "alice", "device_id": "x", "token": "t", "platform": "ios"}, "Authorization", bob).expect(t, 400, nil)
	// Knowing alice's device id is not enough to take it over. This used
	// to be a 409, which told bob that the id was someone else's; it is
	// now a device of bob's own under an id Herald assigns (issue 18;
	// TestUserTokenCannotTakeOverDevice has the details).
	var d heraldtype.Device
	e.do("POST", "/v1/tokens", map[string]any{"device_id": "alice-phone", "token": "tok-evil", "platform": "android"}, "Authorization", bob).expect(t, 200, &d)
	if d.ID == "alice-phone" || d.UserID != "bob" {
		t.Fatalf("bob taking over alice's device id: %+v", d)
	}
	var ds struct{ Devices []heraldtype.Device }
	e.do("GET", "/v1/users/alice/devices", nil).expect(t, 200, &ds)
	if len(ds.Devices) != 1 || ds.Devices[0].Token != "tok-alice" {
		t.Fatalf("alice's devices after the attempt: %+v", ds.Devices)
	}
	// The push token alice's phone holds, presented by bob while alice
	// still uses the phone, used to move the token to bob (issue 18); it
	// is now refused, 409 on token (issue 23: a leaked token is no key;
	// TestUserTokenCannotTakeOverDevice has the hand-over, S0.1). alice
	// registering again refreshes her own device.
	e.do("POST", "/v1/tokens", map[string]any{"device_id": "alice-phone", "token": "tok-alice", "platform": "android"}, "Authorization", bob).expect(t, 409, nil)
	e.do("POST", "/v1/tokens", map[string]any{"device_id": "alice-phone", "token": "tok-alice", "platform": "android"}, "Authorization", alice).expect(t, 200, nil)

	// Heartbeat: only the caller's own device, by id or token; another
	// user's device looks like no device at all.
	e.do("POST", "/v1/tokens/heartbeat", map[string]any{"device_id": "alice-phone"}, "Authorization", alice).expect(t, 204, nil)
	e.do("POST", "/v1/tokens/heartbeat", map[string]any{"token": "tok-alice"}, "Authorization", alice).expect(t, 204, nil)
	for _, body := range []map[string]any{{"device_id": "alice-phone"}, {"token": "tok-alice"}, {"device_id": "nope"}} {
		if r := e.do("POST", "/v1/tokens/heartbeat", body, "Authorization", bob); r.status != 404 {
			t.Fatalf("bob's heartbeat %v: %d", body, r.status)
		}
	}
	e.do("POST", "/v1/tokens/heartbeat", map[string]any{}, "Authorization", alice).expect(t, 400, nil)
	e.do("POST", "/v1/tokens/heartbeat", map[string]any{"device_id": "a", "token": "b"}, "Authorization", alice).expect(t, 400, nil)

	// Devices: list and delete only under one's own id.
	e.do("GET", "/v1/users/alice/devices", nil, "Authorization", alice).expect(t, 200, nil)
	e.do("GET", "/v1/users/alice/devices", nil, "Authorization", bob).expect(t, 403, nil)
	e.do("DELETE", "/v1/users/alice/devices/alice-phone", nil, "Authorization", bob).expect(t, 403, nil)
	e.do("POST", "/v1/users/alice/devices", map[string]any{"device_id": "x", "token": "t", "platform": "ios"}, "Authorization", bob).expect(t, 403, nil)

	// Inbox and its stream (the stream also takes ?access_token=, for
	// EventSource).
	e.do("GET", "/v1/users/alice/inbox", nil, "Authorization", bob).expect(t, 403, nil)
	e.do("GET", "/v1/users/alice/inbox", nil, "Authorization", alice).expect(t, 200, nil)
	e.do("GET", "/v1/users/alice/inbox/stream?access_token="+userToken(t, "bob"), nil, "Authorization", "").expect(t, 403, nil)
	e.do("POST", "/v1/users/alice/inbox/read", map[string]any{"ids": []int{1}}, "Authorization", bob).expect(t, 403, nil)
	e.do("POST", "/v1/users/alice/inbox/read-all", nil, "Authorization", bob).expect(t, 403, nil)
	e.do("POST", "/v1/users/alice/inbox/1/archive", nil, "Authorization", bob).expect(t, 403, nil)
	e.do("POST", "/v1/users/alice/inbox/seen", map[string]any{"ids": []int{1}}, "Authorization", bob).expect(t, 403, nil)
	e.do("POST", "/v1/users/alice/inbox/1/click", nil, "Authorization", bob).expect(t, 403, nil)
	// The query token is only for the stream.
	e.do("GET", "/v1/users/alice/inbox?access_token="+userToken(t, "alice"), nil, "Authorization", "").expect(t, 401, nil)
}

func TestCredentialErrors(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOptions{})
	k, secret, err := e.keys.Create(context.Background(), "gone", []auth.Scope{auth.ScopeAdmin})
	if err != nil {
		t.Fatal(err)
	}
	e.do("GET", "/v1/deliveries", nil, "Authorization", "Bearer "+secret).expect(t, 200, nil)
	if err := e.keys.Revoke(context.Background(), k.ID); err != nil {
		t.Fatal(err)
	}
	for name, h := range map[string]string{
		"revoked":         "Bearer " + secret,
		"basic":           "Basic YWxhZGRpbjpvcGVuc2VzYW1l",
		"empty bearer":    "Bearer ",
		"no scheme":       e.adminKey,
		"garbage":         "Bearer hk_nope",
		"user tokens off": "Bearer " + userToken(t, "alice"),
	} {
		r := e.do("GET", "/v1/deliveries", nil, "Authorization", h)
		if r.status != 401 || r.errorBody(t).Code != heraldtype.EUNAUTHENTICATED {
			t.Errorf("%s: %d %s", name, r.status, r.body)
		}
		if strings.Contains(string(r.body), secret[20:]) {
			t.Errorf("%s: the response echoes the key", name)
		}
	}
	// Two Authorization headers are refused rather than guessed between.
	r := e.do("GET", "/v1/deliveries", nil, "Authorization", "Bearer "+e.adminKey, "Authorization", "Bearer "+e.adminKey)
	if r.status != 401 {
		t.Errorf("two Authorization headers: %d", r.status)
	}
}

// /metrics needs metrics:read unless configured open.
func TestMetricsAuth(t *testing.T) {
	t.Parallel()
	ok := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain; version=0.0.4; charset=utf-8") // as promhttp answers
		_, _ = w.Write([]byte("herald_up 1\n"))
	})
	e := newEnv(t, envOptions{metrics: ok})
	e.do("GET", "/metrics", nil, "Authorization", "").expect(t, 401, nil)
	e.do("GET", "/metrics", nil, "Authorization", "Bearer "+e.key(auth.ScopeUsersRead)).expect(t, 403, nil)
	e.do("GET", "/metrics", nil, "Authorization", "Bearer "+e.key(auth.ScopeMetricsRead)).expect(t, 200, nil)
	open := newEnv(t, envOptions{metrics: ok, openMetrics: true})
	open.do("GET", "/metrics", nil, "Authorization", "").expect(t, 200, nil)
}

// fakeClock is a settable clock for the rate limiter.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *fakeClock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *fakeClock) Add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// Each key and each user has its own bucket; over it the answer is 429
// with Retry-After, and the bucket refills with time.
func TestRateLimit(t *testing.T) {
	t.Parallel()
	clk := &fakeClock{t: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	e := newEnv(t, envOptions{userTokens: userTokens(t), rateLimit: httpapi.RateLimitConfig{
		APIKey: httpapi.RateLimit{PerSecond: 0.5, Burst: 3},
		User:   httpapi.RateLimit{PerSecond: 0.25, Burst: 1},
		Now:    clk.Now,
	}})
	e.seedUser("alice") // 2 requests of the admin key's 3
	e.do("GET", "/v1/users/alice", nil).expect(t, 200, nil)
	r := e.do("GET", "/v1/users/alice", nil)
	if r.status != 429 || r.errorBody(t).Code != heraldtype.ERATELIMITED || r.header.Get("Retry-After") != "2" {
		t.Fatalf("over the limit: %d Retry-After=%q %s", r.status, r.header.Get("Retry-After"), r.body)
	}
	// Another key is not affected.
	e.do("GET", "/v1/users/alice", nil, "Authorization", "Bearer "+e.key(auth.ScopeUsersRead)).expect(t, 200, nil)
	alice := "Bearer " + userToken(t, "alice")
	e.do("GET", "/v1/users/alice/devices", nil, "Authorization", alice).expect(t, 200, nil)
	r = e.do("GET", "/v1/users/alice/devices", nil, "Authorization", alice)
	if r.status != 429 || r.header.Get("Retry-After") != "4" {
		t.Fatalf("user over the limit: %d Retry-After=%q", r.status, r.header.Get("Retry-After"))
	}
	clk.Add(2 * time.Second)
	e.do("GET", "/v1/users/alice", nil).expect(t, 200, nil)
	// Health probes are never limited.
	for range 5 {
		e.do("GET", "/healthz", nil).expect(t, 200, nil)
	}
}

// Development mode: no credentials act as admin, but credentials that are
// sent are still checked.
func TestAuthDisabledForDev(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOptions{})
	dev, err := httpapi.New(httpapi.Config{Client: e.client, Auth: httpapi.AuthConfig{Disabled: true, Keys: e.keys}})
	if err != nil {
		t.Fatal(err)
	}
	e.srv, e.h = dev, apitest.Handler(t, dev)
	e.do("PUT", "/v1/users/carol", nil, "Authorization", "").expect(t, 200, nil)
	e.do("PUT", "/v1/users/carol", nil, "Authorization", "Bearer hk_wrong").expect(t, 401, nil)
	if _, err := httpapi.New(httpapi.Config{Client: e.client}); err == nil {
		t.Fatal("New without keys and without Disabled succeeded")
	}
}

// The inbox stream admits its own user, by header or by ?access_token=
// (EventSource cannot send headers).
func TestInboxStreamAuth(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOptions{userTokens: userTokens(t)})
	e.seedUser("alice")
	ts := httptest.NewServer(e.h)
	defer ts.Close()
	for name, mod := range map[string]func(*http.Request){
		"header": func(r *http.Request) { r.Header.Set("Authorization", "Bearer "+userToken(t, "alice")) },
		"query":  func(r *http.Request) { r.URL.RawQuery = "access_token=" + userToken(t, "alice") },
	} {
		ctx, cancel := context.WithCancel(context.Background())
		req, _ := http.NewRequestWithContext(ctx, "GET", ts.URL+"/v1/users/alice/inbox/stream", nil)
		mod(req)
		resp, err := ts.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		if resp.StatusCode != 200 || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
			t.Errorf("%s: %d %s", name, resp.StatusCode, resp.Header.Get("Content-Type"))
		}
		cancel()
		resp.Body.Close()
	}
}

// A server API key is long-lived and powerful; a URL ends up in proxy logs,
// browser history and Referer headers. So only a short-lived user token may
// travel in ?access_token=; a key there is refused before it is looked up,
// even a valid admin key, and the refusal points to the header (issue 18).
func TestStreamRefusesAPIKeyInQuery(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOptions{userTokens: userTokens(t)})
	e.seedUser("alice")
	ts := httptest.NewServer(e.h)
	defer ts.Close()
	for name, key := range map[string]string{"valid admin key": e.adminKey, "unknown key": "hk_aaaaaaaaaaaaaaaa_" + strings.Repeat("a", 52)} {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		req, _ := http.NewRequestWithContext(ctx, "GET", ts.URL+"/v1/users/alice/inbox/stream?access_token="+key, nil)
		resp, err := ts.Client().Do(req)
		if err != nil {
			cancel()
			t.Fatal(err)
		}
		body := make([]byte, 4096)
		n, _ := io.ReadFull(resp.Body, body)
		resp.Body.Close()
		cancel()
		if resp.StatusCode != http.StatusUnauthorized {
			t.Errorf("%s in the query: %d, want 401", name, resp.StatusCode)
			continue
		}
		if !strings.Contains(string(body[:n]), "Authorization header") {
			t.Errorf("%s in the query: the refusal %s does not point to the Authorization header", name, body[:n])
		}
		if strings.Contains(string(body[:n]), key) {
			t.Errorf("%s in the query: the refusal echoes the key", name)
		}
	}
}
