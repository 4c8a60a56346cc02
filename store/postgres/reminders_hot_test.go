package postgres_test

import (
	"testing"
	"time"

	"github.com/heraldhq/herald/heraldtype"
	"github.com/heraldhq/herald/store"
	"github.com/heraldhq/herald/store/postgres"
)

// bulkReminders writes n active reminders of user u, due at due, by one
// INSERT: the rows a bulk import (or a benchmark's setup) leaves, side by
// side on their pages.
func bulkReminders(t *testing.T, s *postgres.Store, n int, due time.Time) {
	t.Helper()
	ctx := t.Context()
	if _, err := s.UpsertUser(ctx, heraldtype.User{ID: "u", Timezone: "UTC"}, due); err != nil {
		t.Fatal(err)
	}
	_, err := s.Pool().Exec(ctx, `INSERT INTO `+s.Schema()+`.reminders (id, key, user_id, type, channels, schedule,
	state, schedule_start, next_at, version, created_at, updated_at)
SELECT 'rem-' || i, 'r' || i, 'u', 'nudge', '{in_app}', '{}', 'active', $2, $2, 1, $2, $2
FROM generate_series(1, $1) i`, n, due)
	if err != nil {
		t.Fatal(err)
	}
}

// reminderStat polls the reminders' row in pg_stat_user_tables until
// done accepts its column (the counters reach it within seconds of each
// backend's transactions).
func reminderStat(t *testing.T, s *postgres.Store, column string, done func(int64) bool) int64 {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		var n int64
		if err := s.Pool().QueryRow(t.Context(), `SELECT `+column+` FROM pg_stat_user_tables
WHERE schemaname = $1 AND relname = 'reminders'`, s.Schema()).Scan(&n); err != nil {
			t.Fatal(err)
		}
		if done(n) || time.Now().After(deadline) {
			return n
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// A claim writes only the lease, which no index of reminders names, onto
// pages kept half free (migration 0021): every claim of a page's rows
// together is a HOT update, one that writes no index entry and leaves no
// second dead entry at the head of reminders_due for the claims after it.
func TestReminderClaimIsHOT(t *testing.T) {
	t.Parallel()
	s := newStore(t)
	now := time.Date(2026, 11, 26, 9, 0, 0, 0, time.UTC)
	const n = 40
	bulkReminders(t, s, n, now)
	claims, err := s.ClaimReminders(t.Context(), store.ReminderClaimParams{Owner: "s1", Now: now,
		LeaseUntil: now.Add(30 * time.Second), Limit: n})
	if err != nil {
		t.Fatal(err)
	}
	if len(claims) != n {
		t.Fatalf("claimed %d reminders, want %d", len(claims), n)
	}
	if hot := reminderStat(t, s, "n_tup_hot_upd", func(v int64) bool { return v >= n }); hot != n {
		t.Fatalf("%d of %d claims were HOT updates", hot, n)
	}
}

// The leader's vacuum takes in the reminders as well as the queue: each
// fire leaves a dead entry at the head of reminders_due, which every
// claim after it steps over until a vacuum removes it.
func TestVacuumQueueReminders(t *testing.T) {
	t.Parallel()
	s := newStore(t)
	bulkReminders(t, s, 10_000, time.Date(2026, 11, 26, 9, 0, 0, 0, time.UTC))
	reminderStat(t, s, "n_ins_since_vacuum", func(v int64) bool { return v >= 10_000 })
	vacuumOnce(t, s, func() string { return "10,000 reminders inserted" })
	if n := reminderStat(t, s, "vacuum_count", func(v int64) bool { return v > 0 }); n == 0 {
		t.Fatal("pg_stat_user_tables counts no vacuum of reminders")
	}
}
