package e2e

import (
	"errors"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	fcmemu "github.com/heraldhq/herald/emulator/fcm"
	"github.com/heraldhq/herald/heraldtype"
	"github.com/heraldhq/herald/internal/apitest"
)

// partitionProxy is a TCP proxy between one herald instance and
// PostgreSQL that can be cut like a network partition: while cut, the
// bytes of open connections are read and dropped in both directions —
// nothing is closed, nothing answers — and new connections wait in the
// listen queue, as a connect does while its SYNs are lost. A close either
// side made during the cut reaches the other at the heal, as a
// retransmitted FIN would.
type partitionProxy struct {
	ln       net.Listener
	upstream string

	mu     sync.Mutex
	cut    bool
	healed chan struct{} // closed at the heal of the current cut
	conns  map[net.Conn]bool
}

func newPartitionProxy(t *testing.T, upstream string) *partitionProxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &partitionProxy{ln: ln, upstream: upstream, healed: make(chan struct{}), conns: map[net.Conn]bool{}}
	close(p.healed)
	go p.accept()
	t.Cleanup(p.close)
	return p
}

func (p *partitionProxy) addr() string { return p.ln.Addr().String() }

// state reports whether the link is cut, and the channel closed at its
// heal.
func (p *partitionProxy) state() (bool, chan struct{}) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.cut, p.healed
}

func (p *partitionProxy) setCut(cut bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if cut == p.cut {
		return
	}
	p.cut = cut
	if cut {
		p.healed = make(chan struct{})
	} else {
		close(p.healed)
	}
}

func (p *partitionProxy) track(c net.Conn) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.conns[c] = true
}

func (p *partitionProxy) close() {
	p.ln.Close()
	p.setCut(false)
	p.mu.Lock()
	defer p.mu.Unlock()
	for c := range p.conns {
		c.Close()
	}
}

func (p *partitionProxy) accept() {
	for {
		client, err := p.ln.Accept()
		if err != nil {
			return
		}
		p.track(client)
		go func() {
			// A connection opened during the cut gets nowhere until the
			// heal; its bytes wait unread, so it then proceeds late.
			_, healed := p.state()
			<-healed
			server, err := net.Dial("tcp", p.upstream)
			if err != nil {
				client.Close()
				return
			}
			p.track(server)
			go p.pipe(client, server)
			go p.pipe(server, client)
		}()
	}
}

// pipe copies from src to dst, dropping what it reads while the link is
// cut. When src ends, dst is closed — at the heal, if the link is cut.
func (p *partitionProxy) pipe(src, dst net.Conn) {
	buf := make([]byte, 32<<10)
	for {
		n, err := src.Read(buf)
		if n > 0 {
			if cut, _ := p.state(); !cut {
				if _, werr := dst.Write(buf[:n]); werr != nil {
					src.Close()
					return
				}
			}
		}
		if err != nil {
			_, healed := p.state()
			<-healed
			dst.Close()
			return
		}
	}
}

// TestPartitionedInstance: two instances share the queue, one of them
// reaching PostgreSQL through a proxy that is cut — bytes dropped, nothing
// closed — for longer than a lease while sends are in flight against an
// FCM emulator with latency, then healed (issue 24 item 4). Nothing is
// lost or left pending or leased, no at_most_once delivery reaches the
// provider twice, a late report never contradicts the emulator, the cut
// instance's /readyz goes 503 and back, and an API request to it during
// the cut is answered 503 within its store timeout.
func TestPartitionedInstance(t *testing.T) {
	c := newCluster(t)
	const (
		users        = 200
		perTrigger   = 100
		triggers     = 30 // × 100 = 3,000 deliveries, half of each guarantee
		lease        = 4 * time.Second
		storeTimeout = time.Second
		cutFor       = 3 * lease / 2
	)
	ids := c.users(users)
	// Sends take a while, so many are in flight when the cut lands.
	if err := c.em.SetFaults(fcmemu.Faults{LatencyMillis: 300}); err != nil {
		t.Fatal(err)
	}
	for i := range triggers {
		typ := "reminder"
		if i%2 == 1 {
			typ = "nudge"
		}
		part := i % (users / perTrigger) * perTrigger
		c.trigger(typ, i, ids[part:part+perTrigger])
	}
	env := append(c.env[:len(c.env):len(c.env)],
		"HERALD_WORKER__LEASE_DURATION="+lease.String(),
		"HERALD_WORKER__SEND_TIMEOUT=1s",
		"HERALD_HTTP__STORE_TIMEOUT="+storeTimeout.String(),
	)
	dsn, err := url.Parse(envValue(t, c.env, "HERALD_DATABASE_URL"))
	if err != nil {
		t.Fatal(err)
	}
	proxy := newPartitionProxy(t, dsn.Host)
	dsn.Host = proxy.addr()
	cutOff := startInstance(t, append(env[:len(env):len(env)], "HERALD_DATABASE_URL="+dsn.String()))
	other := startInstance(t, env)

	total := triggers * perTrigger
	deadline := time.Now().Add(time.Minute)
	for c.stats()[heraldtype.StateSent] < total/5 {
		if time.Now().After(deadline) {
			t.Fatalf("a fifth was not sent within a minute: %v", c.stats())
		}
		time.Sleep(5 * time.Millisecond)
	}
	proxy.setCut(true)
	cutAt := time.Now()
	t.Logf("cut at %v", c.stats())

	// The cut-off instance says it is not ready, and answers a request
	// that needs the store with 503 within its store timeout.
	waitStatus(t, cutOff, "/readyz", http.StatusServiceUnavailable, lease)
	start := time.Now()
	status, took := get(t, cutOff, "/v1/users/"+ids[0], envValue(t, c.env, "HERALD_BOOTSTRAP_API_KEY"))
	if status != http.StatusServiceUnavailable || took > storeTimeout+2*time.Second {
		t.Fatalf("a request during the cut: %d after %s, want 503 within about %s", status, took, storeTimeout)
	}
	t.Logf("during the cut: /readyz 503, a request 503 after %s", time.Since(start).Round(time.Millisecond))

	time.Sleep(time.Until(cutAt.Add(cutFor)))
	proxy.setCut(false)
	t.Logf("healed after %s at %v", time.Since(cutAt).Round(time.Millisecond), c.stats())
	waitStatus(t, cutOff, "/readyz", http.StatusOK, 15*time.Second)

	c.waitSettled(time.Minute, cutOff, other)
	// The cut-off instance still holds the outcomes of the sends it made
	// during the cut, flushing them with backoff: once they reach the
	// store, its reaped leases get their late reports (issue 24 item 3).
	var all []heraldtype.Delivery
	for deadline := time.Now().Add(30 * time.Second); ; {
		all = c.deliveries()
		if lateReports(all) > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no late report within 30 s of settling; cut-off instance:\n%s", cutOff.tail())
		}
		time.Sleep(500 * time.Millisecond)
	}
	sends := c.sends()
	var reaped, unknown, dups int
	reports := map[string]int{}
	for _, d := range all {
		key := d.IdempotencyKey()
		n := sends[key]
		expired, ambiguous := false, false
		for _, a := range d.Attempts {
			switch {
			case a.ErrorCode == "lease_expired":
				expired = true
			case a.ErrorCode == "timeout" || a.ErrorCode == "network":
				ambiguous = true
			case a.Outcome == heraldtype.OutcomeLateReport:
				reports[a.ErrorCode]++
				// What the worker reports agrees with the provider.
				if a.ErrorCode == heraldtype.ReportNotSent && n > 0 && d.Guarantee == heraldtype.AtMostOnce ||
					a.ErrorCode == heraldtype.ReportSent && n == 0 {
					t.Errorf("delivery %s reported %q late but reached the provider %d times: %+v", key, a.ErrorCode, n, d.Attempts)
				}
			}
		}
		if expired {
			reaped++
		}
		switch d.Guarantee {
		case heraldtype.AtLeastOnce:
			if d.State != heraldtype.StateSent || n == 0 {
				t.Fatalf("at_least_once delivery %s lost: %s, sent %d times; attempts %+v", key, d.State, n, d.Attempts)
			}
			if n > 1 {
				dups++
				if !expired && !ambiguous {
					t.Fatalf("delivery %s sent %d times outside the documented windows: %+v", key, n, d.Attempts)
				}
			}
		case heraldtype.AtMostOnce:
			switch {
			case n > 1:
				t.Fatalf("at_most_once delivery %s sent %d times: %+v", key, n, d.Attempts)
			case d.State == heraldtype.StateUnknown:
				unknown++
			case d.State != heraldtype.StateSent || n != 1:
				t.Fatalf("at_most_once delivery %s ended %s, sent %d times: %+v", key, d.State, n, d.Attempts)
			}
		}
	}
	t.Logf("reaped leases %d, at_most_once unknown %d, at_least_once duplicates %d, late reports %v",
		reaped, unknown, dups, reports)
	if reaped == 0 {
		t.Fatal("no lease expired: the cut did not land while the instance held leases")
	}
	// The instance that was cut off still stops well within its shutdown
	// timeout (30 s): nothing it did during the cut holds a connection (a
	// stop once hung for a minute on pgxpool's abandoned health ping).
	cutOff.stop(t, 25*time.Second)
}

// stop sends SIGTERM and fails unless the process exits within the
// time given; a process that does not is made to dump its goroutines
// (SIGQUIT), which the failure shows.
func (in *instance) stop(t *testing.T, within time.Duration) {
	t.Helper()
	start := time.Now()
	if err := in.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case <-in.done:
		return
	case <-time.After(within):
	}
	_ = in.cmd.Process.Signal(syscall.SIGQUIT)
	<-in.done
	in.mu.Lock()
	defer in.mu.Unlock()
	t.Fatalf("herald did not stop within %s of SIGTERM (took %s); its goroutines:\n%s", within,
		time.Since(start).Round(time.Millisecond), strings.Join(in.logs[max(0, len(in.logs)-400):], "\n"))
}

// lateReports counts the late_report attempt rows of ds.
func lateReports(ds []heraldtype.Delivery) int {
	n := 0
	for _, d := range ds {
		for _, a := range d.Attempts {
			if a.Outcome == heraldtype.OutcomeLateReport {
				n++
			}
		}
	}
	return n
}

// envValue is the value of name in env (the last one wins).
func envValue(t *testing.T, env []string, name string) string {
	t.Helper()
	v, found := "", false
	for _, kv := range env {
		if k, val, ok := strings.Cut(kv, "="); ok && k == name {
			v, found = val, true
		}
	}
	if !found {
		t.Fatalf("no %s in the cluster's environment", name)
	}
	return v
}

// get sends GET path to the instance (with the API key when given) and
// returns the status and how long the answer took; a request without an
// answer within 30 s is a 0.
func get(t *testing.T, in *instance, path, key string) (int, time.Duration) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, in.api+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	start := time.Now()
	res, err := (&http.Client{Timeout: 30 * time.Second, Transport: apitest.Transport(t, nil)}).Do(req)
	took := time.Since(start)
	if err != nil {
		var ne net.Error
		if errors.As(err, &ne) && ne.Timeout() {
			return 0, took
		}
		t.Fatal(err)
	}
	defer res.Body.Close()
	_, _ = io.Copy(io.Discard, res.Body)
	return res.StatusCode, took
}

// waitStatus polls path on the instance until it answers want.
func waitStatus(t *testing.T, in *instance, path string, want int, within time.Duration) {
	t.Helper()
	deadline := time.Now().Add(within)
	for {
		got, _ := get(t, in, path, "")
		if got == want {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s answered %d, not %d, within %s:\n%s", path, got, want, within, in.tail())
		}
		time.Sleep(100 * time.Millisecond)
	}
}
