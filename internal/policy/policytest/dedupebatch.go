package policytest

import (
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/heraldhq/herald/heraldtype"
	"github.com/heraldhq/herald/internal/policy"
)

// The batch of dedupe locks (policy.DedupeBatchLimiter, issue 39 item 3)
// must be AcquireDedupe for each item in order: first writer wins, its
// owner keeps the answer yes, and concurrent batches that share keys in
// opposite orders neither deadlock nor both win.

// dedupeBatchLimiter returns h's limiter as a DedupeBatchLimiter, or skips
// the test.
func dedupeBatchLimiter(t *testing.T, h Harness) policy.DedupeBatchLimiter {
	t.Helper()
	bl, ok := h.New(t).(policy.DedupeBatchLimiter)
	if !ok {
		t.Skip("the limiter has no AcquireDedupeBatch")
	}
	return bl
}

// lock is one item of a batch, held for an hour.
func lock(key, owner string) heraldtype.DedupeLock {
	return heraldtype.DedupeLock{Key: policy.DedupeKey("u1", "price_drop", key), Owner: owner, Window: time.Hour}
}

func acquireBatch(t *testing.T, l policy.DedupeBatchLimiter, now time.Time, items ...heraldtype.DedupeLock) []bool {
	t.Helper()
	ok, err := l.AcquireDedupeBatch(t.Context(), items, now)
	if err != nil {
		t.Fatalf("AcquireDedupeBatch(%v): %v", items, err)
	}
	if len(ok) != len(items) {
		t.Fatalf("AcquireDedupeBatch answered %d of %d items", len(ok), len(items))
	}
	return ok
}

func testDedupeBatch(t *testing.T, h Harness) {
	l := dedupeBatchLimiter(t, h)
	now := time.Now()
	// A lock taken before the batch keeps its owner.
	if !acquire(t, l, lock("held", "n0").Key, "n0", time.Hour, now) {
		t.Fatal("the first writer did not get the lock")
	}
	// In one batch: a key held by another is refused and its owner is
	// answered yes; of two new owners of a key the first wins, and its
	// repeat (the notification's other device) is yes again.
	got := acquireBatch(t, l, now,
		lock("held", "n1"), lock("p", "n2"), lock("held", "n0"), lock("p", "n3"), lock("q", "n4"), lock("p", "n2"))
	if want := []bool{false, true, true, false, true, true}; !slices.Equal(got, want) {
		t.Fatalf("batch = %v, want %v", got, want)
	}
	// What the batch took, AcquireDedupe sees, and the batch again changes
	// nothing.
	if acquire(t, l, lock("p", "").Key, "n3", time.Hour, now) || !acquire(t, l, lock("q", "").Key, "n4", time.Hour, now) {
		t.Fatal("AcquireDedupe after the batch disagrees with it")
	}
	if got := acquireBatch(t, l, now, lock("p", "n3"), lock("p", "n2")); !slices.Equal(got, []bool{false, true}) {
		t.Fatalf("the batch repeated = %v, want [false true]", got)
	}
	if got := acquireBatch(t, l, now); len(got) != 0 {
		t.Fatalf("an empty batch answered %v", got)
	}
	// A window of zero is refused, and nothing of the batch is taken.
	bad := []heraldtype.DedupeLock{lock("r", "n5"), {Key: lock("s", "").Key, Owner: "n6"}}
	if ok, err := l.AcquireDedupeBatch(t.Context(), bad, now); err == nil {
		t.Fatalf("a zero window: AcquireDedupeBatch = %v, nil; want an error", ok)
	}
	if !acquire(t, l, lock("r", "").Key, "n7", time.Hour, now) {
		t.Fatal("a refused batch took a lock")
	}
	if h.RealTimeExpiry {
		return
	}
	// An expired lock is taken over by the batch's first owner of the key.
	later := now.Add(time.Hour)
	if got := acquireBatch(t, l, later, lock("held", "n8"), lock("held", "n0")); !slices.Equal(got, []bool{true, false}) {
		t.Fatalf("after the window = %v, want [true false]", got)
	}
}

// testDedupeBatchConcurrent runs batches that share keys in opposite
// orders and single acquires at once: each key has exactly one owner, and
// every answer names it.
func testDedupeBatchConcurrent(t *testing.T, h Harness) {
	l := dedupeBatchLimiter(t, h)
	const batches, keys, singles = 8, 6, 6
	now := time.Now()
	var wg sync.WaitGroup
	results := make([][]bool, batches)
	single := make([]bool, singles)
	errs := make([]error, batches+singles)
	for b := range batches {
		wg.Go(func() {
			items := make([]heraldtype.DedupeLock, keys)
			for i := range keys {
				items[i] = lock(fmt.Sprint("k", keyAt(b, i, keys)), fmt.Sprint("b", b))
			}
			results[b], errs[b] = l.AcquireDedupeBatch(t.Context(), items, now)
		})
	}
	for i := range singles {
		wg.Go(func() {
			single[i], errs[batches+i] = l.AcquireDedupe(t.Context(), lock(fmt.Sprint("k", i%keys), "").Key,
				fmt.Sprint("s", i), time.Hour, now)
		})
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("writer %d: %v", i, err)
		}
	}
	// Each key's owner is the one writer that won it.
	won := make(map[string]int, keys)
	for b, ok := range results {
		if len(ok) != keys {
			t.Fatalf("batch %d answered %d of %d items", b, len(ok), keys)
		}
		for i, yes := range ok {
			if yes {
				won[fmt.Sprint("k", keyAt(b, i, keys))]++
			}
		}
	}
	for i, yes := range single {
		if yes {
			won[fmt.Sprint("k", i%keys)]++
		}
	}
	for k := range keys {
		if n := won[fmt.Sprint("k", k)]; n != 1 {
			t.Fatalf("key k%d: %d writers got it, want exactly 1 (%v)", k, n, won)
		}
	}
}

// keyAt is the key of item i of batch b: the even batches take the keys
// in one order, the odd ones in the other.
func keyAt(b, i, keys int) int {
	if b%2 == 1 {
		return keys - 1 - i
	}
	return i
}
