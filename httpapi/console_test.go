package httpapi_test

import (
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/heraldhq/herald/httpapi"
)

// TestConsoleMount: /console/ and what is under it reach the console
// without an API key (it signs its users in itself), with the request id
// every answer carries; /console is sent to /console/. The requests go to
// the Server itself, not through the contract's validator: the console
// is not part of the API's document.
func TestConsoleMount(t *testing.T) {
	t.Parallel()
	var got []string
	console := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got = append(got, r.Method+" "+r.URL.Path)
		w.WriteHeader(http.StatusTeapot)
	})
	e := newEnv(t, envOptions{console: console})
	for _, c := range []struct{ method, path string }{{"GET", "/console/"}, {"GET", "/console/overview"}, {"POST", "/console/sign-in"}} {
		rec := httptest.NewRecorder()
		e.srv.ServeHTTP(rec, httptest.NewRequest(c.method, c.path, nil))
		if rec.Code != http.StatusTeapot || rec.Header().Get("X-Request-Id") == "" {
			t.Errorf("%s %s: %d, request id %q; want the console's 418 with a request id", c.method, c.path, rec.Code, rec.Header().Get("X-Request-Id"))
		}
	}
	if len(got) != 3 {
		t.Errorf("the console saw %v", got)
	}
	rec := httptest.NewRecorder()
	e.srv.ServeHTTP(rec, httptest.NewRequest("GET", "/console", nil))
	if rec.Code != http.StatusMovedPermanently || rec.Header().Get("Location") != "/console/" {
		t.Errorf("GET /console: %d to %q, want 301 to /console/", rec.Code, rec.Header().Get("Location"))
	}
	// Without a console the paths are the API's 404.
	bare := newEnv(t, envOptions{})
	rec = httptest.NewRecorder()
	bare.srv.ServeHTTP(rec, httptest.NewRequest("GET", "/console/overview", nil))
	if rec.Code != http.StatusNotFound {
		t.Errorf("without a console: %d, want 404", rec.Code)
	}
}

// TestConsoleSignInSharesTheFailedAuthLimit: a refused console sign-in
// takes a failure from its address's bucket like a refused API key, and
// an address out of failures is answered 429 with Retry-After before the
// console looks at its key; a sign-in the console accepts takes nothing.
func TestConsoleSignInSharesTheFailedAuthLimit(t *testing.T) {
	t.Parallel()
	clk := &fakeClock{t: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	var seen int
	console := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		seen++
		if r.Header.Get("X-Test-Key") == "good" {
			w.WriteHeader(http.StatusSeeOther)
			return
		}
		w.WriteHeader(http.StatusUnauthorized)
	})
	e := newEnv(t, envOptions{console: console, rateLimit: httpapi.RateLimitConfig{
		FailedAuth: httpapi.RateLimit{PerSecond: 0.5, Burst: 2}, Now: clk.Now,
	}})
	signIn := func(addr, key string) *httptest.ResponseRecorder {
		req := httptest.NewRequest("POST", "/console/sign-in", nil)
		req.RemoteAddr = addr
		rec := httptest.NewRecorder()
		req.Header.Set("X-Test-Key", key)
		e.srv.ServeHTTP(rec, req)
		return rec
	}
	const attacker = "203.0.113.9:40000"
	for range 5 {
		if rec := signIn(attacker, "good"); rec.Code != http.StatusSeeOther {
			t.Fatalf("an accepted sign-in: %d", rec.Code)
		}
	}
	for i := range 2 {
		if rec := signIn(attacker, "wrong"); rec.Code != http.StatusUnauthorized {
			t.Fatalf("refused sign-in %d: %d, want 401", i, rec.Code)
		}
	}
	before := seen
	rec := signIn(attacker, "good")
	if rec.Code != http.StatusTooManyRequests || rec.Header().Get("Retry-After") != "2" || seen != before {
		t.Fatalf("over the limit: %d Retry-After=%q, console asked: %v", rec.Code, rec.Header().Get("Retry-After"), seen != before)
	}
	if rec := signIn("198.51.100.2:1", "good"); rec.Code != http.StatusSeeOther {
		t.Fatalf("another address: %d", rec.Code)
	}
	clk.Add(2 * time.Second)
	if rec := signIn(attacker, "good"); rec.Code != http.StatusSeeOther {
		t.Fatalf("after the refill: %d", rec.Code)
	}
}
