package migrate_test

import (
	"context"
	"database/sql"
	"errors"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	_ "modernc.org/sqlite"

	"github.com/heraldhq/herald/store/migrate"
)

func openDB(t *testing.T) *sql.DB {
	t.Helper()
	db, err := sql.Open("sqlite", filepath.Join(t.TempDir(), "m.db")+"?_txlock=immediate")
	if err != nil {
		t.Fatal(err)
	}
	db.SetMaxOpenConns(1)
	t.Cleanup(func() { db.Close() })
	return db
}

func file(s string) *fstest.MapFile { return &fstest.MapFile{Data: []byte(s)} }

func tables(t *testing.T, db *sql.DB) []string {
	t.Helper()
	rows, err := db.Query(`SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var names []string
	for rows.Next() {
		var n string
		if err := rows.Scan(&n); err != nil {
			t.Fatal(err)
		}
		names = append(names, n)
	}
	return names
}

func TestLoad(t *testing.T) {
	ms, err := migrate.Load(fstest.MapFS{
		"0010_later.sql": file("x"),
		"0002_b.sql":     file("x"),
		"README.md":      file("not a migration"),
		"sub/0001_x.sql": file("directories are ignored"),
	})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, m := range ms {
		names = append(names, m.String())
	}
	if !slices.Equal(names, []string{"0002_b", "0010_later"}) {
		t.Fatalf("Load = %v", names)
	}
	for name, fsys := range map[string]fstest.MapFS{
		"bad name":  {"init.sql": file("x")},
		"zero":      {"0000_zero.sql": file("x")},
		"duplicate": {"0001_a.sql": file("x"), "1_b.sql": file("x")},
	} {
		if _, err := migrate.Load(fsys); err == nil {
			t.Errorf("%s: Load succeeded", name)
		}
	}
}

func TestRun(t *testing.T) {
	ctx := t.Context()
	db := openDB(t)
	fsys := fstest.MapFS{
		"0001_users.sql": file("CREATE TABLE users (id TEXT PRIMARY KEY);"),
		"0002_more.sql":  file("CREATE TABLE a (x INTEGER); CREATE TABLE b (y INTEGER);"),
	}
	pending, err := migrate.Pending(ctx, db, fsys, migrate.Options{})
	if err != nil || len(pending) != 2 {
		t.Fatalf("Pending = %v, %v", pending, err)
	}
	stamp := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	applied, err := migrate.Run(ctx, db, fsys, migrate.Options{Now: func() time.Time { return stamp }})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(applied, []string{"0001_users", "0002_more"}) {
		t.Fatalf("applied %v", applied)
	}
	if got := tables(t, db); !slices.Equal(got, []string{"a", "b", "schema_migrations", "users"}) {
		t.Fatalf("tables = %v", got)
	}
	var name, at string
	if err := db.QueryRow(`SELECT name, applied_at FROM schema_migrations WHERE version = 2`).Scan(&name, &at); err != nil {
		t.Fatal(err)
	}
	if name != "more" || at != "2026-01-02T03:04:05Z" {
		t.Fatalf("recorded %q at %q", name, at)
	}

	applied, err = migrate.Run(ctx, db, fsys, migrate.Options{})
	if err != nil || len(applied) != 0 {
		t.Fatalf("second Run = %v, %v; want nothing applied", applied, err)
	}
	fsys["0003_c.sql"] = file("CREATE TABLE c (z INTEGER);")
	pending, err = migrate.Pending(ctx, db, fsys, migrate.Options{})
	if err != nil || len(pending) != 1 || pending[0].Version != 3 {
		t.Fatalf("Pending = %v, %v", pending, err)
	}
	applied, err = migrate.Run(ctx, db, fsys, migrate.Options{})
	if err != nil || !slices.Equal(applied, []string{"0003_c"}) {
		t.Fatalf("Run after adding one = %v, %v", applied, err)
	}
}

func TestRunFailureRollsBack(t *testing.T) {
	ctx := t.Context()
	db := openDB(t)
	fsys := fstest.MapFS{
		"0001_ok.sql":     file("CREATE TABLE ok (x INTEGER);"),
		"0002_broken.sql": file("CREATE TABLE half (x INTEGER); CREATE TABLE oops (;"),
		"0003_never.sql":  file("CREATE TABLE never (x INTEGER);"),
	}
	applied, err := migrate.Run(ctx, db, fsys, migrate.Options{})
	if err == nil || !strings.Contains(err.Error(), "0002_broken") {
		t.Fatalf("Run error = %v, want one naming 0002_broken", err)
	}
	if !slices.Equal(applied, []string{"0001_ok"}) {
		t.Fatalf("applied %v before the failure", applied)
	}
	if got := tables(t, db); !slices.Equal(got, []string{"ok", "schema_migrations"}) {
		t.Fatalf("tables after the failure = %v (the broken migration must leave nothing)", got)
	}
	fsys["0002_broken.sql"] = file("CREATE TABLE fixed (x INTEGER);")
	applied, err = migrate.Run(ctx, db, fsys, migrate.Options{})
	if err != nil || !slices.Equal(applied, []string{"0002_broken", "0003_never"}) {
		t.Fatalf("Run after the fix = %v, %v", applied, err)
	}
}

func TestLock(t *testing.T) {
	ctx := t.Context()
	db := openDB(t)
	fsys := fstest.MapFS{"0001_a.sql": file("CREATE TABLE a (x INTEGER);")}
	var events []string
	opts := migrate.Options{
		Table: "my_migrations",
		Lock: func(ctx context.Context, conn *sql.Conn) (func() error, error) {
			events = append(events, "lock")
			return func() error { events = append(events, "unlock"); return nil }, nil
		},
	}
	applied, err := migrate.Run(ctx, db, fsys, opts)
	if err != nil || len(applied) != 1 {
		t.Fatalf("Run = %v, %v", applied, err)
	}
	if !slices.Equal(events, []string{"lock", "unlock"}) {
		t.Fatalf("lock events = %v", events)
	}
	if got := tables(t, db); !slices.Contains(got, "my_migrations") {
		t.Fatalf("tables = %v, want my_migrations", got)
	}

	failing := errors.New("lock held elsewhere")
	opts.Lock = func(context.Context, *sql.Conn) (func() error, error) { return nil, failing }
	if _, err := migrate.Run(ctx, db, fsys, opts); !errors.Is(err, failing) {
		t.Fatalf("Run with a failing lock = %v", err)
	}
	opts.Lock = func(context.Context, *sql.Conn) (func() error, error) {
		return func() error { return failing }, nil
	}
	if _, err := migrate.Run(ctx, db, fsys, opts); !errors.Is(err, failing) {
		t.Fatalf("Run with a failing unlock = %v", err)
	}
	if _, err := migrate.Run(ctx, db, fsys, migrate.Options{Table: "bad; DROP TABLE a"}); err == nil {
		t.Fatal("Run accepted a table name that is not an identifier")
	}
}
