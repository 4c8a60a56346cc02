package callout

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

func TestCheckURL(t *testing.T) {
	t.Parallel()
	for raw, ok := range map[string]bool{
		"https://reco.example/users":                   true,
		"http://127.0.0.1:9000/a?b=c":                  true,
		"ftp://reco.example/":                          false,
		"file:///etc/passwd":                           false,
		"https://user:pw@reco/":                        false,
		"/relative":                                    false,
		"https://" + strings.Repeat("a", MaxURLLength): false,
	} {
		if err := CheckURL(raw); (err == nil) != ok {
			t.Errorf("%q: %v", raw, err)
		}
	}
}

func TestPostJSON(t *testing.T) {
	t.Parallel()
	hang := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		switch r.URL.Path {
		case "/echo":
			if r.Method != http.MethodPost || r.Header.Get("Content-Type") != "application/json" {
				http.Error(w, "bad request", http.StatusBadRequest)
				return
			}
			_, _ = w.Write([]byte(`{"n":1}`))
		case "/fail":
			http.Error(w, "boom", http.StatusInternalServerError)
		case "/big":
			_, _ = w.Write([]byte(`{"n":1,"pad":"` + strings.Repeat("x", 100) + `"}`))
		case "/junk":
			_, _ = w.Write([]byte(`<html>`))
		case "/hang":
			select {
			case <-hang:
			case <-r.Context().Done():
			}
		}
	}))
	defer srv.Close()
	defer close(hang) // before Close, which waits for the hanging handler
	for path, want := range map[string]string{
		"/echo": "",
		"/fail": "status 500",
		"/big":  "longer than 64 bytes",
		"/junk": "does not decode",
		"/hang": "no answer within 100ms",
	} {
		var out struct{ N int }
		err := PostJSON(context.Background(), srv.Client(), srv.URL+path, 100*time.Millisecond, 64, map[string]string{"a": "b"}, &out)
		switch {
		case want == "" && (err != nil || out.N != 1):
			t.Errorf("%s: %+v %v", path, out, err)
		case want != "" && (err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), srv.URL)):
			t.Errorf("%s: %v, want %q", path, err, want)
		}
	}
}
