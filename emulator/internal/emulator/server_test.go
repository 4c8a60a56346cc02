package emulator

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

func TestServerLifecycle(t *testing.T) {
	t.Parallel()
	var s Server
	h := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { io.WriteString(w, "ok") })
	u, err := s.Listen("test", "127.0.0.1:0", h, nil, nil)
	if err != nil || !strings.HasPrefix(u, "http://127.0.0.1:") || s.URL() != u {
		t.Fatalf("Listen = %q, %v; URL %q", u, err, s.URL())
	}
	if _, err := s.Listen("test", "127.0.0.1:0", h, nil, nil); err == nil {
		t.Fatal("a second Listen succeeded")
	}
	resp, err := http.Get(u)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if string(body) != "ok" {
		t.Fatalf("body %q", body)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal("second Close:", err)
	}

	var tlsServer Server
	ts := httptest.NewUnstartedServer(h)
	ts.StartTLS() // only for its certificate
	defer ts.Close()
	u, err = tlsServer.Listen("test", "127.0.0.1:0", h, ts.TLS, nil)
	if err != nil || !strings.HasPrefix(u, "https://") {
		t.Fatalf("TLS Listen = %q, %v", u, err)
	}
	resp, err = ts.Client().Get(u)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	tlsServer.Close()
}

func TestServerURLOr(t *testing.T) {
	t.Parallel()
	var s Server
	if got := s.URLOr("http://public:8080"); got != "http://public:8080" {
		t.Fatalf("URLOr before Serve = %q, want the fallback", got)
	}
	u, err := s.Listen("test", "127.0.0.1:0", http.NotFoundHandler(), nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if got := s.URLOr("http://public:8080"); got != u {
		t.Fatalf("URLOr while serving = %q, want %q", got, u)
	}
}
