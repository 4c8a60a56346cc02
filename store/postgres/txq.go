package postgres

import (
	"context"
	"database/sql"

	"github.com/jackc/pgx/v5"
)

// txQuerier runs statements on a transaction of either kind EnqueueTx
// accepts: a pgx.Tx, or a *sql.Tx of pgx's database/sql driver (whose
// arguments reach pgx unchanged, so arrays encode the same way). Only
// what enqueue needs is here: statements, and rows of scalar columns.
type txQuerier interface {
	exec(ctx context.Context, query string, args ...any) error
	query(ctx context.Context, query string, args ...any) (txRows, error)
}

// txRows is the common part of pgx.Rows and *sql.Rows.
type txRows interface {
	Next() bool
	Scan(dest ...any) error
	Err() error
	Close()
}

type pgxQuerier struct{ tx pgx.Tx }

func (q pgxQuerier) exec(ctx context.Context, query string, args ...any) error {
	_, err := q.tx.Exec(ctx, query, args...)
	return err
}

func (q pgxQuerier) query(ctx context.Context, query string, args ...any) (txRows, error) {
	return q.tx.Query(ctx, query, args...)
}

type sqlQuerier struct{ tx *sql.Tx }

func (q sqlQuerier) exec(ctx context.Context, query string, args ...any) error {
	_, err := q.tx.ExecContext(ctx, query, args...)
	return err
}

func (q sqlQuerier) query(ctx context.Context, query string, args ...any) (txRows, error) {
	rows, err := q.tx.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	return sqlRows{rows}, nil
}

// sqlRows drops the error of Close, which Err reports as well.
type sqlRows struct{ *sql.Rows }

func (r sqlRows) Close() { r.Rows.Close() }
