package httpapi_test

import (
	"bufio"
	"fmt"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/heraldhq/herald/httpapi"
)

// serveReal runs e's API on a loopback port through NewHTTPServer, as
// `herald serve` does, and returns its address.
func serveReal(t *testing.T, e *env, c httpapi.ConnConfig) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv, lln, err := httpapi.NewHTTPServer(e.srv, ln, c)
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = srv.Serve(lln) }()
	t.Cleanup(func() { _ = srv.Close() }) // registered first, so it runs after the connections' cleanups
	return ln.Addr().String()
}

func dialFrom(t *testing.T, local, addr string) net.Conn {
	t.Helper()
	d := net.Dialer{Timeout: 5 * time.Second, LocalAddr: &net.TCPAddr{IP: net.ParseIP(local)}}
	c, err := d.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// get sends GET path on c and returns the status and body.
func get(t *testing.T, c net.Conn, path string) (int, string) {
	t.Helper()
	_ = c.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err := fmt.Fprintf(c, "GET %s HTTP/1.1\r\nHost: herald\r\n\r\n", path); err != nil {
		t.Fatal(err)
	}
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var b strings.Builder
	_, _ = bufio.NewReader(resp.Body).WriteTo(&b)
	return resp.StatusCode, b.String()
}

// Over the per-address cap a connection is answered 429, over the total
// cap 503, each naming its limit; another address still gets in.
func TestConnectionCaps(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOptions{})
	addr := serveReal(t, e, httpapi.ConnConfig{MaxConns: 3, MaxConnsPerClient: 2})
	for range 2 {
		if st, _ := get(t, dialFrom(t, "127.0.0.1", addr), "/healthz"); st != 200 {
			t.Fatalf("first connections: %d", st)
		}
	}
	if st, body := get(t, dialFrom(t, "127.0.0.1", addr), "/healthz"); st != 429 || !strings.Contains(body, "rate_limited") || !strings.Contains(body, "limit is 2") {
		t.Errorf("third from one address: %d %s", st, body)
	}
	if st, _ := get(t, dialFrom(t, "127.0.0.2", addr), "/healthz"); st != 200 {
		t.Errorf("another address: %d", st)
	}
	if st, body := get(t, dialFrom(t, "127.0.0.3", addr), "/healthz"); st != 503 || !strings.Contains(body, "unavailable") || !strings.Contains(body, "maximum of 3") {
		t.Errorf("over the total: %d %s", st, body)
	}
}

// The load test of issue 18: many idle, slow-header and slow-body
// connections are held open against a real server while a normal request
// is still answered. Bounded (250 connections, loopback, no perf timing).
func TestHostileConnectionsLeaveRoomForANormalRequest(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOptions{})
	addr := serveReal(t, e, httpapi.ConnConfig{MaxConns: 400, MaxConnsPerClient: -1})
	for i := range 250 {
		c := dialFrom(t, "127.0.0.1", addr)
		switch i % 5 {
		case 0, 1: // idle: connect and say nothing
		case 2: // slow headers: never finish them
			fmt.Fprint(c, "POST /v1/notifications HTTP/1.1\r\nHost: herald\r\n")
		case 3: // a stranger's slow body
			fmt.Fprint(c, "POST /v1/notifications HTTP/1.1\r\nHost: herald\r\nContent-Length: 100000\r\n\r\n{")
		case 4: // a keyed slow body
			fmt.Fprintf(c, "POST /v1/notifications HTTP/1.1\r\nHost: herald\r\nAuthorization: Bearer %s\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n\r\n{", e.adminKey)
		}
	}
	if st, body := get(t, dialFrom(t, "127.0.0.1", addr), "/healthz"); st != 200 {
		t.Fatalf("healthz under load: %d %s", st, body)
	}
	c := dialFrom(t, "127.0.0.1", addr)
	_ = c.SetDeadline(time.Now().Add(10 * time.Second))
	fmt.Fprintf(c, "PUT /v1/users/u1 HTTP/1.1\r\nHost: herald\r\nAuthorization: Bearer %s\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}", e.adminKey)
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("an authenticated write under load: %v %v", resp, err)
	}
}
