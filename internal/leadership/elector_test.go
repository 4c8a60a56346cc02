package leadership

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"testing"
	"time"
)

type clock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *clock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

type lock struct {
	owner string
	until time.Time
}

// fakeLocker keeps locks with the store.Store contract.
type fakeLocker struct {
	mu       sync.Mutex
	locks    map[string]lock
	failLock error
	// hangLock blocks TryLock until its context ends.
	hangLock bool
}

func newFakeLocker() *fakeLocker { return &fakeLocker{locks: map[string]lock{}} }

func (f *fakeLocker) TryLock(ctx context.Context, name, owner string, now, until time.Time) (bool, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.hangLock {
		<-ctx.Done()
		return false, ctx.Err()
	}
	if f.failLock != nil {
		return false, f.failLock
	}
	l, ok := f.locks[name]
	if ok && l.owner != owner && now.Before(l.until) {
		return false, nil
	}
	f.locks[name] = lock{owner: owner, until: until}
	return true, nil
}

func (f *fakeLocker) Unlock(_ context.Context, name, owner string, until time.Time) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if l, ok := f.locks[name]; ok && l.owner == owner {
		f.locks[name] = lock{owner: owner, until: until}
	}
	return nil
}

// countingService counts its runs. With block set, a run waits until
// released (or its context ends) and reports that it started.
type countingService struct {
	name     string
	interval time.Duration
	err      error
	block    bool
	started  chan struct{}
	release  chan struct{}

	mu                 sync.Mutex
	runs, active, most int
	cancelled          int
	lastNow            time.Time // the now of the last run
}

func (s *countingService) Name() string            { return s.name }
func (s *countingService) Interval() time.Duration { return s.interval }

func (s *countingService) RunOnce(ctx context.Context, now time.Time) (Result, error) {
	s.mu.Lock()
	s.runs++
	s.active++
	s.most = max(s.most, s.active)
	s.lastNow = now
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		s.active--
		s.mu.Unlock()
	}()
	if s.block {
		s.started <- struct{}{}
		select {
		case <-s.release:
		case <-ctx.Done():
			s.mu.Lock()
			s.cancelled++
			s.mu.Unlock()
			return Result{}, ctx.Err()
		}
	}
	return Result{Counts: map[string]int{"done": 1}}, s.err
}

func (s *countingService) count() (runs, most, cancelled int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.runs, s.most, s.cancelled
}

func newBlocking(name string, interval time.Duration) *countingService {
	return &countingService{name: name, interval: interval, block: true,
		started: make(chan struct{}, 4), release: make(chan struct{})}
}

func newElector(t *testing.T, l Locker, c *clock, owner string, services ...Service) *Elector {
	t.Helper()
	e, err := New(Config{Locker: l, Owner: owner, Now: c.Now, TTL: 15 * time.Second,
		Services: services, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(e.Wait)
	return e
}

// tick runs one round and waits for the services it started.
func tick(t *testing.T, e *Elector) error {
	t.Helper()
	err := e.Tick(t.Context())
	e.Wait()
	return err
}

func TestOneLeaderAtATime(t *testing.T) {
	t.Parallel()
	l, c := newFakeLocker(), &clock{now: time.Date(2026, 11, 22, 9, 0, 0, 0, time.UTC)}
	sa, sb := &countingService{name: "s", interval: 5 * time.Second}, &countingService{name: "s", interval: 5 * time.Second}
	a, b := newElector(t, l, c, "a", sa), newElector(t, l, c, "b", sb)
	for range 5 {
		if err := tick(t, a); err != nil {
			t.Fatal(err)
		}
		if err := tick(t, b); err != nil {
			t.Fatal(err)
		}
		if !a.IsLeader() || b.IsLeader() {
			t.Fatalf("a leader %v, b leader %v: want a only", a.IsLeader(), b.IsLeader())
		}
		c.Advance(5 * time.Second)
	}
	if runs, _, _ := sa.count(); runs != 5 {
		t.Fatalf("leader ran its service %d times in 5 ticks 5 s apart, want 5", runs)
	}
	if want := c.Now().Add(-5 * time.Second); !sa.lastNow.Equal(want) {
		t.Fatalf("last run at %v, want the clock of its tick, %v", sa.lastNow, want)
	}
	if runs, _, _ := sb.count(); runs != 0 {
		t.Fatalf("follower ran its service %d times", runs)
	}
	// a stops renewing (crashed): b takes over once a's lock expires, and
	// not before.
	c.Advance(9 * time.Second)
	if tick(t, b); b.IsLeader() {
		t.Fatal("b took over before a's lock expired")
	}
	if a.IsLeader() {
		t.Fatal("a still believes it leads although it missed its renewals")
	}
	c.Advance(2 * time.Second)
	if tick(t, b); !b.IsLeader() {
		t.Fatal("b did not take over after a's lock expired")
	}
	if runs, _, _ := sb.count(); runs != 1 {
		t.Fatalf("new leader ran its service %d times at election, want 1", runs)
	}
	if tick(t, a); a.IsLeader() {
		t.Fatal("a came back as a second leader")
	}
}

// A renewal that hangs (a database that stopped answering) fails after
// the leader TTL instead of holding the loop: the instance steps down.
func TestHungRenewalTimesOut(t *testing.T) {
	t.Parallel()
	l := newFakeLocker()
	e, err := New(Config{Locker: l, Owner: "a", TTL: 100 * time.Millisecond, RenewInterval: 30 * time.Millisecond,
		Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	if err := tick(t, e); err != nil || !e.IsLeader() {
		t.Fatalf("not elected: %v", err)
	}
	l.mu.Lock()
	l.hangLock = true
	l.mu.Unlock()
	if err := tick(t, e); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Tick with a hung renewal = %v, want a deadline error", err)
	}
	if e.IsLeader() {
		t.Fatal("still leader after a renewal that failed")
	}
}

// A leader that cannot renew steps down: the services running end (their
// context is cancelled) and none starts again.
func TestLeaderThatCannotRenewStepsDown(t *testing.T) {
	t.Parallel()
	l, c := newFakeLocker(), &clock{now: time.Now()}
	s := newBlocking("s", 5*time.Second)
	e := newElector(t, l, c, "a", s)
	if err := e.Tick(t.Context()); err != nil || !e.IsLeader() {
		t.Fatalf("not elected: %v", err)
	}
	<-s.started
	l.mu.Lock()
	l.failLock = errors.New("connection refused")
	l.mu.Unlock()
	if err := e.Tick(t.Context()); err == nil || e.IsLeader() {
		t.Fatalf("after a failed renewal: err %v leader %v, want an error and no leadership", err, e.IsLeader())
	}
	e.Wait() // returns only once the run saw its context end
	if _, _, cancelled := s.count(); cancelled != 1 {
		t.Fatal("the service run of a stepped-down leader went on")
	}
	c.Advance(time.Minute)
	tick(t, e)
	if runs, _, _ := s.count(); runs != 1 {
		t.Fatalf("a stepped-down leader ran its service again (%d runs)", runs)
	}
}

func TestStopReleasesLeadership(t *testing.T) {
	t.Parallel()
	l, c := newFakeLocker(), &clock{now: time.Now()}
	s := newBlocking("s", time.Hour)
	a, b := newElector(t, l, c, "a", s), newElector(t, l, c, "b")
	a.Start()
	<-s.started // elected, and its service runs
	if err := a.Stop(t.Context()); err != nil {
		t.Fatal(err)
	}
	if _, _, cancelled := s.count(); cancelled != 1 {
		t.Fatal("Stop did not end the running service")
	}
	if a.IsLeader() {
		t.Fatal("a still leader after Stop")
	}
	if tick(t, b); !b.IsLeader() {
		t.Fatal("b could not take over at once after a stopped")
	}
}

// A service runs in the background: a run that takes long neither delays
// the renewal of leadership nor overlaps the next run of the same service,
// and other services keep their own schedule meanwhile.
func TestServicesRunInBackgroundNeverTwiceAtOnce(t *testing.T) {
	t.Parallel()
	l, c := newFakeLocker(), &clock{now: time.Date(2026, 11, 24, 9, 0, 0, 0, time.UTC)}
	slow := newBlocking("slow", 10*time.Second)
	fast := &countingService{name: "fast", interval: 5 * time.Second}
	e := newElector(t, l, c, "a", slow, fast)
	ctx := t.Context()
	if err := e.Tick(ctx); err != nil || !e.IsLeader() {
		t.Fatalf("not elected: %v", err)
	}
	<-slow.started // the slow run goes on while Tick has returned
	for range 3 {
		waitIdle(t, e, "fast")
		c.Advance(10 * time.Second)
		if err := e.Tick(ctx); err != nil || !e.IsLeader() {
			t.Fatalf("renewal during a long run: err %v, leader %v", err, e.IsLeader())
		}
	}
	if runs, _, _ := slow.count(); runs != 1 {
		t.Fatalf("runs started while one ran = %d, want 1", runs)
	}
	slow.release <- struct{}{}
	// Once it finished, the next due tick starts the next one.
	e.Wait()
	c.Advance(10 * time.Second)
	if err := e.Tick(ctx); err != nil {
		t.Fatal(err)
	}
	<-slow.started
	close(slow.release)
	e.Wait()
	if runs, most, _ := slow.count(); runs != 2 || most != 1 {
		t.Fatalf("slow: %d runs, %d at once; want 2 and 1", runs, most)
	}
	if runs, _, _ := fast.count(); runs != 5 {
		t.Fatalf("fast: %d runs in 5 due ticks, want 5", runs)
	}
}

// waitIdle polls, with a deadline, until the named service is not running.
func waitIdle(t *testing.T, e *Elector, name string) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		e.mu.Lock()
		running := false
		for _, s := range e.services {
			running = running || (s.Name() == name && s.running)
		}
		e.mu.Unlock()
		if !running {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("service %s still running", name)
		}
		time.Sleep(time.Millisecond)
	}
}

// A failed run is logged and tried again at the next interval; it neither
// fails the tick (leadership goes on) nor stops later runs.
func TestFailedServiceIsRetriedNextInterval(t *testing.T) {
	t.Parallel()
	l, c := newFakeLocker(), &clock{now: time.Date(2026, 11, 24, 9, 0, 0, 0, time.UTC)}
	s := &countingService{name: "s", interval: 10 * time.Second, err: errors.New("permission denied for table deliveries")}
	e := newElector(t, l, c, "a", s)
	for range 3 {
		if err := tick(t, e); err != nil || !e.IsLeader() {
			t.Fatalf("tick with a failing service: err %v, leader %v", err, e.IsLeader())
		}
		c.Advance(5 * time.Second)
		if err := tick(t, e); err != nil {
			t.Fatal(err)
		}
		c.Advance(5 * time.Second)
	}
	if runs, _, _ := s.count(); runs != 3 {
		t.Fatalf("runs %d after 6 ticks 5 s apart with a 10 s interval; want 3", runs)
	}
}

// A service with a zero interval is disabled: registered, never run.
func TestZeroIntervalDisables(t *testing.T) {
	t.Parallel()
	l, c := newFakeLocker(), &clock{now: time.Now()}
	s := &countingService{name: "off"}
	e := newElector(t, l, c, "a", s)
	for range 3 {
		tick(t, e)
		c.Advance(time.Hour)
	}
	if runs, _, _ := s.count(); runs != 0 {
		t.Fatalf("disabled service ran %d times", runs)
	}
}

func TestNewRejectsBadConfig(t *testing.T) {
	t.Parallel()
	l := newFakeLocker()
	for name, cfg := range map[string]Config{
		"no owner":          {Locker: l},
		"no locker":         {Owner: "a"},
		"renew after TTL":   {Locker: l, Owner: "a", TTL: time.Second, RenewInterval: time.Second},
		"same name twice":   {Locker: l, Owner: "a", Services: []Service{&countingService{name: "s"}, &countingService{name: "s"}}},
		"negative interval": {Locker: l, Owner: "a", Services: []Service{&countingService{name: "s", interval: -1}}},
	} {
		if _, err := New(cfg); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}
