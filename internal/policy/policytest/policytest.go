// Package policytest is the conformance suite of policy.Limiter: the SQL
// stores (SQLite, PostgreSQL) and Redis run it unchanged, so the delivery
// policy behaves the same whichever backend holds its locks and counts
// (issue 4, "two backends with one behaviour").
package policytest

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/heraldhq/herald/internal/policy"
)

// Harness is what the suite needs from a backend.
type Harness struct {
	// New returns a Limiter whose keys no other test sees (a fresh
	// database, or a fresh key prefix).
	New func(t *testing.T) policy.Limiter
	// RealTimeExpiry is set for a backend that expires keys by its own
	// clock (Redis) instead of the now it is given (SQL): the suite then
	// waits for a short window to pass instead of moving now.
	RealTimeExpiry bool
}

// Run runs the suite.
func Run(t *testing.T, h Harness) {
	if h.New == nil {
		t.Fatal("policytest: Harness.New is required")
	}
	t.Run("DedupeFirstWriterWins", func(t *testing.T) { testDedupe(t, h) })
	t.Run("DedupeExpires", func(t *testing.T) { testDedupeExpiry(t, h) })
	t.Run("DedupeConcurrent", func(t *testing.T) { testDedupeConcurrent(t, h) })
	t.Run("DedupeBatch", func(t *testing.T) { testDedupeBatch(t, h) })
	t.Run("DedupeBatchConcurrent", func(t *testing.T) { testDedupeBatchConcurrent(t, h) })
	t.Run("DailyCap", func(t *testing.T) { testDaily(t, h) })
	t.Run("DailyCapConcurrent", func(t *testing.T) { testDailyConcurrent(t, h) })
	t.Run("DailyCapBatch", func(t *testing.T) { testDailyBatch(t, h) })
	t.Run("DailyCapBatchConcurrent", func(t *testing.T) { testDailyBatchConcurrent(t, h) })
	t.Run("DailyCapBatchArguments", func(t *testing.T) { testDailyBatchArguments(t, h) })
}

func base() time.Time { return time.Date(2026, 3, 14, 15, 9, 26, 0, time.UTC) }

func acquire(t *testing.T, l policy.Limiter, key, owner string, window time.Duration, now time.Time) bool {
	t.Helper()
	ok, err := l.AcquireDedupe(t.Context(), key, owner, window, now)
	if err != nil {
		t.Fatalf("AcquireDedupe(%q, %q): %v", key, owner, err)
	}
	return ok
}

func count(t *testing.T, l policy.Limiter, user, day, owner string, limit int) bool {
	t.Helper()
	ok, err := l.CountDaily(t.Context(), user, day, owner, limit, time.Now().Add(48*time.Hour))
	if err != nil {
		t.Fatalf("CountDaily(%q, %q, %q): %v", user, day, owner, err)
	}
	return ok
}

func testDedupe(t *testing.T, h Harness) {
	l := h.New(t)
	now := time.Now()
	key := policy.DedupeKey("u1", "price_drop", "product-7")
	if !acquire(t, l, key, "n1", time.Hour, now) {
		t.Fatal("the first writer did not get the lock")
	}
	// Another delivery of the same notification gets the same answer.
	if !acquire(t, l, key, "n1", time.Hour, now.Add(time.Minute)) {
		t.Fatal("the lock's owner was refused its own lock")
	}
	// S3.13: a duplicate within the hour is blocked.
	if acquire(t, l, key, "n2", time.Hour, now.Add(59*time.Minute)) {
		t.Fatal("a second notification got the lock inside the window")
	}
	// Other users, types and keys are independent.
	for _, other := range []string{
		policy.DedupeKey("u2", "price_drop", "product-7"),
		policy.DedupeKey("u1", "restock", "product-7"),
		policy.DedupeKey("u1", "price_drop", "product-8"),
	} {
		if !acquire(t, l, other, "n3-"+other, time.Hour, now) {
			t.Fatalf("key %q was blocked by another key's lock", other)
		}
	}
}

func testDedupeExpiry(t *testing.T, h Harness) {
	l := h.New(t)
	key := policy.DedupeKey("u1", "price_drop", "p")
	if !h.RealTimeExpiry {
		now := base()
		if !acquire(t, l, key, "n1", time.Hour, now) {
			t.Fatal("the first writer did not get the lock")
		}
		if acquire(t, l, key, "n2", time.Hour, now.Add(time.Hour-time.Millisecond)) {
			t.Fatal("the lock was free before its window ended")
		}
		if !acquire(t, l, key, "n2", time.Hour, now.Add(time.Hour)) {
			t.Fatal("the lock was not free once its window ended")
		}
		if acquire(t, l, key, "n1", time.Hour, now.Add(time.Hour)) {
			t.Fatal("the expired owner got the lock back from its new owner")
		}
		return
	}
	// The backend expires the key by its own clock, so "still held" can be
	// judged only when the second call came back within the window: on a
	// loaded machine it may not, and the lock has rightly expired. Such a
	// round proves nothing; the next one doubles the window.
	window := 150 * time.Millisecond
	for round := 0; ; round++ {
		key = policy.DedupeKey("u1", "price_drop", fmt.Sprintf("p%d", round))
		start := time.Now()
		if !acquire(t, l, key, "n1", window, start) {
			t.Fatal("the first writer did not get the lock")
		}
		taken := acquire(t, l, key, "n2", window, time.Now())
		if time.Since(start) < window {
			if taken {
				t.Fatal("the lock was free at once")
			}
			break
		}
		if round == 6 {
			t.Fatalf("two calls never fitted in a %s window", window)
		}
		window *= 2
	}
	// The backend expires the key by its own clock: poll with a deadline.
	deadline := time.Now().Add(5 * time.Second)
	for !acquire(t, l, key, "n2", window, time.Now()) {
		if time.Now().After(deadline) {
			t.Fatal("the lock never expired")
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func testDedupeConcurrent(t *testing.T, h Harness) {
	l := h.New(t)
	const n = 50
	key := policy.DedupeKey("u1", "price_drop", "concurrent")
	now := time.Now()
	var wg sync.WaitGroup
	results := make([]bool, n)
	errs := make([]error, n)
	for i := range n {
		wg.Go(func() {
			results[i], errs[i] = l.AcquireDedupe(t.Context(), key, fmt.Sprintf("n%02d", i), time.Hour, now)
		})
	}
	wg.Wait()
	won := 0
	for i := range n {
		if errs[i] != nil {
			t.Fatalf("writer %d: %v", i, errs[i])
		}
		if results[i] {
			won++
		}
	}
	if won != 1 {
		t.Fatalf("%d of %d concurrent writers got the lock, want exactly 1", won, n)
	}
}

func testDaily(t *testing.T, h Harness) {
	l := h.New(t)
	const day = "2026-03-14"
	for i := range 10 {
		if !count(t, l, "u1", day, fmt.Sprintf("n%d", i), 10) {
			t.Fatalf("notification %d of the day was refused under a cap of 10", i+1)
		}
	}
	// S3.13: the 11th notification of the day is blocked.
	if count(t, l, "u1", day, "n10", 10) {
		t.Fatal("the 11th notification of the day was counted")
	}
	// A notification already counted stays allowed (its other deliveries).
	if !count(t, l, "u1", day, "n3", 10) {
		t.Fatal("an already counted notification was refused")
	}
	// The next day and other users start from zero.
	if !count(t, l, "u1", "2026-03-15", "n10", 10) {
		t.Fatal("the next day's first notification was refused")
	}
	if !count(t, l, "u2", day, "n10", 10) {
		t.Fatal("another user's first notification was refused")
	}
	// A lower limit (the user's own cap) applies to the same count.
	if count(t, l, "u1", "2026-03-15", "n11", 1) {
		t.Fatal("a cap of 1 let a second notification through")
	}
}

func testDailyConcurrent(t *testing.T, h Harness) {
	l := h.New(t)
	const n, limit = 30, 10
	var wg sync.WaitGroup
	results := make([]bool, n)
	errs := make([]error, n)
	for i := range n {
		wg.Go(func() {
			results[i], errs[i] = l.CountDaily(t.Context(), "u1", "2026-03-14", fmt.Sprintf("n%02d", i), limit,
				time.Now().Add(48*time.Hour))
		})
	}
	wg.Wait()
	counted := 0
	for i := range n {
		if errs[i] != nil {
			t.Fatalf("writer %d: %v", i, errs[i])
		}
		if results[i] {
			counted++
		}
	}
	if counted != limit {
		t.Fatalf("%d of %d concurrent notifications were counted under a cap of %d", counted, n, limit)
	}
}

// Bench measures the limiter's share of one policy check of a capped
// notification with a dedupe key: AcquireDedupe, then CountDaily, each
// iteration for a new notification of one of 1,000 users (so neither the
// lock nor the cap refuses it). It reports checks/s.
func Bench(b *testing.B, l policy.Limiter) {
	ctx := b.Context()
	now := base()
	i := 0
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		i++
		user, owner := fmt.Sprint("u", i%1000), fmt.Sprint("n", i)
		ok, err := l.AcquireDedupe(ctx, policy.DedupeKey(user, "promo", owner), owner, time.Hour, now)
		if err != nil || !ok {
			b.Fatalf("AcquireDedupe = %v, %v", ok, err)
		}
		ok, err = l.CountDaily(ctx, user, "2026-03-14", owner, policy.MaxDailyCap, now.Add(24*time.Hour))
		if err != nil || !ok {
			b.Fatalf("CountDaily = %v, %v", ok, err)
		}
	}
	b.ReportMetric(float64(i)/b.Elapsed().Seconds(), "checks/s")
}
