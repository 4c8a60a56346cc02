package httpapi_test

import (
	"net/http"
	"net/http/httptest"
	"testing"
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
