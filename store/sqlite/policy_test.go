package sqlite_test

import (
	"io/fs"
	"path/filepath"
	"testing"
	"testing/fstest"

	"github.com/heraldhq/herald/heraldtype"
	"github.com/heraldhq/herald/internal/policy"
	"github.com/heraldhq/herald/internal/policy/policytest"
	"github.com/heraldhq/herald/store/migrate"
	"github.com/heraldhq/herald/store/sqlite"
)

// TestLimiter runs the Limiter suite on SQLite, the default policy store.
func TestLimiter(t *testing.T) {
	policytest.Run(t, policytest.Harness{New: func(t *testing.T) policy.Limiter { return newStore(t) }})
}

// TestMigrationKeepsDeliveries checks the rebuild of deliveries in
// 0005_policy.sql: rows and attempt timelines survive, and the id
// high-water mark too (an id is part of data.messageId, S0.5).
func TestMigrationKeepsDeliveries(t *testing.T) {
	ctx := t.Context()
	s, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "herald.db"), sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	before := fstest.MapFS{}
	err = fs.WalkDir(sqlite.Migrations(), ".", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || path >= "0005" {
			return err
		}
		b, err := fs.ReadFile(sqlite.Migrations(), path)
		before[path] = &fstest.MapFile{Data: b}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := migrate.Run(ctx, s.DB(), before, migrate.Options{}); err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{
		`INSERT INTO users (id, timezone, created_at, updated_at) VALUES ('u1', 'UTC', 0, 0)`,
		`INSERT INTO notifications (id, user_id, type, channels, priority, payload_mode, guarantee, created_at)
			VALUES ('n1', 'u1', 't', '["push"]', 'NORMAL', 'alert', 'at_least_once', 0)`,
		`INSERT INTO deliveries (notification_id, user_id, type, channel, provider, state, guarantee, max_attempts,
			run_at, created_at, updated_at) VALUES ('n1', 'u1', 't', 'push', 'fcm', 'dead', 'at_least_once', 3, 0, 0, 0),
			('n1', 'u1', 't', 'push', 'fcm', 'pending', 'at_least_once', 3, 0, 0, 0)`,
		`INSERT INTO delivery_attempts (delivery_id, attempt, at, outcome) VALUES (1, 1, 1, 'retry'), (1, 2, 2, 'dead')`,
		`DELETE FROM deliveries WHERE id = 2`,
	} {
		if _, err := s.DB().ExecContext(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	if err := s.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	ds, err := s.ListNotificationDeliveries(ctx, "n1")
	if err != nil {
		t.Fatal(err)
	}
	if len(ds) != 1 || ds[0].ID != 1 || ds[0].State != heraldtype.StateDead || len(ds[0].Attempts) != 2 ||
		ds[0].Attempts[0].Outcome != heraldtype.OutcomeRetry || ds[0].Attempts[1].Outcome != heraldtype.OutcomeDead {
		t.Fatalf("after the migration: %+v", ds)
	}
	var id int64
	err = s.DB().QueryRowContext(ctx, `INSERT INTO deliveries (notification_id, user_id, type, channel, provider, state,
		guarantee, max_attempts, run_at, created_at, updated_at)
		VALUES ('n1', 'u1', 't', 'push', 'fcm', 'rate_limited', 'at_least_once', 3, 0, 0, 0) RETURNING id`).Scan(&id)
	if err != nil || id != 3 {
		t.Fatalf("a new delivery after the migration got id %d (%v), want 3: ids are never reused", id, err)
	}
}
