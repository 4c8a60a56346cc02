package httpapi_test

import (
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/heraldhq/herald/heraldtype"
	"github.com/heraldhq/herald/httpapi"
)

// Issue 23 item 8: failed authentications are limited per client
// address. Over the limit an address is answered 429 with Retry-After
// before its credential is looked at — a valid key from it waits too —
// while other addresses are unaffected, and the bucket refills.
func TestFailedAuthLimitedPerAddress(t *testing.T) {
	t.Parallel()
	clk := &fakeClock{t: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	e := newEnv(t, envOptions{rateLimit: httpapi.RateLimitConfig{
		FailedAuth: httpapi.RateLimit{PerSecond: 0.5, Burst: 2}, Now: clk.Now,
	}})
	guess := "Bearer hk_aaaaaaaaaaaaaaaa_" + strings.Repeat("a", 52)
	get := func(addr, authz string) *httptest.ResponseRecorder {
		t.Helper()
		req := httptest.NewRequest("GET", "/v1/types", nil)
		req.RemoteAddr = addr
		req.Header.Set("Authorization", authz)
		rec := httptest.NewRecorder()
		e.h.ServeHTTP(rec, req)
		return rec
	}
	const attacker, other = "203.0.113.7:40000", "198.51.100.1:40000"
	for i := range 2 {
		if rec := get(attacker, guess); rec.Code != 401 {
			t.Fatalf("guess %d: %d, want 401", i, rec.Code)
		}
	}
	for _, authz := range []string{guess, "Bearer " + e.adminKey} {
		rec := get(attacker, authz)
		if rec.Code != 429 || rec.Header().Get("Retry-After") != "2" || !strings.Contains(rec.Body.String(), heraldtype.ERATELIMITED) {
			t.Fatalf("over the limit: %d Retry-After=%q %s", rec.Code, rec.Header().Get("Retry-After"), rec.Body)
		}
	}
	// Another address, and the same /64 of IPv6 counted as one client.
	if rec := get(other, "Bearer "+e.adminKey); rec.Code != 200 {
		t.Fatalf("another address: %d", rec.Code)
	}
	for range 2 {
		get("[2001:db8::1]:1", guess)
	}
	if rec := get("[2001:db8::2]:1", guess); rec.Code != 429 {
		t.Fatalf("a second address of the same IPv6 /64: %d, want 429", rec.Code)
	}
	clk.Add(2 * time.Second)
	if rec := get(attacker, "Bearer "+e.adminKey); rec.Code != 200 {
		t.Fatalf("after the refill: %d, want 200", rec.Code)
	}
	// Successes take nothing: many good requests leave the bucket as is.
	for range 5 {
		get(attacker, "Bearer "+e.adminKey)
	}
	if rec := get(attacker, guess); rec.Code != 401 {
		t.Fatalf("a failure after successes: %d, want 401", rec.Code)
	}
}
