package httpapi_test

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/heraldhq/herald/httpapi"
)

// Issue 21 item 6: a page of an allowed origin may call the API from the
// browser: its preflight is answered (before any credential, which a
// preflight never carries) and its requests are marked readable; another
// origin gets no CORS header, so its browser keeps the answer from the
// page. The request itself is authenticated as any other.
func TestCORS(t *testing.T) {
	e := newEnv(t, envOptions{})
	srv, err := httpapi.New(httpapi.Config{Client: e.client, Auth: httpapi.AuthConfig{Keys: e.keys},
		CORS: httpapi.CORSConfig{AllowedOrigins: []string{"https://app.example.com"}}})
	if err != nil {
		t.Fatal(err)
	}
	do := func(method, path, origin string, h ...string) *httptest.ResponseRecorder {
		r := httptest.NewRequest(method, path, nil)
		r.Header.Set("Origin", origin)
		for i := 0; i+1 < len(h); i += 2 {
			r.Header.Set(h[i], h[i+1])
		}
		w := httptest.NewRecorder()
		srv.ServeHTTP(w, r)
		return w
	}
	pre := do("OPTIONS", "/v1/tokens", "https://app.example.com", "Access-Control-Request-Method", "POST",
		"Access-Control-Request-Headers", "authorization, content-type")
	if pre.Code != http.StatusNoContent || pre.Header().Get("Access-Control-Allow-Origin") != "https://app.example.com" ||
		pre.Header().Get("Access-Control-Allow-Headers") == "" || pre.Header().Get("Access-Control-Allow-Credentials") != "" {
		t.Fatalf("preflight: %d %v", pre.Code, pre.Header())
	}
	got := do("GET", "/v1/webpush/vapid-public-key", "https://app.example.com")
	if got.Header().Get("Access-Control-Allow-Origin") != "https://app.example.com" {
		t.Fatalf("actual request: %v", got.Header())
	}
	// No Web Push provider here: the key is not found (and the answer is
	// readable by the page all the same).
	if got.Code != http.StatusNotFound {
		t.Fatalf("vapid-public-key without a Web Push provider: %d", got.Code)
	}
	// Still authenticated: a page without a credential is refused.
	if w := do("GET", "/v1/users/u1", "https://app.example.com"); w.Code != http.StatusUnauthorized {
		t.Fatalf("unauthenticated call from an allowed origin: %d", w.Code)
	}
	for _, w := range []*httptest.ResponseRecorder{
		do("OPTIONS", "/v1/tokens", "https://evil.example", "Access-Control-Request-Method", "POST"),
		do("GET", "/v1/webpush/vapid-public-key", "https://evil.example"),
	} {
		if w.Header().Get("Access-Control-Allow-Origin") != "" {
			t.Fatalf("another origin got CORS headers: %v", w.Header())
		}
	}
	if _, err := httpapi.New(httpapi.Config{Client: e.client, Auth: httpapi.AuthConfig{Keys: e.keys},
		CORS: httpapi.CORSConfig{AllowedOrigins: []string{"https://app.example.com/path"}}}); err == nil {
		t.Fatal("an origin with a path was accepted")
	}
}
