package postgres

import (
	"context"
	"database/sql"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
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

// pgxQuerier runs on a pgx.Tx or a *pgx.Conn inside a transaction.
type pgxQuerier struct {
	tx interface {
		Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error)
		Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
	}
}

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

// step is one statement of an enqueue and what reads its rows (nil: a
// statement without rows to read). Built from the trigger alone, the steps
// of one enqueue run one by one on a caller's transaction (runSteps) or
// pipelined in one round trip (runPipeline). what names the object in
// error messages.
type step struct {
	sql  string
	args []any
	read func(rows txRows) error
	what string
	// mapErr, if set, sees the statement's error before formatError.
	mapErr func(error) error
}

// fail formats the error of st's statement.
func (st step) fail(err error) error {
	if st.mapErr != nil {
		err = st.mapErr(err)
	}
	return formatError(err, st.what)
}

// runSteps runs steps one by one on q, stopping at the first error.
func runSteps(ctx context.Context, q txQuerier, steps []step) error {
	for _, st := range steps {
		if st.read == nil {
			if err := q.exec(ctx, st.sql, st.args...); err != nil {
				return st.fail(err)
			}
			continue
		}
		rows, err := q.query(ctx, st.sql, st.args...)
		if err != nil {
			return st.fail(err)
		}
		if err := readStep(st, rows); err != nil {
			return err
		}
	}
	return nil
}

// runPipeline sends steps to c in one round trip and reads their results
// in order, returning the first error. PostgreSQL skips every statement
// after a failed one, so with a BEGIN among the steps nothing after the
// failure is applied and the transaction is left failed for the caller to
// roll back.
func runPipeline(ctx context.Context, c *pgx.Conn, steps []step) error {
	b := &pgx.Batch{}
	for _, st := range steps {
		b.Queue(st.sql, st.args...)
	}
	br := c.SendBatch(ctx, b)
	err := readPipeline(br, steps)
	if cerr := br.Close(); err == nil && cerr != nil {
		err = formatError(cerr, "transaction")
	}
	return err
}

func readPipeline(br pgx.BatchResults, steps []step) error {
	for _, st := range steps {
		if st.read == nil {
			if _, err := br.Exec(); err != nil {
				return st.fail(err)
			}
			continue
		}
		rows, err := br.Query()
		if err != nil {
			return st.fail(err)
		}
		if err := readStep(st, rows); err != nil {
			return err
		}
	}
	return nil
}

// readStep reads and closes the rows of st.
func readStep(st step, rows txRows) error {
	err := st.read(rows)
	rows.Close()
	if err == nil {
		err = rows.Err()
	}
	if err == nil {
		return nil
	}
	return st.fail(err)
}
