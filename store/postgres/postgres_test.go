package postgres_test

import (
	"testing"

	"github.com/heraldhq/herald/store"
	"github.com/heraldhq/herald/store/postgres"
	"github.com/heraldhq/herald/store/postgres/pgtest"
	"github.com/heraldhq/herald/store/storetest"
)

// openStore opens a store on the schema (not migrated).
func openStore(t testing.TB, dsn, schema string) *postgres.Store {
	t.Helper()
	return openStoreConns(t, dsn, schema, 8)
}

// openStoreConns is openStore with a pool of conns connections.
func openStoreConns(t testing.TB, dsn, schema string, conns int32) *postgres.Store {
	t.Helper()
	s, err := postgres.Open(t.Context(), dsn, postgres.Options{Schema: schema, MaxConns: conns})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return s
}

// newStore opens a migrated store on a fresh schema.
func newStore(t testing.TB) *postgres.Store {
	t.Helper()
	return newStoreConns(t, 8)
}

// newStoreConns is newStore with a pool of conns connections.
func newStoreConns(t testing.TB, conns int32) *postgres.Store {
	t.Helper()
	dsn, schema := pgtest.NewSchema(t)
	s := openStoreConns(t, dsn, schema, conns)
	if err := s.Migrate(t.Context()); err != nil {
		t.Fatal(err)
	}
	return s
}

func TestConformance(t *testing.T) {
	storetest.Run(t, storetest.Harness{
		New: func(t *testing.T) store.Store { return newStore(t) },
		BeginTx: func(t *testing.T, s store.Store) (any, func() error, func() error) {
			tx, err := s.(*postgres.Store).Pool().Begin(t.Context())
			if err != nil {
				t.Fatal(err)
			}
			ctx := t.Context()
			return tx, func() error { return tx.Commit(ctx) }, func() error { return tx.Rollback(ctx) }
		},
	})
}
