package postgres_test

import (
	"database/sql"
	"io/fs"
	"testing"
	"testing/fstest"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/stdlib"

	"github.com/heraldhq/herald/heraldtype"
	"github.com/heraldhq/herald/store"
	"github.com/heraldhq/herald/store/migrate"
	"github.com/heraldhq/herald/store/postgres"
	"github.com/heraldhq/herald/store/postgres/pgtest"
)

// TestMigrationKeepsIdempotencyRecords: an idempotency record written
// before keys had namespaces (issue 23) still replays, in the default
// empty namespace, and its key is free in any other namespace.
func TestMigrationKeepsIdempotencyRecords(t *testing.T) {
	ctx := t.Context()
	db, dsn, schema := migratedBelow(t, "0011")
	for _, q := range []string{
		`INSERT INTO users (id, timezone, created_at, updated_at) VALUES ('u1', 'UTC', now(), now())`,
		`INSERT INTO notifications (id, user_id, type, channels, priority, payload_mode, guarantee, idempotency_key, created_at)
			VALUES ('n1', 'u1', 't', '{push}', 'NORMAL', 'alert', 'at_least_once', 'order-1001', now())`,
		`INSERT INTO triggers (idempotency_key, request_hash, notification_ids, created_at)
			VALUES ('order-1001', 'h', '{n1}', now())`,
	} {
		if _, err := db.ExecContext(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	s := openStore(t, dsn, schema)
	if err := s.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	now := time.Now().UTC()
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

// migratedBelow gives a test a schema of its own migrated by every
// migration numbered below version only — the database as a release before
// that migration left it — and a connection whose search_path is it.
func migratedBelow(t *testing.T, version string) (db *sql.DB, dsn, schema string) {
	t.Helper()
	dsn, schema = pgtest.NewSchema(t)
	cfg, err := pgx.ParseConfig(dsn)
	if err != nil {
		t.Fatal(err)
	}
	cfg.RuntimeParams["search_path"] = pgx.Identifier{schema}.Sanitize()
	db = stdlib.OpenDB(*cfg)
	t.Cleanup(func() { db.Close() })
	if _, err := db.ExecContext(t.Context(), `CREATE SCHEMA `+pgx.Identifier{schema}.Sanitize()); err != nil {
		t.Fatal(err)
	}
	before := fstest.MapFS{}
	err = fs.WalkDir(postgres.Migrations(), ".", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || path >= version {
			return err
		}
		b, err := fs.ReadFile(postgres.Migrations(), path)
		before[path] = &fstest.MapFile{Data: b}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := migrate.Run(t.Context(), db, before, migrate.Options{}); err != nil {
		t.Fatal(err)
	}
	return db, dsn, schema
}
