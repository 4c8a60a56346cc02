// Package pgtest gives tests a PostgreSQL database of their own: the
// server at 127.0.0.1:5432 (HERALD_TEST_DATABASE_URL overrides it) and a
// fresh schema per test, dropped when the test ends. Without a server the
// tests are skipped with a message saying how to enable them — unless
// CI=true, where a missing database is a failure, not a reason to skip.
package pgtest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"os"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/heraldhq/herald/internal/redact"
)

// EnvDSN names the environment variable that overrides DefaultDSN.
const EnvDSN = "HERALD_TEST_DATABASE_URL"

// DefaultDSN is the database the tests use when EnvDSN is unset.
const DefaultDSN = "postgres://postgres@127.0.0.1:5432/test"

// DSN returns the test database's URL once it answers; otherwise it skips
// t, or fails it when the CI environment variable is "true".
func DSN(t testing.TB) string {
	t.Helper()
	dsn := os.Getenv(EnvDSN)
	if dsn == "" {
		dsn = DefaultDSN
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, dsn)
	if err == nil {
		err = conn.Ping(ctx)
		conn.Close(ctx)
	}
	if err != nil {
		msg := "PostgreSQL not reachable at " + redact.DSN(dsn) + " (" + err.Error() + "); start it or set " + EnvDSN
		if os.Getenv("CI") == "true" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	return dsn
}

// NewSchema returns the test database's URL and the name of a schema no
// other test uses (it does not exist yet: Migrate creates it). The schema
// is dropped, with everything in it, when t ends.
func NewSchema(t testing.TB) (dsn, schema string) {
	t.Helper()
	dsn = DSN(t)
	b := make([]byte, 6)
	rand.Read(b)
	schema = "herald_test_" + hex.EncodeToString(b)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		conn, err := pgx.Connect(ctx, dsn)
		if err != nil {
			t.Errorf("pgtest: drop schema %s: %v", schema, err)
			return
		}
		defer conn.Close(ctx)
		if _, err := conn.Exec(ctx, `DROP SCHEMA IF EXISTS `+schema+` CASCADE`); err != nil {
			t.Errorf("pgtest: drop schema %s: %v", schema, err)
		}
	})
	return dsn, schema
}
