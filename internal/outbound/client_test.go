package outbound

import (
	"bytes"
	"context"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

var loopback = []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8"), netip.MustParsePrefix("::1/128")}

// post POSTs a small body to raw within a second.
func post(t *testing.T, c *Client, raw string) (*http.Response, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	t.Cleanup(cancel)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, raw, strings.NewReader(`{"a":1}`))
	if err != nil {
		t.Fatal(err)
	}
	return c.Do(req)
}

func counting(hits *atomic.Int64) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		_, _ = io.Copy(io.Discard, r.Body)
		_, _ = w.Write([]byte(`{}`))
	}))
	return srv
}

// Issue 31 item 2: every internal form of an address is refused at dial
// time — after DNS, so a name resolving to loopback is caught too — and
// nothing reaches the listener; the error is "refused" with nothing of
// the network in it.
func TestRefusedForms(t *testing.T) {
	t.Parallel()
	var hits atomic.Int64
	srv := counting(&hits)
	defer srv.Close()
	_, port, _ := net.SplitHostPort(strings.TrimPrefix(srv.URL, "http://"))
	c := New(Config{})
	for _, host := range []string{
		"127.0.0.1", "localhost", "127.1.2.3", "[::1]", "[::ffff:127.0.0.1]", "[64:ff9b::7f00:1]", "[::127.0.0.1]",
		"[2002:7f00:1::]", "169.254.169.254", "10.0.0.1", "172.16.0.1", "172.31.255.254", "192.168.1.1", "100.64.0.1",
		"0.0.0.0", "224.0.0.1", "[fe80::1]", "[fd00::1]", "[ff02::1]", "198.18.0.1",
	} {
		resp, err := post(t, c, "http://"+host+":"+port+"/hook?token=s3cret")
		var oe *Error
		if resp != nil {
			resp.Body.Close()
		}
		if !errors.As(err, &oe) || oe.Code != CodeRefused {
			t.Errorf("%s: %v, want refused", host, err)
			continue
		}
		if msg := err.Error(); strings.Contains(msg, "s3cret") || strings.Contains(msg, "dial") || strings.Contains(msg, "connect") {
			t.Errorf("%s: %q shows the query or transport detail", host, msg)
		}
	}
	// Forms only inet_aton reads as 127.0.0.1: Go's resolver does not
	// parse them as addresses, so they never reach the listener either;
	// the check when a URL is saved refuses them by name.
	for _, host := range []string{"2130706433", "0x7f.1", "0177.0.0.1", "127.1"} {
		if resp, err := post(t, c, "http://"+host+":"+port+"/"); err == nil {
			resp.Body.Close()
			t.Errorf("%s: called", host)
		}
		if err := c.Guard().CheckHost(host); err == nil {
			t.Errorf("CheckHost(%s) accepted", host)
		}
	}
	if n := hits.Load(); n != 0 {
		t.Errorf("%d calls reached the loopback listener", n)
	}
}

// Issue 31 item 2: the operator's allow-list admits its networks (and
// their IPv4-mapped forms) and nothing else.
func TestAllowListAdmits(t *testing.T) {
	t.Parallel()
	var hits atomic.Int64
	srv := counting(&hits)
	defer srv.Close()
	resp, err := post(t, New(Config{Allow: loopback}), srv.URL+"/hook")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 || hits.Load() != 1 {
		t.Fatalf("status %d, %d hits", resp.StatusCode, hits.Load())
	}
	g := NewGuard([]netip.Prefix{netip.MustParsePrefix("10.0.0.0/8")})
	for ip, ok := range map[string]bool{"10.1.2.3": true, "::ffff:10.1.2.3": true, "11.0.0.1": true, "127.0.0.1": false,
		"169.254.169.254": false, "192.168.0.1": false} {
		if g.Permits(netip.MustParseAddr(ip)) != ok {
			t.Errorf("Permits(%s) = %v", ip, !ok)
		}
	}
	if _, err := ParseAllow([]string{"10.0.0.0/8", "fd00::/8", "10.0.0.5/32"}); err != nil {
		t.Error(err)
	}
	for _, bad := range []string{"10.1.2.3/8", "10.0.0.0", "nonsense", "fe80::%eth0/64"} {
		if _, err := ParseAllow([]string{bad}); err == nil {
			t.Errorf("ParseAllow(%q) accepted", bad)
		}
	}
}

// Issue 31 item 2: a redirect is refused, never followed — the body is
// not re-posted to an address nobody checked.
func TestRedirectRefused(t *testing.T) {
	t.Parallel()
	var hits atomic.Int64
	target := counting(&hits)
	defer target.Close()
	for _, code := range []int{301, 302, 307, 308} {
		redirector := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			http.Redirect(w, r, target.URL+"/x", code)
		}))
		resp, err := post(t, New(Config{Allow: loopback}), redirector.URL)
		redirector.Close()
		var oe *Error
		if resp != nil {
			resp.Body.Close()
		}
		if !errors.As(err, &oe) || oe.Code != CodeRefused || !strings.Contains(err.Error(), "redirect") {
			t.Errorf("%d: %v", code, err)
		}
	}
	if n := hits.Load(); n != 0 {
		t.Errorf("the redirect was followed %d times", n)
	}
}

// Issue 31 item 2: a closed port, an open port that does not speak HTTP
// and one that never answers give the same error text (the URL aside):
// the error is no port or service oracle. The detail is logged.
func TestFailureRevealsNothing(t *testing.T) {
	t.Parallel()
	closed, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closedAddr := closed.Addr().String()
	closed.Close()
	banner := listen(t, func(c net.Conn) { _, _ = c.Write([]byte("SSH-2.0-OpenSSH_9.6\r\n")); c.Close() })
	silent := listen(t, func(c net.Conn) { <-time.After(3 * time.Second); c.Close() })
	var logged bytes.Buffer
	lw := &lockedWriter{w: &logged}
	c := New(Config{Allow: loopback, Logger: slog.New(slog.NewTextHandler(lw, nil))})
	msgs := map[string]string{}
	for name, addr := range map[string]string{"closed": closedAddr, "banner": banner, "silent": silent} {
		ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
		u := "http://" + addr + "/hook"
		req, _ := http.NewRequestWithContext(ctx, http.MethodPost, u, strings.NewReader("{}"))
		_, err := c.Do(req)
		cancel()
		var oe *Error
		if !errors.As(err, &oe) || oe.Code != CodeFailed {
			t.Fatalf("%s: %v", name, err)
		}
		msgs[name] = strings.ReplaceAll(err.Error(), u, "URL")
	}
	if msgs["closed"] != msgs["banner"] || msgs["closed"] != msgs["silent"] {
		t.Errorf("the errors differ: %q", msgs)
	}
	lw.mu.Lock()
	defer lw.mu.Unlock()
	if !strings.Contains(logged.String(), "refused") || !strings.Contains(logged.String(), closedAddr) {
		t.Errorf("the log lacks the detail: %s", logged.String())
	}
}

// listen serves each connection with serve until the test ends.
func listen(t *testing.T, serve func(net.Conn)) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go serve(c)
		}
	}()
	return ln.Addr().String()
}

// lockedWriter serialises the log's writes from concurrent calls.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// Calls made at once to one host reuse the pool's connections: rounds of
// as many concurrent calls as the pool holds open no new connection after
// the first round (Go's own pool keeps 2 per host, and every call past
// them dialed and closed one of its own).
func TestConcurrentCallsReuseConnections(t *testing.T) {
	const perRound, rounds = 24, 10
	var conns atomic.Int64
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		time.Sleep(5 * time.Millisecond) // the calls overlap
		w.WriteHeader(http.StatusNoContent)
	}))
	srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			conns.Add(1)
		}
	}
	srv.Start()
	t.Cleanup(srv.Close)
	c := New(Config{Allow: loopback, MaxIdleConnsPerHost: perRound})
	for range rounds {
		var wg sync.WaitGroup
		for range perRound {
			wg.Go(func() {
				resp, err := post(t, c, srv.URL)
				if err != nil {
					t.Error(err)
					return
				}
				_, _ = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
			})
		}
		wg.Wait()
	}
	if n := conns.Load(); n > perRound {
		t.Errorf("%d rounds of %d calls at once opened %d connections, want at most %d", rounds, perRound, n, perRound)
	}
}
