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

// The batch count (policy.BatchLimiter, issue 39 item 3) must be
// CountDaily for each item in order: the same cap, the same idempotent
// owner, the same answers under concurrency.

// batchLimiter returns h's limiter as a BatchLimiter, or skips the test.
func batchLimiter(t *testing.T, h Harness) policy.BatchLimiter {
	t.Helper()
	bl, ok := h.New(t).(policy.BatchLimiter)
	if !ok {
		t.Skip("the limiter has no CountDailyBatch")
	}
	return bl
}

// dc is one item of a batch, kept 48 h.
func dc(user, day, owner string, limit int) heraldtype.DailyCount {
	return heraldtype.DailyCount{UserID: user, Day: day, Owner: owner, Limit: limit, ExpireAt: time.Now().Add(48 * time.Hour)}
}

func countBatch(t *testing.T, l policy.BatchLimiter, items ...heraldtype.DailyCount) []bool {
	t.Helper()
	ok, err := l.CountDailyBatch(t.Context(), items)
	if err != nil {
		t.Fatalf("CountDailyBatch(%v): %v", items, err)
	}
	if len(ok) != len(items) {
		t.Fatalf("CountDailyBatch answered %d of %d items", len(ok), len(items))
	}
	return ok
}

func testDailyBatch(t *testing.T, h Harness) {
	l := batchLimiter(t, h)
	const day, next = "2026-03-14", "2026-03-15"
	for i := range 8 {
		if !count(t, l, "u1", day, fmt.Sprintf("n%d", i), 10) {
			t.Fatalf("notification %d of the day was refused under a cap of 10", i+1)
		}
	}
	// At the cap's edge, two new notifications of one user in one batch
	// count in order: with eight counted, the 9th and 10th are, the 11th
	// is blocked (S3.8) and so is the 12th. An owner counted before the
	// batch (n3) and a repeat of one the batch counted (n8, its other
	// device) are allowed without a slot; other users and days are their
	// own counts.
	got := countBatch(t, l,
		dc("u1", day, "n8", 10), dc("u1", day, "n3", 10), dc("u1", day, "n9", 10), dc("u2", day, "n10", 10),
		dc("u1", day, "n10", 10), dc("u1", day, "n8", 10), dc("u1", day, "n11", 10), dc("u1", next, "n10", 10))
	if want := []bool{true, true, true, true, false, true, false, true}; !slices.Equal(got, want) {
		t.Fatalf("batch at the cap's edge = %v, want %v", got, want)
	}
	// The batch counted what CountDaily sees: n9 is counted, n10 not.
	if !count(t, l, "u1", day, "n9", 10) || count(t, l, "u1", day, "n10", 10) {
		t.Fatal("CountDaily after the batch disagrees with it")
	}
	// The same batch again changes nothing: its owners are counted once.
	got = countBatch(t, l, dc("u1", day, "n8", 10), dc("u1", day, "n9", 10), dc("u1", day, "n10", 10))
	if want := []bool{true, true, false}; !slices.Equal(got, want) {
		t.Fatalf("the batch repeated = %v, want %v", got, want)
	}
	// Two new owners of one user with one slot left: the first wins.
	if got := countBatch(t, l, dc("u3", day, "x", 1), dc("u3", day, "y", 1), dc("u3", day, "x", 1)); !slices.Equal(got, []bool{true, false, true}) {
		t.Fatalf("two owners for one slot = %v, want [true false true]", got)
	}
	// A notification counted in a batch is not counted again by CountDaily.
	if !count(t, l, "u3", day, "x", 1) || count(t, l, "u3", day, "z", 1) {
		t.Fatal("CountDaily counted a batch's owner twice or forgot it")
	}
	if got := countBatch(t, l); len(got) != 0 {
		t.Fatalf("an empty batch answered %v", got)
	}
}

// testDailyBatchConcurrent runs batches and single counts on one user's
// day at once, as the workers of several instances do: exactly the cap is
// counted, and within each batch the new owners counted are the first ones
// (a count of a day never goes down, so once one is blocked the rest
// are). Batches also share users in opposite orders, which must not
// deadlock a backend that locks per user.
func testDailyBatchConcurrent(t *testing.T, h Harness) {
	l := batchLimiter(t, h)
	const day, limit, batches, size, singles = "2026-03-14", 10, 8, 5, 10
	var wg sync.WaitGroup
	results := make([][]bool, batches)
	single := make([]bool, singles)
	errs := make([]error, batches+singles)
	for b := range batches {
		wg.Go(func() {
			var items []heraldtype.DailyCount
			for i := range size {
				items = append(items, dc("u1", day, fmt.Sprintf("b%d-%d", b, i), limit))
				// Another user, whose place in the batch alternates.
				other := fmt.Sprintf("v%d", i)
				if b%2 == 1 {
					other = fmt.Sprintf("v%d", size-1-i)
				}
				items = append(items, dc(other, day, fmt.Sprintf("b%d-%d", b, i), 1000))
			}
			var ok []bool
			ok, errs[b] = l.CountDailyBatch(t.Context(), items)
			if len(ok) == len(items) {
				for i := 0; i < len(ok); i += 2 {
					results[b] = append(results[b], ok[i])
				}
			}
		})
	}
	for i := range singles {
		wg.Go(func() {
			single[i], errs[batches+i] = l.CountDaily(t.Context(), "u1", day, fmt.Sprintf("s%d", i), limit,
				time.Now().Add(48*time.Hour))
		})
	}
	wg.Wait()
	counted := 0
	for i, err := range errs {
		if err != nil {
			t.Fatalf("writer %d: %v", i, err)
		}
	}
	for b, ok := range results {
		if len(ok) != size {
			t.Fatalf("batch %d answered %d of u1's %d items", b, len(ok), size)
		}
		for i, c := range ok {
			if c {
				counted++
				if i > 0 && !ok[i-1] {
					t.Fatalf("batch %d counted u1's %v: a later owner after a blocked one", b, ok)
				}
			}
		}
	}
	for _, c := range single {
		if c {
			counted++
		}
	}
	if counted != limit {
		t.Fatalf("%d of %d concurrent notifications were counted under a cap of %d", counted, batches*size+singles, limit)
	}
	if count(t, l, "u1", day, "late", limit) {
		t.Fatal("a notification after the concurrent ones was counted past the cap")
	}
}

func testDailyBatchArguments(t *testing.T, h Harness) {
	l := batchLimiter(t, h)
	for _, c := range []struct {
		name  string
		items []heraldtype.DailyCount
	}{
		{"a limit of 0", []heraldtype.DailyCount{dc("u1", "2026-03-14", "n1", 0)}},
		{"two limits for one day", []heraldtype.DailyCount{dc("u1", "2026-03-14", "n1", 10), dc("u1", "2026-03-14", "n2", 5)}},
	} {
		if ok, err := l.CountDailyBatch(t.Context(), c.items); err == nil {
			t.Errorf("%s: CountDailyBatch = %v, nil; want an error", c.name, ok)
		}
	}
	// Nothing of a refused batch was counted.
	if !count(t, l, "u1", "2026-03-14", "n9", 1) {
		t.Fatal("a refused batch counted something")
	}
}

// BenchDaily measures the daily count of a claimed batch of 100 capped
// pushes (20 users, 5 each, as the rule engine's fan-out claims them):
// one CountDaily per push ("one_by_one"), and one CountDailyBatch when
// the limiter has it ("batch"). It reports counts/s.
func BenchDaily(b *testing.B, l policy.Limiter) {
	const size = 100
	items := func(i int) []heraldtype.DailyCount {
		out := make([]heraldtype.DailyCount, size)
		for k := range out {
			out[k] = heraldtype.DailyCount{UserID: fmt.Sprint("u", (i*size/5+k/5)%10000), Day: "2026-03-14",
				Owner: fmt.Sprint("n", i, "-", k), Limit: policy.MaxDailyCap, ExpireAt: base().Add(24 * time.Hour)}
		}
		return out
	}
	b.Run("one_by_one", func(b *testing.B) {
		i := 0
		for b.Loop() {
			for _, c := range items(i) {
				if ok, err := l.CountDaily(b.Context(), c.UserID, c.Day, c.Owner, c.Limit, c.ExpireAt); !ok || err != nil {
					b.Fatalf("CountDaily = %v, %v", ok, err)
				}
			}
			i++
		}
		b.ReportMetric(float64(i*size)/b.Elapsed().Seconds(), "counts/s")
	})
	bl, ok := l.(policy.BatchLimiter)
	if !ok {
		return
	}
	b.Run("batch", func(b *testing.B) {
		i := 1 << 20 // owners the first run did not count
		start := i
		for b.Loop() {
			ok, err := bl.CountDailyBatch(b.Context(), items(i))
			if err != nil || len(ok) != size || slices.Contains(ok, false) {
				b.Fatalf("CountDailyBatch = %v, %v", ok, err)
			}
			i++
		}
		b.ReportMetric(float64((i-start)*size)/b.Elapsed().Seconds(), "counts/s")
	})
}
