package sqlite_test

import (
	"io/fs"
	"path/filepath"
	"testing"
	"testing/fstest"
	"time"

	"github.com/heraldhq/herald/heraldtype"
	"github.com/heraldhq/herald/store"
	"github.com/heraldhq/herald/store/migrate"
	"github.com/heraldhq/herald/store/sqlite"
)

// TestMigrationKeepsIdempotencyRecords: an idempotency record written
// before keys had namespaces (issue 23) still replays, in the default
// empty namespace, and its key is free in any other namespace.
func TestMigrationKeepsIdempotencyRecords(t *testing.T) {
	ctx := t.Context()
	s := migratedBelow(t, "0007")
	for _, q := range []string{
		`INSERT INTO users (id, timezone, created_at, updated_at) VALUES ('u1', 'UTC', 0, 0)`,
		`INSERT INTO notifications (id, user_id, type, channels, priority, payload_mode, guarantee, idempotency_key, created_at)
			VALUES ('n1', 'u1', 't', '["push"]', 'NORMAL', 'alert', 'at_least_once', 'order-1001', 0)`,
		`INSERT INTO triggers (idempotency_key, request_hash, notification_ids, created_at)
			VALUES ('order-1001', 'h', '["n1"]', 0)`,
	} {
		if _, err := s.DB().ExecContext(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	if err := s.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	now := time.Unix(60, 0).UTC()
	trigger := func(namespace, id string) store.EnqueueParams {
		return store.EnqueueParams{IdempotencyNamespace: namespace, IdempotencyKey: "order-1001", RequestHash: "h",
			MaxAttempts: 3, Now: now, Notifications: []heraldtype.Notification{{ID: id, UserID: "u1", Type: "t",
				Channels: []heraldtype.Channel{heraldtype.ChannelPush}, Priority: heraldtype.PriorityNormal,
				PayloadMode: heraldtype.PayloadAlert, Guarantee: heraldtype.AtLeastOnce, CreatedAt: now}}}
	}
	res, err := s.Enqueue(ctx, trigger("", "n2"))
	if err != nil || !res.Replayed || len(res.Notifications) != 1 || res.Notifications[0].ID != "n1" {
		t.Fatalf("replay of a record from before the migration = %+v, %v; want n1 replayed", res, err)
	}
	res, err = s.Enqueue(ctx, trigger("key-b", "n3"))
	if err != nil || res.Replayed || len(res.Notifications) != 1 || res.Notifications[0].ID != "n3" {
		t.Fatalf("the same key in another namespace = %+v, %v; want n3 written", res, err)
	}
}

// migratedBelow opens a store on a fresh file migrated by every migration
// numbered below version only — the database as a release before that
// migration left it. The store is closed when t ends.
func migratedBelow(t *testing.T, version string) *sqlite.Store {
	t.Helper()
	s, err := sqlite.Open(t.Context(), filepath.Join(t.TempDir(), "herald.db"), sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	before := fstest.MapFS{}
	err = fs.WalkDir(sqlite.Migrations(), ".", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || path >= version {
			return err
		}
		b, err := fs.ReadFile(sqlite.Migrations(), path)
		before[path] = &fstest.MapFile{Data: b}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := migrate.Run(t.Context(), s.DB(), before, migrate.Options{}); err != nil {
		t.Fatal(err)
	}
	return s
}

// TestMigrationCancellationKeepsTheTimeline: 0031 rebuilds deliveries for
// the state cancelled (issue 36 item 4); the deliveries, their attempts in
// order, the AUTOINCREMENT high-water mark and the engagement counts stay
// as they were — putting the attempts back does not count their sends
// again — and the engagement trigger works afterwards.
func TestMigrationCancellationKeepsTheTimeline(t *testing.T) {
	ctx := t.Context()
	s := migratedBelow(t, "0031")
	for _, q := range []string{
		`INSERT INTO users (id, timezone, created_at, updated_at) VALUES ('u1', 'UTC', 0, 0)`,
		`INSERT INTO notifications (id, user_id, type, channels, priority, payload_mode, guarantee, created_at)
			VALUES ('n1', 'u1', 't', '["push"]', 'NORMAL', 'alert', 'at_least_once', 0)`,
		`INSERT INTO deliveries (id, notification_id, user_id, type, channel, provider, state, guarantee, max_attempts, run_at,
			created_at, updated_at) VALUES (41, 'n1', 'u1', 't', 'push', 'fcm', 'sent', 'at_least_once', 3, 0, 0, 0)`,
		`INSERT INTO delivery_attempts (delivery_id, attempt, at, outcome, error_code) VALUES (41, 1, 1, 'retry', 'UNAVAILABLE')`,
		`INSERT INTO delivery_attempts (delivery_id, attempt, at, outcome) VALUES (41, 2, 2, 'sent')`,
	} {
		if _, err := s.DB().ExecContext(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	sentCount := func() int {
		t.Helper()
		var n int
		if err := s.DB().QueryRowContext(ctx, `SELECT coalesce(sum(n), 0) FROM engagement_counts WHERE event = 'sent'`).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	if n := sentCount(); n != 1 {
		t.Fatalf("engagement before the migration: %d sends, want 1", n)
	}
	if err := s.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	if n := sentCount(); n != 1 {
		t.Errorf("engagement after the migration: %d sends, want 1 (not counted again)", n)
	}
	d, err := s.GetDelivery(ctx, 41)
	if err != nil || d.State != heraldtype.StateSent || len(d.Attempts) != 2 || d.Attempts[0].Outcome != heraldtype.OutcomeRetry ||
		d.Attempts[1].Outcome != heraldtype.OutcomeSent {
		t.Fatalf("delivery after the migration = %+v, %v", d, err)
	}
	if _, err := s.DB().ExecContext(ctx, `INSERT INTO deliveries (notification_id, user_id, type, channel, provider, state,
		guarantee, max_attempts, run_at, created_at, updated_at) VALUES ('n1', 'u1', 't', 'push', 'fcm', 'cancelled',
		'at_least_once', 3, 0, 0, 0)`); err != nil {
		t.Fatalf("a cancelled delivery after the migration: %v", err)
	}
	var id int64
	if err := s.DB().QueryRowContext(ctx, `SELECT max(id) FROM deliveries`).Scan(&id); err != nil || id != 42 {
		t.Errorf("the next delivery id = %d, %v; want 42 (the sequence carried over)", id, err)
	}
	if _, err := s.DB().ExecContext(ctx, `INSERT INTO delivery_attempts (delivery_id, attempt, at, outcome) VALUES (42, 1, 3, 'sent')`); err != nil {
		t.Fatal(err)
	}
	if n := sentCount(); n != 2 {
		t.Errorf("engagement after a send following the migration: %d, want 2 (the trigger is back)", n)
	}
}
