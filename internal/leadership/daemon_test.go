package leadership

import (
	"context"
	"log/slog"
	"sync"
	"testing"
	"time"
)

// termDaemon records the terms it ran for.
type termDaemon struct {
	mu      sync.Mutex
	started chan struct{}
	runs    int
	ended   int
	quit    bool // Run returns at once (a daemon that failed)
}

func (d *termDaemon) Name() string { return "daemon" }

func (d *termDaemon) Run(ctx context.Context) {
	d.mu.Lock()
	d.runs++
	quit := d.quit
	d.mu.Unlock()
	d.started <- struct{}{}
	if !quit {
		<-ctx.Done()
	}
	d.mu.Lock()
	d.ended++
	d.mu.Unlock()
}

func (d *termDaemon) counts() (runs, ended int) {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.runs, d.ended
}

// A daemon runs for the leader's whole term on an elector started with
// Start, ends when the term does, and never runs on an elector ticked by
// hand (tests that drive the services with an injected clock).
func TestDaemonRunsForTheTerm(t *testing.T) {
	t.Parallel()
	c := &clock{now: time.Unix(1_700_000_000, 0)}
	l := newFakeLocker()
	d := &termDaemon{started: make(chan struct{}, 10)}
	e, err := New(Config{Locker: l, Owner: "a", Now: c.Now, TTL: 3 * time.Second, RenewInterval: time.Second,
		Daemons: []Daemon{d}, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	if err := tick(t, e); err != nil {
		t.Fatal(err)
	}
	if runs, _ := d.counts(); runs != 0 {
		t.Fatalf("a hand-ticked elector ran the daemon %d times", runs)
	}
	if err := e.Stop(t.Context()); err != nil {
		t.Fatal(err)
	}

	e, err = New(Config{Locker: l, Owner: "a", Now: c.Now, TTL: 3 * time.Second, RenewInterval: time.Second,
		Daemons: []Daemon{d}, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	e.Start()
	<-d.started
	// Renewals do not start it twice.
	if err := e.Tick(t.Context()); err != nil {
		t.Fatal(err)
	}
	if runs, ended := d.counts(); runs != 1 || ended != 0 {
		t.Fatalf("runs %d ended %d, want one run still going", runs, ended)
	}
	if err := e.Stop(t.Context()); err != nil {
		t.Fatal(err)
	}
	if runs, ended := d.counts(); runs != 1 || ended != 1 {
		t.Fatalf("after Stop: runs %d ended %d, want the run ended", runs, ended)
	}
}

// A daemon whose Run returned early is started again by the next renewal.
func TestDaemonThatReturnedIsRestarted(t *testing.T) {
	t.Parallel()
	c := &clock{now: time.Unix(1_700_000_000, 0)}
	d := &termDaemon{started: make(chan struct{}, 10), quit: true}
	e, err := New(Config{Locker: newFakeLocker(), Owner: "a", Now: c.Now, TTL: 3 * time.Second,
		RenewInterval: time.Second, Daemons: []Daemon{d}, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	e.Start()
	defer e.Stop(context.Background())
	<-d.started
	<-d.started // the elector's own renewal loop (every second) restarts it
}
