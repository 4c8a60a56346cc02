package postgres_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/heraldhq/herald/heraldtype"
	"github.com/heraldhq/herald/store"
	"github.com/heraldhq/herald/store/postgres"
	"github.com/heraldhq/herald/store/storetest"
)

// VacuumQueue leaves a queue with few dead rows alone and vacuums one
// whose claims and outcomes left thousands (store.QueueVacuumer): the
// machines Herald is tested on run PostgreSQL with autovacuum off, and a
// busy production queue can outrun autovacuum.
func TestVacuumQueue(t *testing.T) {
	t.Parallel()
	s := newStore(t)
	ctx := t.Context()
	if did, err := s.VacuumQueue(ctx); err != nil || did {
		t.Fatalf("VacuumQueue on an empty queue = %v, %v; want false", did, err)
	}
	// 6,000 deliveries claimed and sent: 12,000 dead row versions.
	fillQueue(t, s, 6, true)
	dead := func() int64 {
		var n int64
		if err := s.Pool().QueryRow(ctx, `SELECT n_dead_tup FROM pg_stat_user_tables
WHERE schemaname = $1 AND relname = 'deliveries'`, s.Schema()).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	vacuumOnce(t, s, func() string { return fmt.Sprintf("%d dead rows counted", dead()) })
	if n := dead(); n >= 10_000 {
		t.Fatalf("%d dead rows after VacuumQueue", n)
	}
	if did, err := s.VacuumQueue(ctx); err != nil || did {
		t.Fatalf("VacuumQueue right after a vacuum = %v, %v; want false", did, err)
	}
}

// The guard of an outcome write (state = 'leased' AND …) must not let the
// planner drive the write from an index of leased rows: after an ANALYZE
// that saw few of them it compared every leased row with every outcome of
// the batch (migration 0008). With statistics saying nothing is leased,
// the outcome-shaped join still probes the primary key.
func TestOutcomeGuardProbesPrimaryKey(t *testing.T) {
	t.Parallel()
	s := newStore(t)
	ctx := t.Context()
	// Statistics of a queue with 2,000 pending deliveries and none leased.
	fillQueue(t, s, 2, false)
	if _, err := s.Pool().Exec(ctx, `ANALYZE `+s.Schema()+`.deliveries`); err != nil {
		t.Fatal(err)
	}
	tx, err := s.Pool().Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(ctx)
	// As Complete plans it (indexPlans): no sequential or bitmap scans.
	if _, err := tx.Exec(ctx, `SELECT set_config('enable_seqscan', 'off', true), set_config('enable_bitmapscan', 'off', true),
	set_config('enable_hashjoin', 'off', true), set_config('enable_mergejoin', 'off', true)`); err != nil {
		t.Fatal(err)
	}
	var plan []string
	rows, err := tx.Query(ctx, `EXPLAIN UPDATE `+s.Schema()+`.deliveries d SET updated_at = o.at
FROM unnest($1::bigint[], $2::text[], $3::timestamptz[]) AS o (id, owner, at)
WHERE d.id = o.id AND d.state = 'leased' AND d.lease_owner = o.owner`,
		[]int64{1, 2, 3}, []string{"w", "w", "w"}, []time.Time{time.Now(), time.Now(), time.Now()})
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var line string
		if err := rows.Scan(&line); err != nil {
			t.Fatal(err)
		}
		plan = append(plan, line)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	joined := strings.Join(plan, "\n")
	if strings.Contains(joined, "deliveries_leased_until") || !strings.Contains(joined, "deliveries_pkey") {
		t.Fatalf("outcome guard plan does not probe the primary key:\n%s", joined)
	}
}

// fillQueue enqueues triggers × 1,000 push deliveries (100 notifications
// to a user with 10 devices) and, with send, claims and completes each
// trigger's as sent.
func fillQueue(t *testing.T, s *postgres.Store, triggers int, send bool) {
	t.Helper()
	ctx := t.Context()
	now := time.Date(2026, 11, 24, 9, 0, 0, 0, time.UTC)
	if _, err := s.UpsertUser(ctx, heraldtype.User{ID: "u", Timezone: "UTC"}, now); err != nil {
		t.Fatal(err)
	}
	const devices = 10
	for i := range devices {
		d := heraldtype.Device{ID: fmt.Sprint("d", i), UserID: "u", Platform: heraldtype.PlatformAndroid,
			Token: fmt.Sprint("tok", i), PushOptIn: true}
		if _, err := s.UpsertDevice(ctx, d, now, 0); err != nil {
			t.Fatal(err)
		}
	}
	for trigger := range triggers {
		ns := make([]heraldtype.Notification, 100)
		for i := range ns {
			ns[i] = heraldtype.Notification{ID: fmt.Sprintf("n%d-%d", trigger, i), UserID: "u", Type: "t", Title: "x",
				Channels: []heraldtype.Channel{heraldtype.ChannelPush}, Priority: heraldtype.PriorityNormal,
				PayloadMode: heraldtype.PayloadAlert, Guarantee: heraldtype.AtLeastOnce, CreatedAt: now}
		}
		if _, err := s.Enqueue(ctx, store.EnqueueParams{Notifications: ns, MaxAttempts: 3,
			PushProviders: storetest.Providers(), Now: now}); err != nil {
			t.Fatal(err)
		}
		if !send {
			continue
		}
		jobs, err := s.Claim(ctx, store.ClaimParams{Owner: "w", Now: now, LeaseUntil: now.Add(time.Minute), Limit: 1000})
		if err != nil || len(jobs) != 100*devices {
			t.Fatalf("Claim = %d jobs, %v", len(jobs), err)
		}
		os := make([]store.Outcome, len(jobs))
		for i, j := range jobs {
			os[i] = store.Outcome{DeliveryID: j.Delivery.ID, Owner: "w", Attempt: j.Delivery.Attempt,
				At: now}.To(store.Sent{})
		}
		if n, err := s.Complete(ctx, os); err != nil || n != len(os) {
			t.Fatalf("Complete = %d, %v", n, err)
		}
	}
}

// The leader's VACUUM runs throttled like autovacuum's, and the setting
// does not outlive it on the pooled connection it ran on.
func TestVacuumQueueThrottledAndReset(t *testing.T) {
	t.Parallel()
	s := newStoreConns(t, 1)
	ctx := t.Context()
	fillQueue(t, s, 6, true)
	vacuumOnce(t, s, func() string { return "" })
	// One connection: the one the VACUUM ran on.
	var delay string
	if err := s.Pool().QueryRow(ctx, `SHOW vacuum_cost_delay`).Scan(&delay); err != nil {
		t.Fatal(err)
	}
	if delay != "0" {
		t.Fatalf("vacuum_cost_delay = %q on the pooled connection after VacuumQueue, want it reset to 0", delay)
	}
	var vacuums int64
	if err := s.Pool().QueryRow(ctx, `SELECT vacuum_count FROM pg_stat_user_tables
WHERE schemaname = $1 AND relname = 'deliveries'`, s.Schema()).Scan(&vacuums); err != nil {
		t.Fatal(err)
	}
	if vacuums == 0 {
		t.Fatal("pg_stat_user_tables counts no vacuum of deliveries")
	}
}

// vacuumOnce calls VacuumQueue until it vacuums: the statistics it reads
// reach PostgreSQL's shared counters within about a second of each
// backend's transactions. state describes the queue for the failure.
func vacuumOnce(t *testing.T, s *postgres.Store, state func() string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		did, err := s.VacuumQueue(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		if did {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("VacuumQueue never vacuumed %s", state())
		}
		time.Sleep(200 * time.Millisecond)
	}
}
