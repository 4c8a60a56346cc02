// Package sqlite is Herald's embedded store: store.Store on a single SQLite
// file through the pure-Go modernc.org/sqlite driver (no cgo).
//
// SQLite allows one writer at a time, so the Store keeps two pools: a write
// pool of exactly one connection, whose transactions begin IMMEDIATE (the
// write lock is taken at BEGIN, so a transaction never fails half-way on a
// lock upgrade), and a read pool of several query-only connections that WAL
// lets run beside the writer. Writers queue in Go for the single write
// connection instead of spinning on SQLITE_BUSY; busy_timeout still covers
// other processes opening the same file. Write transactions are kept short:
// every hot operation (enqueue, claim, complete) is a handful of prepared
// statements in one transaction.
package sqlite

import (
	"context"
	"database/sql"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"

	"github.com/heraldhq/herald/heraldtype"
	"github.com/heraldhq/herald/store"
	"github.com/heraldhq/herald/store/migrate"
)

//go:embed migrations/*.sql
var migrationFiles embed.FS

var _ store.Store = (*Store)(nil)

// Options configure Open. The zero value gives the defaults.
type Options struct {
	// BusyTimeout is how long a connection waits for a lock held by
	// another process before failing with SQLITE_BUSY. Default 5 s.
	BusyTimeout time.Duration
	// ReadConns is the size of the read pool. Default 4.
	ReadConns int
}

// Store is store.Store on SQLite. It is safe for concurrent use.
type Store struct {
	write *sql.DB
	read  *sql.DB
	// stmts holds the prepared statements of the write connection, so the
	// hot path compiles its SQL once per process, not once per call.
	stmts stmtCache
}

// Open opens (creating if needed) the SQLite database at path. It does not
// migrate; call Migrate. The path must name a file: an in-memory database
// cannot be shared by the read and write pools.
func Open(ctx context.Context, path string, opts Options) (*Store, error) {
	if path == "" || path == ":memory:" || strings.HasPrefix(path, "file:") || strings.ContainsAny(path, "?#") {
		return nil, heraldtype.Errorf(heraldtype.EINVALID, "sqlite: path %q must be a plain file path", path)
	}
	if opts.BusyTimeout < 0 || opts.ReadConns < 0 {
		return nil, heraldtype.Errorf(heraldtype.EINVALID, "sqlite: BusyTimeout and ReadConns must not be negative")
	}
	if opts.BusyTimeout == 0 {
		opts.BusyTimeout = 5 * time.Second
	}
	if opts.ReadConns == 0 {
		opts.ReadConns = 4
	}
	q := url.Values{}
	q.Add("_pragma", "busy_timeout("+strconv.FormatInt(opts.BusyTimeout.Milliseconds(), 10)+")")
	q.Add("_pragma", "foreign_keys(1)")
	// NORMAL is durable across application crashes in WAL mode; only a
	// power loss can undo the last transactions.
	q.Add("_pragma", "synchronous(NORMAL)")
	wq := cloneValues(q)
	wq.Add("_pragma", "journal_mode(WAL)")
	wq.Set("_txlock", "immediate")
	rq := cloneValues(q)
	rq.Add("_pragma", "query_only(1)")

	write, err := sql.Open("sqlite", path+"?"+wq.Encode())
	if err != nil {
		return nil, fmt.Errorf("sqlite: open %s: %w", path, err)
	}
	write.SetMaxOpenConns(1)
	write.SetMaxIdleConns(1)
	write.SetConnMaxLifetime(0)
	write.SetConnMaxIdleTime(0)
	// The write connection is opened first, so WAL mode is set before a
	// reader connects.
	if err := write.PingContext(ctx); err != nil {
		write.Close()
		return nil, fmt.Errorf("sqlite: open %s: %w", path, err)
	}
	read, err := sql.Open("sqlite", path+"?"+rq.Encode())
	if err != nil {
		write.Close()
		return nil, fmt.Errorf("sqlite: open %s: %w", path, err)
	}
	read.SetMaxOpenConns(opts.ReadConns)
	read.SetMaxIdleConns(opts.ReadConns)
	if err := read.PingContext(ctx); err != nil {
		read.Close()
		write.Close()
		return nil, fmt.Errorf("sqlite: open %s: %w", path, err)
	}
	return &Store{write: write, read: read, stmts: stmtCache{db: write}}, nil
}

func cloneValues(v url.Values) url.Values {
	c := make(url.Values, len(v))
	for k, vs := range v {
		c[k] = append([]string(nil), vs...)
	}
	return c
}

// DB returns the write pool: one connection, whose transactions begin
// IMMEDIATE. An embedder that wants its business change and a
// notification in one transaction (S4.1) begins it here and passes it to
// EnqueueTx; while that transaction is open it holds Herald's only write
// connection, so the embedder must end it promptly and must not call other
// writing Store methods from inside it (they would wait for it).
func (s *Store) DB() *sql.DB { return s.write }

// Migrations returns the embedded migrations (for tools that list them).
func Migrations() fs.FS { return migrate.Dir(migrationFiles, "migrations") }

// Migrate applies the embedded migrations that have not run yet. No lock
// is needed: each migration's BEGIN IMMEDIATE serialises runners, and the
// migrator checks again inside the transaction.
func (s *Store) Migrate(ctx context.Context) error {
	if _, err := migrate.Run(ctx, s.write, Migrations(), migrate.Options{}); err != nil {
		return fmt.Errorf("sqlite: %w", err)
	}
	return nil
}

// Ping checks both pools.
func (s *Store) Ping(ctx context.Context) error {
	if err := s.write.PingContext(ctx); err != nil {
		return fmt.Errorf("sqlite: ping: %w", err)
	}
	if err := s.read.PingContext(ctx); err != nil {
		return fmt.Errorf("sqlite: ping: %w", err)
	}
	return nil
}

// Close closes the statements and both pools.
func (s *Store) Close() error {
	return errors.Join(s.stmts.close(), s.read.Close(), s.write.Close())
}

// writeTx is a write transaction: one of the Store's own (begun by inTx
// on the write pool, own = true) or a caller's (EnqueueTx). Statements on
// an own transaction come from the statement cache; on a caller's they
// run directly, because a cached statement belongs to the write pool and
// the caller's transaction may come from another *sql.DB, and because
// warming the cache needs the write connection the caller may be holding.
type writeTx struct {
	*sql.Tx
	own bool
}

// inTx runs fn in a write transaction (BEGIN IMMEDIATE) and commits it if
// fn returns nil. Statements first seen in the transaction are prepared for
// reuse once it has ended (see stmtCache).
func (s *Store) inTx(ctx context.Context, fn func(tx *writeTx) error) error {
	err := s.runTx(ctx, fn)
	s.stmts.warm(ctx)
	return err
}

func (s *Store) runTx(ctx context.Context, fn func(tx *writeTx) error) error {
	tx, err := s.write.BeginTx(ctx, nil)
	if err != nil {
		return formatError(err, "transaction")
	}
	if err := fn(&writeTx{Tx: tx, own: true}); err != nil {
		rerr := tx.Rollback()
		if rerr != nil && !errors.Is(rerr, sql.ErrTxDone) {
			return errors.Join(err, rerr)
		}
		return err
	}
	return formatError(tx.Commit(), "transaction")
}

// stmt returns a prepared statement for query bound to tx: the cached one
// if there is one, else one prepared for this transaction only.
func (s *Store) stmt(ctx context.Context, tx *writeTx, query string) (*sql.Stmt, error) {
	if tx.own {
		if st := s.stmts.get(query); st != nil {
			return tx.StmtContext(ctx, st), nil
		}
	}
	st, err := tx.PrepareContext(ctx, query)
	if err != nil {
		return nil, fmt.Errorf("sqlite: prepare: %w", err)
	}
	return st, nil
}

func (s *Store) exec(ctx context.Context, tx *writeTx, query string, args ...any) (sql.Result, error) {
	if !tx.own {
		return tx.ExecContext(ctx, query, args...)
	}
	st, err := s.stmt(ctx, tx, query)
	if err != nil {
		return nil, err
	}
	return st.ExecContext(ctx, args...)
}

func (s *Store) query(ctx context.Context, tx *writeTx, query string, args ...any) (*sql.Rows, error) {
	if !tx.own {
		return tx.QueryContext(ctx, query, args...)
	}
	st, err := s.stmt(ctx, tx, query)
	if err != nil {
		return nil, err
	}
	return st.QueryContext(ctx, args...)
}

// stmtCache holds statements prepared on the write pool, which
// Tx.StmtContext reuses on its one connection without compiling the SQL
// again. A statement cannot be prepared on the pool while a transaction
// holds its only connection, so a query missed inside a transaction is
// noted, prepared for that transaction alone, and prepared on the pool by
// warm once the transaction has ended. Queries with IN lists or multi-row
// VALUES come in a bounded number of shapes (see inLists and
// insertBatches), so the cache stays small.
type stmtCache struct {
	db     *sql.DB
	mu     sync.Mutex
	m      map[string]*sql.Stmt
	missed map[string]bool
	closed bool
}

func (c *stmtCache) get(query string) *sql.Stmt {
	c.mu.Lock()
	defer c.mu.Unlock()
	st, ok := c.m[query]
	if !ok {
		if c.missed == nil {
			c.missed = make(map[string]bool)
		}
		c.missed[query] = true
	}
	return st
}

// warm prepares the missed queries on the pool. A failure only means the
// query is prepared per transaction again next time.
func (c *stmtCache) warm(ctx context.Context) {
	c.mu.Lock()
	missed := c.missed
	c.missed = nil
	c.mu.Unlock()
	for q := range missed {
		if ctx.Err() != nil {
			return
		}
		st, err := c.db.PrepareContext(ctx, q)
		if err != nil {
			continue
		}
		c.mu.Lock()
		if _, dup := c.m[q]; dup || c.closed {
			c.mu.Unlock()
			st.Close()
			continue
		}
		if c.m == nil {
			c.m = make(map[string]*sql.Stmt)
		}
		c.m[q] = st
		c.mu.Unlock()
	}
}

func (c *stmtCache) close() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	var errs []error
	for _, st := range c.m {
		errs = append(errs, st.Close())
	}
	c.m = nil
	c.closed = true
	return errors.Join(errs...)
}

// formatError is the one place where driver errors become Herald errors:
// a missing row is ENOTFOUND, a uniqueness violation ECONFLICT, a foreign
// key violation ENOTFOUND (the row referred to is missing). what names the
// object for the message. Anything else is wrapped as is, and an error
// that is already a *heraldtype.Error passes through.
func formatError(err error, what string) error {
	if err == nil {
		return nil
	}
	var he *heraldtype.Error
	if errors.As(err, &he) {
		return err
	}
	if errors.Is(err, sql.ErrNoRows) {
		return heraldtype.Errorf(heraldtype.ENOTFOUND, "%s not found", what)
	}
	var se *sqlite.Error
	if errors.As(err, &se) {
		switch se.Code() {
		case sqlite3.SQLITE_CONSTRAINT_UNIQUE, sqlite3.SQLITE_CONSTRAINT_PRIMARYKEY:
			return heraldtype.Errorf(heraldtype.ECONFLICT, "%s already exists", what)
		case sqlite3.SQLITE_CONSTRAINT_FOREIGNKEY:
			return heraldtype.Errorf(heraldtype.ENOTFOUND, "%s refers to a row that does not exist", what)
		}
	}
	return fmt.Errorf("sqlite: %s: %w", what, err)
}

// Times are stored as unix microseconds (UTC): integer comparisons in the
// indexes, and more precision than the millisecond the contract asks for.

func micros(t time.Time) int64 { return t.UnixMicro() }

func nullMicros(t time.Time) sql.NullInt64 {
	if t.IsZero() {
		return sql.NullInt64{}
	}
	return sql.NullInt64{Int64: t.UnixMicro(), Valid: true}
}

// nullString stores "" as NULL.
func nullString(v string) sql.NullString { return sql.NullString{String: v, Valid: v != ""} }

func fromMicros(v int64) time.Time { return time.UnixMicro(v).UTC() }

func fromNullMicros(v sql.NullInt64) *time.Time {
	if !v.Valid {
		return nil
	}
	t := fromMicros(v.Int64)
	return &t
}

// inChunk is the longest IN list sent in one statement, far below
// SQLite's variable limit. IN lists are padded to a power of two (repeating
// the last value, which IN ignores) so that only a few statement shapes
// exist and the statement cache stays small and warm.
const inChunk = 128

// insertChunk is the most rows one multi-row INSERT carries. A batch is cut
// into chunks of insertChunk and then powers of two, for the same reason.
const insertChunk = 64

// marks returns "?,?,…" with n marks.
func marks(n int) string {
	if n <= 0 {
		return ""
	}
	return strings.Repeat("?,", n-1) + "?"
}

// rowMarks returns n groups of "(?,…)" with cols marks each.
func rowMarks(n, cols int) string {
	row := "(" + marks(cols) + ")"
	return strings.Repeat(row+",", n-1) + row
}

// inLists calls fn with consecutive slices of xs of at most inChunk
// elements, each padded to a power of two, as []any ready for an IN list.
func inLists[T any](xs []T, fn func(args []any) error) error {
	for len(xs) > 0 {
		n := min(len(xs), inChunk)
		size := 1
		for size < n {
			size *= 2
		}
		args := make([]any, size)
		for i := range size {
			args[i] = xs[min(i, n-1)]
		}
		if err := fn(args); err != nil {
			return err
		}
		xs = xs[n:]
	}
	return nil
}

// insertBatches calls fn with consecutive slices of xs sized insertChunk,
// then the binary decomposition of the rest (32, 16, …, 1).
func insertBatches[T any](xs []T, fn func([]T) error) error {
	for len(xs) > 0 {
		n := insertChunk
		for n > len(xs) {
			n /= 2
		}
		if err := fn(xs[:n]); err != nil {
			return err
		}
		xs = xs[n:]
	}
	return nil
}
