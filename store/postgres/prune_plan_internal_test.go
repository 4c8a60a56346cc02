package postgres

import (
	"strings"
	"testing"
	"time"
)

// TestPruneFinishedProbesIndexes (issue 39): the pruner deletes a batch of
// notifications with their deliveries and attempt rows. On statistics
// that had not caught up with the attempt rows (here: never analyzed,
// as on a server whose autovacuum is off or behind) PostgreSQL joined the
// batch's deliveries to their attempts by sorting the whole attempts
// table, once per batch: a median 269 µs of CPU per pruned delivery
// against 24 with index probes (docs/PERFORMANCE.md, session 22). Under
// indexPlans, as PruneFinished runs it, the statement must read no table
// in full and sort no table; without them it does (the control, so that
// the test proves it reproduces the statistics that went wrong).
func TestPruneFinishedProbesIndexes(t *testing.T) {
	s := migratedStore(t)
	ctx := t.Context()
	const n = 50000
	fillFinished(t, s, n)
	cutoff := time.Now().Add(-30 * 24 * time.Hour)
	// The statement run under settings (EXPLAIN ANALYZE, rolled back): its plan.
	explain := func(settings string) string {
		t.Helper()
		return planIn(t, s, "EXPLAIN (ANALYZE) "+s.q(pruneFinishedSQL), []any{cutoff, 1000}, settings)
	}
	whole := func(plan string) bool {
		return strings.Contains(plan, "Seq Scan on delivery_attempts") || strings.Contains(plan, "Seq Scan on deliveries") ||
			strings.Contains(plan, "Sort Key: a.delivery_id")
	}
	// The three tables' count of sequential scans (the store has one
	// connection; its statistics are flushed before each read): it
	// checks what PruneFinished itself runs, not only the plans.
	seqScans := func() int64 {
		t.Helper()
		if _, err := s.pool.Exec(ctx, `SELECT pg_stat_force_next_flush()`); err != nil {
			t.Fatal(err)
		}
		var scans int64
		if err := s.pool.QueryRow(ctx, s.q(`SELECT coalesce(sum(seq_scan), 0) FROM pg_stat_user_tables
			WHERE relid IN ('{s}.notifications'::regclass, '{s}.deliveries'::regclass, '{s}.delivery_attempts'::regclass)`)).Scan(&scans); err != nil {
			t.Fatal(err)
		}
		return scans
	}
	before := seqScans()
	if plan := explain(""); !whole(plan) {
		t.Fatalf("control: without indexPlans the planner probed the indexes; the test no longer reproduces the statistics:\n%s", plan)
	}
	control := seqScans()
	if control == before {
		t.Fatalf("control: the statement without indexPlans scanned no table in full (%d sequential scans before and after)", before)
	}
	if plan := explain(indexPlans); whole(plan) {
		t.Fatalf("under indexPlans the prune reads or sorts a whole table:\n%s", plan)
	}
	if scans := seqScans(); scans != control {
		t.Fatalf("under indexPlans the prune made %d sequential scans", scans-control)
	}
	pruned, err := s.PruneFinished(ctx, cutoff, 1000)
	if err != nil || pruned != 1000 {
		t.Fatalf("PruneFinished = %d, %v; want 1000 pruned", pruned, err)
	}
	if after := seqScans(); after != control {
		t.Fatalf("PruneFinished read a table in full: %d sequential scans, %d before it", after, control)
	}
	var left int
	if err := s.pool.QueryRow(ctx, s.q(`SELECT (SELECT count(*) FROM {s}.notifications) + (SELECT count(*) FROM {s}.deliveries)
		+ (SELECT count(*) FROM {s}.delivery_attempts)`)).Scan(&left); err != nil || left != 3*(n-1000) {
		t.Fatalf("rows left = %d, %v; want %d", left, err, 3*(n-1000))
	}
}

// fillFinished writes n notifications created 40 days ago, each with one
// sent delivery and its attempt row, and leaves the tables unanalyzed.
func fillFinished(t testing.TB, s *Store, n int) {
	t.Helper()
	ctx := t.Context()
	for _, q := range []string{
		`INSERT INTO {s}.notifications (id, user_id, type, title, body, channels, priority, payload_mode, guarantee, created_at)
			SELECT 'n' || g, 'u' || (g % 1000), 'order', 't', 'b', '{push}', 'normal', 'notification', 'at_least_once',
				now() - interval '40 days' FROM generate_series(1, $1) g`,
		`INSERT INTO {s}.deliveries (id, notification_id, user_id, type, channel, provider, guarantee, max_attempts, run_at, state,
			attempt, created_at, updated_at)
			OVERRIDING SYSTEM VALUE
			SELECT g, 'n' || g, 'u' || (g % 1000), 'order', 'push', 'fcm', 'at_least_once', 4, now(), 'sent', 1, now(), now()
			FROM generate_series(1, $1) g`,
		`INSERT INTO {s}.delivery_attempts (delivery_id, attempt, at, outcome) SELECT g, 1, now(), 'sent' FROM generate_series(1, $1) g`,
	} {
		if _, err := s.pool.Exec(ctx, s.q(q), n); err != nil {
			t.Fatal(err)
		}
	}
}

// BenchmarkPruneFinished: retention as the leader runs it, batches of
// 1,000 until none is left, over b.N finished notifications (each with a
// delivery and its attempt row) on unanalyzed tables. ns/op is the time
// per pruned notification; the store has one connection, so on an idle
// machine that is about the database's CPU for it. Run with a fixed
// count: -bench PruneFinished -benchtime 100000x.
func BenchmarkPruneFinished(b *testing.B) {
	s := migratedStore(b)
	fillFinished(b, s, b.N)
	cutoff := time.Now().Add(-30 * 24 * time.Hour)
	b.ResetTimer()
	total := 0
	for {
		n, err := s.PruneFinished(b.Context(), cutoff, 1000)
		if err != nil {
			b.Fatal(err)
		}
		total += n
		if n < 1000 {
			break
		}
	}
	b.StopTimer()
	if total != b.N {
		b.Fatalf("pruned %d, want %d", total, b.N)
	}
}
