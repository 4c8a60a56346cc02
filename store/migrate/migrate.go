// Package migrate applies versioned SQL migrations kept in an fs.FS
// (usually an embed.FS) to a database/sql database. It is small on purpose
// and shared by every store: each store embeds its own folder of
// migrations and supplies a lock suited to its database (PostgreSQL an
// advisory lock; SQLite needs none, because its write transactions already
// run one at a time).
//
// A migration is a file named NNNN_name.sql (a positive decimal version,
// an underscore, a name). Migrations run in version order, each in its own
// transaction together with its row in the migrations table, so a failed
// migration leaves nothing behind and a run can simply be repeated.
package migrate

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"regexp"
	"slices"
	"strconv"
	"time"
)

// DefaultTable is the name of the table recording applied migrations.
const DefaultTable = "schema_migrations"

// Migration is one migration file.
type Migration struct {
	Version int64
	Name    string
	// File is the path of the migration in the fs.FS.
	File string
}

// String returns the migration's file name without the ".sql" suffix, the
// form Run reports.
func (m Migration) String() string {
	return fmt.Sprintf("%04d_%s", m.Version, m.Name)
}

// Options parameterise Run and Pending. The zero value is usable.
type Options struct {
	// Table records applied migrations; DefaultTable if empty. It must be a
	// plain SQL identifier because it is written into the statements.
	Table string
	// Lock, if set, is called on the connection the migrations will run on
	// before anything is read, and the function it returns is called when
	// the run ends. PostgreSQL uses it to take a session advisory lock so
	// that two instances starting together do not race.
	Lock func(ctx context.Context, conn *sql.Conn) (unlock func() error, err error)
	// Now stamps applied_at; time.Now if nil.
	Now func() time.Time
}

var (
	fileRE  = regexp.MustCompile(`^([0-9]+)_([A-Za-z0-9_\-]+)\.sql$`)
	identRE = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)
)

// Dir is the directory dir of fsys, for the migrations a store embeds:
// fs.Sub fails only on an invalid name, a programming error, so Dir
// panics then.
func Dir(fsys fs.FS, dir string) fs.FS {
	sub, err := fs.Sub(fsys, dir)
	if err != nil {
		panic(err)
	}
	return sub
}

// Load lists the migrations at the root of fsys in version order. Files
// that do not end in ".sql" are ignored; a ".sql" file with a malformed
// name, a version of zero or a duplicated version is an error, so a typo
// never silently skips a migration.
func Load(fsys fs.FS) ([]Migration, error) {
	entries, err := fs.ReadDir(fsys, ".")
	if err != nil {
		return nil, fmt.Errorf("migrate: read migrations: %w", err)
	}
	var ms []Migration
	seen := make(map[int64]string)
	for _, e := range entries {
		name := e.Name()
		if e.IsDir() || len(name) < 4 || name[len(name)-4:] != ".sql" {
			continue
		}
		m := fileRE.FindStringSubmatch(name)
		if m == nil {
			return nil, fmt.Errorf("migrate: %q is not named NNNN_name.sql", name)
		}
		v, err := strconv.ParseInt(m[1], 10, 64)
		if err != nil || v <= 0 {
			return nil, fmt.Errorf("migrate: %q: version must be a positive number", name)
		}
		if other, dup := seen[v]; dup {
			return nil, fmt.Errorf("migrate: %q and %q share version %d", other, name, v)
		}
		seen[v] = name
		ms = append(ms, Migration{Version: v, Name: m[2], File: name})
	}
	slices.SortFunc(ms, func(a, b Migration) int {
		switch {
		case a.Version < b.Version:
			return -1
		case a.Version > b.Version:
			return 1
		}
		return 0
	})
	return ms, nil
}

// Run applies the migrations of fsys that have not been applied yet and
// returns the ones it applied (as "NNNN_name"), in order. Every migration
// runs in its own transaction with the insertion of its row; before
// running, the transaction checks the row again, so a concurrent runner
// that got there first (without a Lock) makes this one skip, not fail.
func Run(ctx context.Context, db *sql.DB, fsys fs.FS, opts Options) (applied []string, err error) {
	ms, err := Load(fsys)
	if err != nil {
		return nil, err
	}
	table, err := opts.table()
	if err != nil {
		return nil, err
	}
	conn, unlock, err := opts.acquire(ctx, db)
	if err != nil {
		return nil, err
	}
	defer func() {
		if uerr := unlock(); uerr != nil && err == nil {
			err = fmt.Errorf("migrate: unlock: %w", uerr)
		}
		conn.Close()
	}()
	if err := createTable(ctx, conn, table); err != nil {
		return nil, err
	}
	done, err := appliedVersions(ctx, conn, table)
	if err != nil {
		return nil, err
	}
	now := time.Now
	if opts.Now != nil {
		now = opts.Now
	}
	for _, m := range ms {
		if done[m.Version] {
			continue
		}
		ran, err := apply(ctx, conn, fsys, table, m, now())
		if err != nil {
			return applied, err
		}
		if ran {
			applied = append(applied, m.String())
		}
	}
	return applied, nil
}

// Pending returns the migrations of fsys that Run would apply now. A
// database without the migrations table has every migration pending.
func Pending(ctx context.Context, db *sql.DB, fsys fs.FS, opts Options) ([]Migration, error) {
	ms, err := Load(fsys)
	if err != nil {
		return nil, err
	}
	table, err := opts.table()
	if err != nil {
		return nil, err
	}
	conn, err := db.Conn(ctx)
	if err != nil {
		return nil, fmt.Errorf("migrate: connect: %w", err)
	}
	defer conn.Close()
	// Creating the (empty) table is harmless and avoids a per-database
	// query of the catalogue to ask whether it exists.
	if err := createTable(ctx, conn, table); err != nil {
		return nil, err
	}
	done, err := appliedVersions(ctx, conn, table)
	if err != nil {
		return nil, err
	}
	var pending []Migration
	for _, m := range ms {
		if !done[m.Version] {
			pending = append(pending, m)
		}
	}
	return pending, nil
}

func (o Options) table() (string, error) {
	if o.Table == "" {
		return DefaultTable, nil
	}
	if !identRE.MatchString(o.Table) {
		return "", fmt.Errorf("migrate: table name %q is not a plain identifier", o.Table)
	}
	return o.Table, nil
}

// acquire takes one connection for the whole run, so that a session lock
// taken by Lock covers every migration, and so that a pool limited to one
// connection (SQLite's writer) does not deadlock.
func (o Options) acquire(ctx context.Context, db *sql.DB) (*sql.Conn, func() error, error) {
	conn, err := db.Conn(ctx)
	if err != nil {
		return nil, nil, fmt.Errorf("migrate: connect: %w", err)
	}
	if o.Lock == nil {
		return conn, func() error { return nil }, nil
	}
	unlock, err := o.Lock(ctx, conn)
	if err != nil {
		conn.Close()
		return nil, nil, fmt.Errorf("migrate: lock: %w", err)
	}
	if unlock == nil {
		unlock = func() error { return nil }
	}
	return conn, unlock, nil
}

// createTable uses only types every supported database understands;
// applied_at is RFC 3339 text so that it reads the same everywhere.
func createTable(ctx context.Context, conn *sql.Conn, table string) error {
	_, err := conn.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS `+table+` (
	version BIGINT PRIMARY KEY,
	name TEXT NOT NULL,
	applied_at TEXT NOT NULL
)`)
	if err != nil {
		return fmt.Errorf("migrate: create %s: %w", table, err)
	}
	return nil
}

func appliedVersions(ctx context.Context, conn *sql.Conn, table string) (map[int64]bool, error) {
	rows, err := conn.QueryContext(ctx, `SELECT version FROM `+table)
	if err != nil {
		return nil, fmt.Errorf("migrate: read %s: %w", table, err)
	}
	defer rows.Close()
	done := make(map[int64]bool)
	for rows.Next() {
		var v int64
		if err := rows.Scan(&v); err != nil {
			return nil, fmt.Errorf("migrate: read %s: %w", table, err)
		}
		done[v] = true
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("migrate: read %s: %w", table, err)
	}
	return done, nil
}

// apply runs one migration in its own transaction. It reports false when
// the migration turned out to be applied already.
func apply(ctx context.Context, conn *sql.Conn, fsys fs.FS, table string, m Migration, now time.Time) (ran bool, err error) {
	body, err := fs.ReadFile(fsys, m.File)
	if err != nil {
		return false, fmt.Errorf("migrate: read %s: %w", m.File, err)
	}
	tx, err := conn.BeginTx(ctx, nil)
	if err != nil {
		return false, fmt.Errorf("migrate: %s: begin: %w", m, err)
	}
	defer func() {
		if err != nil {
			err = errors.Join(err, ignoreDone(tx.Rollback()))
		}
	}()
	var one int
	err = tx.QueryRowContext(ctx, `SELECT 1 FROM `+table+` WHERE version = $1`, m.Version).Scan(&one)
	switch {
	case err == nil:
		return false, tx.Rollback()
	case !errors.Is(err, sql.ErrNoRows):
		return false, fmt.Errorf("migrate: %s: %w", m, err)
	}
	if _, err := tx.ExecContext(ctx, string(body)); err != nil {
		return false, fmt.Errorf("migrate: %s: %w", m, err)
	}
	_, err = tx.ExecContext(ctx, `INSERT INTO `+table+` (version, name, applied_at) VALUES ($1, $2, $3)`,
		m.Version, m.Name, now.UTC().Format(time.RFC3339Nano))
	if err != nil {
		return false, fmt.Errorf("migrate: %s: record: %w", m, err)
	}
	if err := tx.Commit(); err != nil {
		return false, fmt.Errorf("migrate: %s: commit: %w", m, err)
	}
	return true, nil
}

func ignoreDone(err error) error {
	if errors.Is(err, sql.ErrTxDone) {
		return nil
	}
	return err
}
