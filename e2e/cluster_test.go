// Package e2e holds Herald's end-to-end tests: the real herald binary, run
// as several processes against one PostgreSQL database and the FCM
// emulator, counted at the emulator.
package e2e

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/heraldhq/herald"
	fcmemu "github.com/heraldhq/herald/emulator/fcm"
	"github.com/heraldhq/herald/heraldtype"
	"github.com/heraldhq/herald/internal/dispatch"
	"github.com/heraldhq/herald/provider/fcm"
	"github.com/heraldhq/herald/store/postgres"
	"github.com/heraldhq/herald/store/postgres/pgtest"
)

var (
	buildOnce sync.Once
	binPath   string
	buildErr  error
)

// heraldBinary builds cmd/herald once per test run.
func heraldBinary(t *testing.T) string {
	t.Helper()
	buildOnce.Do(func() {
		dir, err := os.MkdirTemp("", "herald-e2e")
		if err != nil {
			buildErr = err
			return
		}
		binPath = filepath.Join(dir, "herald")
		out, err := exec.Command("go", "build", "-o", binPath, "../cmd/herald").CombinedOutput()
		if err != nil {
			buildErr = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return binPath
}

func TestMain(m *testing.M) {
	code := m.Run()
	if binPath != "" {
		os.RemoveAll(filepath.Dir(binPath))
	}
	os.Exit(code)
}

// instance is one `herald serve` process.
type instance struct {
	cmd  *exec.Cmd
	api  string
	done chan struct{}
	mu   sync.Mutex
	logs []string
}

func (in *instance) tail() string {
	in.mu.Lock()
	defer in.mu.Unlock()
	return strings.Join(in.logs[max(0, len(in.logs)-20):], "\n")
}

func startInstance(t *testing.T, env []string) *instance {
	t.Helper()
	cmd := exec.Command(heraldBinary(t), "serve", "--listen", "127.0.0.1:0")
	cmd.Env = append(os.Environ(), env...)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	in := &instance{cmd: cmd, done: make(chan struct{})}
	addr := make(chan string, 1)
	go func() {
		defer close(in.done)
		sc := bufio.NewScanner(stderr)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			line := sc.Text()
			in.mu.Lock()
			in.logs = append(in.logs, line)
			in.mu.Unlock()
			var l struct{ Msg, Addr string }
			if json.Unmarshal([]byte(line), &l) == nil && l.Msg == "herald listening" {
				addr <- l.Addr
			}
		}
		cmd.Wait()
	}()
	t.Cleanup(func() {
		cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-in.done:
		case <-time.After(20 * time.Second):
			cmd.Process.Kill()
			<-in.done
		}
	})
	select {
	case in.api = <-addr:
	case <-in.done:
		t.Fatalf("herald exited before listening:\n%s", in.tail())
	case <-time.After(30 * time.Second):
		t.Fatalf("herald did not listen within 30 s:\n%s", in.tail())
	}
	return in
}

func (in *instance) kill(t *testing.T) {
	t.Helper()
	if err := in.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	<-in.done
}

// cluster is one PostgreSQL schema, one FCM emulator, several instances and
// an API-only client in the test process that registers users and enqueues.
type cluster struct {
	t      *testing.T
	ctx    context.Context
	store  *postgres.Store
	client *herald.Client
	em     *fcmemu.Emulator
	env    []string
}

func newCluster(t *testing.T) *cluster {
	t.Helper()
	dsn, schema := pgtest.NewSchema(t)
	ctx := t.Context()
	em := fcmemu.New(fcmemu.Config{Seed: 7, MaxRecorded: 200_000})
	if _, err := em.Start("127.0.0.1:0"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { em.Close() })
	creds := em.ServiceAccountJSON("e2e")
	st, err := postgres.Open(ctx, dsn, postgres.Options{Schema: schema})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	if err := st.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	push, err := fcm.New(fcm.Config{CredentialsJSON: creds, Endpoint: em.URL()})
	if err != nil {
		t.Fatal(err)
	}
	client, err := herald.NewClient(herald.Config{
		Store: st, Providers: map[string]herald.Provider{"fcm": push}, DisableWorkers: true,
		Types:  map[string]herald.TypeConfig{"nudge": {Guarantee: heraldtype.AtMostOnce}},
		Logger: slog.New(slog.DiscardHandler),
	})
	if err != nil {
		t.Fatal(err)
	}
	env := []string{
		"HERALD_DATABASE_URL=" + dsn,
		"HERALD_DATABASE_SCHEMA=" + schema,
		"HERALD_FCM__CREDENTIALS_JSON=" + string(creds),
		"HERALD_FCM__ENDPOINT=" + em.URL(),
		"HERALD_TYPES__NUDGE__GUARANTEE=at_most_once",
		// Short leases and leadership so a killed instance's work comes
		// back within seconds; the send timeout stays well above the
		// emulator's latency even on a loaded machine, because a timed-out
		// send that the provider did receive is at_least_once's other
		// (documented) duplicate window.
		"HERALD_WORKER__LEASE_DURATION=8s",
		"HERALD_WORKER__SEND_TIMEOUT=4s",
		"HERALD_WORKER__REAP_INTERVAL=500ms",
		"HERALD_LEADER_TTL=3s",
		"HERALD_LOG__LEVEL=info",
		// Three instances and the test's own pool share the machine's
		// PostgreSQL (max_connections 100) with the other test packages
		// running at the same time: a small pool per instance.
		"HERALD_DATABASE_MAX_CONNS=8",
		// A non-dev serve refuses to start without an API key; the
		// instances are driven through the in-process client, not the API.
		"HERALD_BOOTSTRAP_API_KEY=e2e-bootstrap-key-0123456789abcdef0123",
	}
	return &cluster{t: t, ctx: ctx, store: st, client: client, em: em, env: env}
}

// users registers n users with one android device each.
func (c *cluster) users(n int) []string {
	ids := make([]string, n)
	for i := range ids {
		ids[i] = fmt.Sprintf("user-%04d", i)
		if _, err := c.client.PutUser(c.ctx, ids[i], herald.UserInput{}); err != nil {
			c.t.Fatal(err)
		}
		if _, err := c.client.RegisterDevice(c.ctx, ids[i], herald.DeviceInput{DeviceID: "dev-" + ids[i], Token: "tok-" + ids[i], Platform: "android"}); err != nil {
			c.t.Fatal(err)
		}
	}
	return ids
}

func (c *cluster) trigger(typ string, i int, users []string) {
	c.t.Helper()
	_, err := c.client.Enqueue(c.ctx, herald.Request{
		IdempotencyKey: fmt.Sprintf("%s-%d", typ, i), UserIDs: users, Type: typ,
		Title: "Hello", Body: fmt.Sprintf("%s %d", typ, i),
	})
	if err != nil {
		c.t.Fatal(err)
	}
}

func (c *cluster) stats() map[heraldtype.DeliveryState]int {
	c.t.Helper()
	s, err := c.store.CountDeliveries(c.ctx)
	if err != nil {
		c.t.Fatal(err)
	}
	return s
}

// waitSettled waits until no delivery is pending or leased.
func (c *cluster) waitSettled(timeout time.Duration, instances ...*instance) map[heraldtype.DeliveryState]int {
	c.t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		s := c.stats()
		if s[heraldtype.StatePending] == 0 && s[heraldtype.StateLeased] == 0 {
			return s
		}
		if time.Now().After(deadline) {
			for i, in := range instances {
				c.t.Logf("instance %d log tail:\n%s", i, in.tail())
			}
			c.t.Fatalf("not settled after %v: %v", timeout, s)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// deliveries lists every delivery with its attempts.
func (c *cluster) deliveries() []heraldtype.Delivery {
	c.t.Helper()
	var all []heraldtype.Delivery
	f := heraldtype.DeliveryFilter{Limit: 1000}
	for {
		page, next, err := c.store.ListDeliveries(c.ctx, f)
		if err != nil {
			c.t.Fatal(err)
		}
		all = append(all, page...)
		if next == "" {
			return all
		}
		f.Cursor = next
	}
}

// sends counts, per delivery idempotency key (data.messageId), how many
// times the emulator accepted it.
func (c *cluster) sends() map[string]int {
	c.t.Helper()
	counts := map[string]int{}
	for _, m := range c.em.Messages() {
		var msg struct {
			Data map[string]string `json:"data"`
		}
		if err := json.Unmarshal(m.Message, &msg); err != nil {
			c.t.Fatal(err)
		}
		counts[msg.Data["messageId"]]++
	}
	return counts
}

const (
	clusterUsers    = 1000
	clusterTriggers = 20 // × clusterUsers = 20,000 notifications
)

// TestThreeInstancesDeliverExactlyOnce: three herald processes on one
// PostgreSQL database deliver 20,000 notifications; the emulator receives
// every one exactly once (S4.2, S2.4).
func TestThreeInstancesDeliverExactlyOnce(t *testing.T) {
	c := newCluster(t)
	users := c.users(clusterUsers)
	var ins []*instance
	for range 3 {
		ins = append(ins, startInstance(t, c.env))
	}
	for i := range clusterTriggers {
		c.trigger("reminder", i, users)
	}
	s := c.waitSettled(3*time.Minute, ins...)
	total := clusterUsers * clusterTriggers
	if s[heraldtype.StateSent] != total {
		t.Fatalf("states %v, want %d sent", s, total)
	}
	sends := c.sends()
	if len(sends) != total {
		t.Fatalf("emulator received %d distinct deliveries, want %d", len(sends), total)
	}
	// Three instances claiming one queue must never send a delivery twice
	// on their own. The only duplicates Herald allows an at_least_once
	// delivery are its documented windows (S1.3): a send that timed out
	// although the provider had it, and a lease that expired mid-send. A
	// full test run on two loaded cores has opened the first once; such a
	// duplicate carries a timeout or lease_expired attempt and is logged,
	// any other fails the test.
	byKey := map[string]heraldtype.Delivery{}
	for _, d := range c.deliveries() {
		byKey[d.IdempotencyKey()] = d
	}
	explained := 0
	for key, n := range sends {
		if n == 1 {
			continue
		}
		d, ok := byKey[key]
		if !ok || d.Guarantee != heraldtype.AtLeastOnce || duplicateWindows(d) < n-1 {
			t.Fatalf("delivery %s sent %d times; attempts %+v", key, n, d.Attempts)
		}
		explained++
		t.Logf("delivery %s sent %d times after a timed-out send or an expired lease: %+v", key, n, d.Attempts)
	}
	if explained > 0 {
		t.Logf("%d duplicates, each in a documented at_least_once window", explained)
	}
}

// duplicateWindows counts the attempts of d that went through one of
// at_least_once's documented duplicate windows (docs/delivery.md): a send
// that got no HTTP answer — timed out in the worker (timeout) or in the
// FCM client (network) — which the provider may have had, or an expired
// lease, whose holder may have sent it. Each such attempt explains at most
// one extra send: a delivery sent n times needs n-1 of them (issue 30
// item 7).
func duplicateWindows(d heraldtype.Delivery) int {
	n := 0
	for _, a := range d.Attempts {
		noAnswer := a.ErrorCode == dispatch.CodeTimeout || a.ErrorCode == "network"
		if noAnswer || a.Outcome == heraldtype.OutcomeLeaseExpired || a.Outcome == heraldtype.OutcomeUnknown {
			n++
		}
	}
	return n
}

// TestKilledInstanceLosesNothing: the same, while one of the three
// instances is killed with SIGKILL mid-run. Nothing is lost, and an
// at_most_once delivery is never sent twice (S1.3, S4.2). An
// at_least_once delivery may be sent again only through a documented
// window, one per extra send: a lease that expired (the killed instance
// held it) or a send that timed out without an answer although the
// provider had it.
//
// Issue 30 item 7: the failure "sent 2 times but its lease never expired"
// seen under load was the second window, which the test did not count
// then: on a loaded machine (load average above 20 on two cores) sends to
// the emulator, which answers in 2 ms, time out after the 4 s send timeout
// because the herald process gets no CPU to read the answer; the worker
// records a network (context deadline exceeded) retry, and the retry is a
// second send. It is at_least_once by design, not a duplicate Herald
// should prevent. Clocks play no part in the verdict: the test judges by
// the attempt rows, and the reaper writes the lease_expired row in the
// statement that takes the lease back, so every reclaimed lease is seen.
func TestKilledInstanceLosesNothing(t *testing.T) {
	c := newCluster(t)
	users := c.users(clusterUsers)
	// A little provider latency keeps sends in flight when the kill lands.
	if err := c.em.SetFaults(fcmemu.Faults{LatencyMillis: 2}); err != nil {
		t.Fatal(err)
	}
	// The backlog is queued first, so the kill lands while all three
	// instances are busy with it.
	// Triggers of 100 users alternate between the two guarantees, so the
	// killed instance holds leases of both kinds.
	for i := range clusterTriggers * 10 {
		typ := "reminder"
		if i%2 == 1 {
			typ = "nudge"
		}
		part := i % 10 * 100
		c.trigger(typ, i, users[part:part+100])
	}
	var ins []*instance
	for range 3 {
		ins = append(ins, startInstance(t, c.env))
	}
	total := clusterUsers * clusterTriggers
	deadline := time.Now().Add(2 * time.Minute)
	for c.stats()[heraldtype.StateSent] < total/4 {
		if time.Now().After(deadline) {
			t.Fatalf("a quarter was not sent within 2 minutes: %v", c.stats())
		}
		time.Sleep(5 * time.Millisecond)
	}
	ins[0].kill(t)
	t.Logf("killed instance 0 at %v", c.stats())

	c.waitSettled(3*time.Minute, ins[1:]...)
	sends := c.sends()
	var reclaimed, dups, unknown int
	for _, d := range c.deliveries() {
		key := d.IdempotencyKey()
		for _, a := range d.Attempts {
			if a.Outcome == heraldtype.OutcomeLeaseExpired || a.Outcome == heraldtype.OutcomeUnknown {
				reclaimed++
				break
			}
		}
		n := sends[key]
		switch d.Guarantee {
		case heraldtype.AtLeastOnce:
			if d.State != heraldtype.StateSent || n == 0 {
				t.Fatalf("at_least_once delivery %s lost: state %s, sent %d times", key, d.State, n)
			}
			if n > 1 {
				dups++
				windows := duplicateWindows(d)
				if dups <= 5 {
					t.Logf("delivery %s sent %d times, %d duplicate windows; attempts: %+v", key, n, windows, d.Attempts)
				}
				if windows < n-1 {
					t.Fatalf("delivery %s sent %d times but only %d of its attempts (an expired lease, a send without an answer) explain a second send; attempts: %+v", key, n, windows, d.Attempts)
				}
			}
		case heraldtype.AtMostOnce:
			if n > 1 {
				t.Fatalf("at_most_once delivery %s sent %d times", key, n)
			}
			switch d.State {
			case heraldtype.StateSent:
				if n != 1 {
					t.Fatalf("at_most_once delivery %s is sent but reached the provider %d times", key, n)
				}
			case heraldtype.StateUnknown:
				unknown++
			default:
				t.Fatalf("at_most_once delivery %s ended %s", key, d.State)
			}
		}
	}
	t.Logf("reclaimed leases: %d, at_least_once duplicates: %d, at_most_once unknown: %d", reclaimed, dups, unknown)
	if reclaimed == 0 {
		t.Fatal("the killed instance held no lease: the kill did not land mid-run")
	}
}
