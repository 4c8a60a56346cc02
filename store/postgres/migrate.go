package postgres

import (
	"context"
	"database/sql"
	"fmt"
	"hash/fnv"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/stdlib"

	"github.com/heraldhq/herald/store/migrate"
)

// Migrate creates the schema if it is absent and applies the embedded
// migrations that have not run yet, under a session advisory lock keyed by
// the schema, so instances starting together migrate one at a time and
// the later ones find nothing left to do.
//
// The migrations run on a connection of their own whose search_path is
// the schema, so the migration files name tables without it, and the
// schema_migrations table lives in the schema too.
func (s *Store) Migrate(ctx context.Context) error {
	cfg := s.connConfig.Copy()
	cfg.RuntimeParams["search_path"] = pgx.Identifier{s.schema}.Sanitize()
	db := stdlib.OpenDB(*cfg)
	defer db.Close()
	_, err := migrate.Run(ctx, db, Migrations(), migrate.Options{Lock: s.migrationLock})
	if err != nil {
		return fmt.Errorf("postgres: %w", err)
	}
	return nil
}

// migrationLock takes the schema's advisory lock on conn and creates the
// schema under it (two concurrent CREATE SCHEMA IF NOT EXISTS can both
// miss the schema and one then fails on the catalogue's unique index).
func (s *Store) migrationLock(ctx context.Context, conn *sql.Conn) (func() error, error) {
	key := advisoryKey("herald migrate " + s.schema)
	if _, err := conn.ExecContext(ctx, `SELECT pg_advisory_lock($1)`, key); err != nil {
		return nil, err
	}
	// The unlock runs on its own context: the run's may be cancelled, and
	// an unreleased session lock would outlive the run on a pooled
	// connection. (This connection is closed after the run anyway, which
	// releases the lock too.)
	unlock := func() error {
		_, err := conn.ExecContext(context.WithoutCancel(ctx), `SELECT pg_advisory_unlock($1)`, key)
		return err
	}
	if _, err := conn.ExecContext(ctx, `CREATE SCHEMA IF NOT EXISTS `+pgx.Identifier{s.schema}.Sanitize()); err != nil {
		return nil, fmt.Errorf("create schema %s: %w", s.schema, unlockAfter(err, unlock))
	}
	return unlock, nil
}

func unlockAfter(err error, unlock func() error) error {
	if uerr := unlock(); uerr != nil {
		return fmt.Errorf("%w (and unlock: %v)", err, uerr)
	}
	return err
}

// advisoryKey maps a name to the 64-bit key space of pg_advisory_lock.
func advisoryKey(name string) int64 {
	h := fnv.New64a()
	h.Write([]byte(name))
	return int64(h.Sum64())
}
