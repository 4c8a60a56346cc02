package maintenance

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"

	"github.com/heraldhq/herald/internal/leadership"
	"github.com/heraldhq/herald/internal/metrics"
	"github.com/heraldhq/herald/store"
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

// fakeStore keeps locks with the store.Store contract and counts the
// maintenance calls.
type fakeStore struct {
	mu       sync.Mutex
	locks    map[string]lock
	failLock error
	// hangLock and hangReap block the call until its context ends.
	hangLock, hangReap bool
	reaps              int
	finished           int // notifications left to prune
	pruneCalls         int
	devCutoff          time.Time
}

func newFakeStore() *fakeStore { return &fakeStore{locks: map[string]lock{}} }

func (f *fakeStore) TryLock(ctx context.Context, name, owner string, now, until time.Time) (bool, error) {
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

func (f *fakeStore) Unlock(_ context.Context, name, owner string, until time.Time) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if l, ok := f.locks[name]; ok && l.owner == owner {
		f.locks[name] = lock{owner: owner, until: until}
	}
	return nil
}

func (f *fakeStore) ReapExpiredLeases(ctx context.Context, _ time.Time) (store.ReapResult, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.hangReap {
		<-ctx.Done()
		return store.ReapResult{}, ctx.Err()
	}
	f.reaps++
	return store.ReapResult{Requeued: 1}, nil
}

func (f *fakeStore) PruneDevices(_ context.Context, cutoff time.Time) (int, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.devCutoff = cutoff
	return 2, nil
}

func (f *fakeStore) PruneTriggers(context.Context, time.Time) (int, error) { return 3, nil }

func (f *fakeStore) PruneFinished(_ context.Context, _ time.Time, limit int) (int, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.pruneCalls++
	n := min(limit, f.finished)
	f.finished -= n
	return n, nil
}

func (f *fakeStore) reapCount() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.reaps
}

func (f *fakeStore) PrunePolicy(context.Context, time.Time) (int, error) { return 0, nil }

func discard() *slog.Logger { return slog.New(slog.DiscardHandler) }

// newLeader builds an elector for owner with the lease reaper (every 5 s,
// bounded by the 15 s TTL) and the given services.
func newLeader(t *testing.T, st *fakeStore, c *clock, owner string, services ...leadership.Service) *leadership.Elector {
	t.Helper()
	services = append([]leadership.Service{NewLeaseReaper(st, 5*time.Second, 15*time.Second, nil)}, services...)
	e, err := leadership.New(leadership.Config{Locker: st, Owner: owner, Now: c.Now, TTL: 15 * time.Second,
		Services: services, Logger: discard()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(e.Wait)
	return e
}

// tick runs one election round and waits for the services it started.
func tick(t *testing.T, e *leadership.Elector) error {
	t.Helper()
	err := e.Tick(t.Context())
	e.Wait()
	return err
}

// A reap that hangs (a database that stopped answering) fails after the
// leader TTL instead of holding the reaper; the next interval retries it.
func TestHungReapTimesOut(t *testing.T) {
	t.Parallel()
	st := newFakeStore()
	st.hangReap = true
	r := NewLeaseReaper(st, 5*time.Second, 100*time.Millisecond, nil)
	if _, err := r.RunOnce(t.Context(), time.Now()); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("a hung reap = %v, want a deadline error", err)
	}
}

// The reaper says what it reclaimed, as a warning (each reclaimed lease is
// a worker that died mid-send), and counts it in the metrics.
func TestLeaseReaperReportsAndMeters(t *testing.T) {
	t.Parallel()
	m := metrics.New(nil)
	r := NewLeaseReaper(newFakeStore(), 5*time.Second, time.Second, m)
	res, err := r.RunOnce(t.Context(), time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if res.Counts["requeued"] != 1 || !res.Warn {
		t.Fatalf("result %+v, want 1 requeued, as a warning", res)
	}
	var got dto.Metric
	if err := m.Requeued.Write(&got); err != nil || got.GetCounter().GetValue() != 1 {
		t.Fatalf("requeued metric = %v (%v), want 1", got.GetCounter().GetValue(), err)
	}
}

// Only the elected leader reaps, once per reap interval; a leader that
// cannot renew stops reaping, and its successor reaps.
func TestOnlyTheLeaderReaps(t *testing.T) {
	t.Parallel()
	st, c := newFakeStore(), &clock{now: time.Date(2026, 11, 22, 9, 0, 0, 0, time.UTC)}
	a, b := newLeader(t, st, c, "a"), newLeader(t, st, c, "b")
	for range 5 {
		if err := tick(t, a); err != nil {
			t.Fatal(err)
		}
		if err := tick(t, b); err != nil {
			t.Fatal(err)
		}
		c.Advance(5 * time.Second)
	}
	if st.reapCount() != 5 {
		t.Fatalf("reaped %d times in 5 ticks 5 s apart, want 5 (by the leader only)", st.reapCount())
	}
	st.mu.Lock()
	st.failLock = errors.New("connection refused")
	st.mu.Unlock()
	if err := tick(t, a); err == nil || a.IsLeader() {
		t.Fatalf("after a failed renewal: err %v leader %v, want an error and no leadership", err, a.IsLeader())
	}
	c.Advance(time.Minute)
	tick(t, a)
	if st.reapCount() != 5 {
		t.Fatal("a stepped-down leader reaped")
	}
	st.mu.Lock()
	st.failLock = nil
	st.mu.Unlock()
	if tick(t, b); !b.IsLeader() || st.reapCount() != 6 {
		t.Fatalf("successor: leader %v, reaps %d; want leader, 6", b.IsLeader(), st.reapCount())
	}
}

func TestPruneInBatches(t *testing.T) {
	t.Parallel()
	st, c := newFakeStore(), &clock{now: time.Date(2026, 11, 22, 9, 0, 0, 0, time.UTC)}
	st.finished = 2500
	p := Pruners{
		Devices:       NewDevicePruner(st, time.Hour, 270*24*time.Hour),
		Idempotency:   NewIdempotencyPruner(st, time.Hour, 24*time.Hour),
		Notifications: NewNotificationPruner(st, time.Hour, 30*24*time.Hour),
	}
	r, err := p.Prune(t.Context(), c.Now())
	if err != nil {
		t.Fatal(err)
	}
	if r != (PruneResult{Devices: 2, Triggers: 3, Notifications: 2500}) || st.pruneCalls != 3 {
		t.Fatalf("prune = %+v in %d calls, want all 2500 in 3 batches", r, st.pruneCalls)
	}
	if want := c.Now().Add(-270 * 24 * time.Hour); !st.devCutoff.Equal(want) {
		t.Fatalf("device cutoff %v, want %v (270 days)", st.devCutoff, want)
	}
}

// Disabled is an explicit zero (or, from herald.Config, a negative value):
// a pruner with no interval never runs on the leader, one with no age never
// deletes anything, even when asked to prune now.
func TestDisabledPruners(t *testing.T) {
	t.Parallel()
	st := newFakeStore()
	day := 24 * time.Hour
	for name, s := range map[string]leadership.Service{
		"devices, no interval":       NewDevicePruner(st, 0, day),
		"devices, no age":            NewDevicePruner(st, time.Hour, 0),
		"devices, negative age":      NewDevicePruner(st, time.Hour, -1),
		"idempotency, no interval":   NewIdempotencyPruner(st, -1, day),
		"idempotency, no retention":  NewIdempotencyPruner(st, time.Hour, 0),
		"notifications, no interval": NewNotificationPruner(st, 0, day),
		"notifications, forever":     NewNotificationPruner(st, time.Hour, -1),
		"policy, no interval":        NewPolicyPruner(st, -1),
		"vacuum, no interval":        NewQueueVacuum(&failingVacuum{}, 0),
	} {
		if s.Interval() != 0 {
			t.Errorf("%s: interval %v, want 0 (disabled)", name, s.Interval())
		}
	}
	st.finished = 10
	p := Pruners{Devices: NewDevicePruner(st, time.Hour, 0), Idempotency: NewIdempotencyPruner(st, time.Hour, 0),
		Notifications: NewNotificationPruner(st, time.Hour, 0)}
	if r, err := p.Prune(t.Context(), time.Now()); err != nil || r != (PruneResult{}) || st.pruneCalls != 0 {
		t.Fatalf("prune with every age off = %+v, %v, %d calls; want nothing", r, err, st.pruneCalls)
	}
}

func TestRunLockedShedLockSemantics(t *testing.T) {
	t.Parallel()
	st, c := newFakeStore(), &clock{now: time.Date(2026, 11, 22, 0, 0, 0, 0, time.UTC)}
	ctx := t.Context()
	runs := 0
	job := func(context.Context) error { runs++; c.Advance(time.Minute); return nil }
	// S3.7: at most 1 h, at least 5 min.
	if err := RunLocked(ctx, st, "a", "daily", c.Now, time.Hour, 5*time.Minute, job); err != nil {
		t.Fatal(err)
	}
	// One minute later the job is done, but lock-at-least still holds.
	if err := RunLocked(ctx, st, "b", "daily", c.Now, time.Hour, 5*time.Minute, job); !errors.Is(err, ErrLocked) {
		t.Fatalf("second instance within lock-at-least: %v, want ErrLocked", err)
	}
	c.Advance(4 * time.Minute)
	if err := RunLocked(ctx, st, "b", "daily", c.Now, time.Hour, 5*time.Minute, job); err != nil {
		t.Fatalf("after lock-at-least: %v", err)
	}
	if runs != 2 {
		t.Fatalf("ran %d times, want 2", runs)
	}
	// A holder that crashes blocks others for lock-at-most only.
	if ok, _ := st.TryLock(ctx, "crashy", "dead", c.Now(), c.Now().Add(time.Hour)); !ok {
		t.Fatal("setup")
	}
	if err := RunLocked(ctx, st, "a", "crashy", c.Now, time.Hour, 0, job); !errors.Is(err, ErrLocked) {
		t.Fatalf("while a crashed holder's lock lasts: %v", err)
	}
	c.Advance(time.Hour)
	if err := RunLocked(ctx, st, "a", "crashy", c.Now, time.Hour, 0, job); err != nil {
		t.Fatalf("after lock-at-most: %v", err)
	}
	if err := RunLocked(ctx, st, "a", "x", c.Now, time.Minute, time.Hour, job); err == nil {
		t.Fatal("lock-at-least above lock-at-most accepted")
	}
}

// slowVacuum is a store.QueueVacuumer whose calls block until released
// and that records how many ran at once.
type slowVacuum struct {
	mu            sync.Mutex
	calls, active int
	maxActive     int
	started       chan struct{}
	release       chan struct{}
}

func (v *slowVacuum) VacuumQueue(ctx context.Context) (bool, error) {
	v.mu.Lock()
	v.calls++
	v.active++
	v.maxActive = max(v.maxActive, v.active)
	v.mu.Unlock()
	v.started <- struct{}{}
	select {
	case <-v.release:
	case <-ctx.Done():
	}
	v.mu.Lock()
	v.active--
	v.mu.Unlock()
	return true, nil
}

func (v *slowVacuum) count() (calls, maxActive int) {
	v.mu.Lock()
	defer v.mu.Unlock()
	return v.calls, v.maxActive
}

// The leader asks the store to vacuum its queue every VacuumInterval, in
// the background: a VACUUM that takes long neither delays the renewal of
// leadership nor overlaps the next one, and a follower never vacuums.
func TestVacuumInBackgroundByTheLeaderOnly(t *testing.T) {
	t.Parallel()
	st, c := newFakeStore(), &clock{now: time.Date(2026, 11, 24, 9, 0, 0, 0, time.UTC)}
	v := &slowVacuum{started: make(chan struct{}, 4), release: make(chan struct{})}
	newWithVacuum := func(owner string) *leadership.Elector {
		return newLeader(t, st, c, owner, NewQueueVacuum(v, 10*time.Second))
	}
	a, b := newWithVacuum("a"), newWithVacuum("b")
	ctx := t.Context()
	if err := a.Tick(ctx); err != nil || !a.IsLeader() {
		t.Fatalf("a not elected: %v", err)
	}
	<-v.started // the vacuum runs while Tick has returned
	for range 3 {
		c.Advance(10 * time.Second)
		if err := a.Tick(ctx); err != nil || !a.IsLeader() {
			t.Fatalf("renewal during a long vacuum: err %v, leader %v", err, a.IsLeader())
		}
		if err := tick(t, b); err != nil || b.IsLeader() {
			t.Fatalf("b: err %v, leader %v", err, b.IsLeader())
		}
	}
	if calls, _ := v.count(); calls != 1 {
		t.Fatalf("vacuums started while one ran = %d, want 1", calls)
	}
	v.release <- struct{}{}
	// Once it finished, the next due tick starts the next one.
	deadline := time.Now().Add(5 * time.Second)
	for {
		c.Advance(10 * time.Second)
		if err := a.Tick(ctx); err != nil {
			t.Fatal(err)
		}
		if calls, _ := v.count(); calls == 2 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("no second vacuum after the first finished")
		}
		time.Sleep(time.Millisecond)
	}
	<-v.started
	close(v.release)
	if _, maxActive := v.count(); maxActive != 1 {
		t.Fatalf("vacuums at once = %d, want 1", maxActive)
	}
	a.Wait()
}

// failingVacuum is a store.QueueVacuumer that always fails and counts calls.
type failingVacuum struct {
	mu    sync.Mutex
	calls int
}

func (v *failingVacuum) VacuumQueue(context.Context) (bool, error) {
	v.mu.Lock()
	defer v.mu.Unlock()
	v.calls++
	return false, errors.New("permission denied for table deliveries")
}

// A failed vacuum is logged and asked for again at the next interval; it
// neither fails the tick (leadership and the reaper go on) nor blocks
// later vacuums.
func TestFailedVacuumIsRetriedNextInterval(t *testing.T) {
	t.Parallel()
	st, c := newFakeStore(), &clock{now: time.Date(2026, 11, 24, 9, 0, 0, 0, time.UTC)}
	v := &failingVacuum{}
	s := newLeader(t, st, c, "a", NewQueueVacuum(v, 10*time.Second))
	for range 3 {
		if err := tick(t, s); err != nil || !s.IsLeader() {
			t.Fatalf("tick with a failing vacuum: err %v, leader %v", err, s.IsLeader())
		}
		c.Advance(10 * time.Second)
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.calls != 3 || st.reapCount() != 3 {
		t.Fatalf("vacuums %d, reaps %d after 3 ticks 10 s apart; want 3 and 3", v.calls, st.reapCount())
	}
}
