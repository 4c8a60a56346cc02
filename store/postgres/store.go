// Package postgres is Herald's shared store: store.Store, store.Notifier
// and store.InboxNotifier on PostgreSQL 15+ through pgx v5, for running
// many Herald instances on one queue.
//
// Everything lives in one schema (Options.Schema, default "herald"), and
// every statement names its tables with that schema rather than relying on
// search_path, because EnqueueTx runs on the caller's transaction, whose
// connection may have any search_path. Claims use FOR UPDATE SKIP LOCKED
// so instances never wait for each other's rows (S2.4, S4.2); hot
// operations are one statement, or one pipelined batch in a transaction,
// so their cost is a round trip or three whatever the batch size.
package postgres

import (
	"context"
	"database/sql"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"regexp"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/heraldhq/herald/heraldtype"
	"github.com/heraldhq/herald/store"
	"github.com/heraldhq/herald/store/migrate"
)

//go:embed migrations/*.sql
var migrationFiles embed.FS

var (
	_ store.Store    = (*Store)(nil)
	_ store.Notifier = (*Store)(nil)
)

// DefaultSchema is the schema Herald's tables live in unless
// Options.Schema says otherwise.
const DefaultSchema = "herald"

// maxSchemaLen keeps the NOTIFY channels, schema + "_deliveries" and
// schema + "_inbox", within PostgreSQL's 63-byte identifier limit.
const maxSchemaLen = 48

var schemaRE = regexp.MustCompile(`^[a-z_][a-z0-9_]*$`)

// defaultEnqueueConcurrency is Options.EnqueueConcurrency's default.
const defaultEnqueueConcurrency = 2

// Options configure Open. The zero value gives the defaults.
type Options struct {
	// Schema holds Herald's tables: lower-case letters, digits and
	// underscores, at most 48 characters. Default "herald". Migrate
	// creates it.
	Schema string
	// MaxConns bounds the connection pool; 0 keeps pgx's default (the
	// larger of 4 and the number of CPUs) or the DSN's pool_max_conns.
	// Notifications uses one more connection of its own.
	MaxConns int32
	// EnqueueConcurrency bounds the Enqueue transactions that run at
	// once. Calls beyond it wait for the next free one, which commits
	// all of them together: one transaction, one WAL flush (group
	// commit, enqueuebatch.go). Default 2: one batch commits while the
	// next gathers, and one large trigger does not hold up the rest
	// (fewer slots make larger batches: herald bench --rate 1000 had p99
	// 44, 41 and 61 ms, medians of 5, with 1, 2 and 5). Negative: no
	// bound and no batching, one transaction per call. The same bound
	// applies, apart, to the rule engine's event transactions
	// (RecordEvent, eventbatch.go).
	EnqueueConcurrency int
}

// Store is store.Store on PostgreSQL. It is safe for concurrent use.
type Store struct {
	pool *pgxpool.Pool
	// connConfig opens the connections that are not the pool's: the
	// migrator's and the listener's.
	connConfig *pgx.ConnConfig
	schema     string
	// prefix is the quoted schema and a dot, put before every table name.
	prefix string
	// channel is the NOTIFY channel of this schema, so that Herald
	// installations in two schemas of one database do not wake each other.
	channel string
	// listener is the LISTEN connection shared by Notifications and
	// InboxEvents (notify.go).
	listener listener
	// waker sends the NOTIFYs of committed enqueues (wake.go).
	waker waker
	// batcher commits concurrent enqueues together (enqueuebatch.go).
	batcher enqueueBatcher
	// events commits concurrent RecordEvents together (eventbatch.go),
	// with the same bound as the enqueues.
	events eventBatcher
}

// Open connects to the database at dsn (a postgres:// URL or a key=value
// string, as pgx accepts). It does not migrate; call Migrate.
// pingTimeout bounds pgxpool's health ping of an idle connection unless
// the DSN's pool_ping_timeout says otherwise: a healthy server answers in
// milliseconds.
const pingTimeout = 5 * time.Second

func Open(ctx context.Context, dsn string, opts Options) (*Store, error) {
	schema := opts.Schema
	if schema == "" {
		schema = DefaultSchema
	}
	if !schemaRE.MatchString(schema) || len(schema) > maxSchemaLen {
		return nil, heraldtype.Errorf(heraldtype.EINVALID,
			"postgres: schema %q must be lower-case letters, digits and underscores, at most %d characters", schema, maxSchemaLen)
	}
	if opts.MaxConns < 0 {
		return nil, heraldtype.Errorf(heraldtype.EINVALID, "postgres: MaxConns must not be negative")
	}
	cfg, err := pgxpool.ParseConfig(dsn)
	if err != nil {
		// The parse error can quote the DSN, password included.
		return nil, heraldtype.Errorf(heraldtype.EINVALID, "postgres: the database URL cannot be parsed")
	}
	if opts.MaxConns > 0 {
		cfg.MaxConns = opts.MaxConns
	}
	if cfg.PingTimeout == 0 {
		// pgxpool pings a connection idle for over a second before handing
		// it out. A caller whose context ends first abandons that ping,
		// which without a timeout of its own waits up to a minute on a
		// database gone silent (a network partition), holding the
		// connection and with it Close: a stopping instance hung for that
		// minute after a partition (issue 24).
		cfg.PingTimeout = pingTimeout
	}
	if cfg.ConnConfig.RuntimeParams["application_name"] == "" {
		cfg.ConnConfig.RuntimeParams["application_name"] = "herald"
	}
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("postgres: connect: %w", err)
	}
	if err := pool.Ping(ctx); err != nil {
		pool.Close()
		return nil, fmt.Errorf("postgres: connect: %w", err)
	}
	s := &Store{
		pool:       pool,
		connConfig: cfg.ConnConfig.Copy(),
		schema:     schema,
		prefix:     pgx.Identifier{schema}.Sanitize() + ".",
		channel:    schema + "_deliveries",
	}
	s.waker.init(s)
	switch n := opts.EnqueueConcurrency; {
	case n > 0:
		s.batcher.max = n
	case n == 0:
		s.batcher.max = defaultEnqueueConcurrency
	}
	s.events.max = s.batcher.max
	return s, nil
}

// Pool returns the connection pool, so an embedder can begin the
// transaction it passes to EnqueueTx on Herald's own connections.
func (s *Store) Pool() *pgxpool.Pool { return s.pool }

// Schema returns the schema Herald's tables live in.
func (s *Store) Schema() string { return s.schema }

// Migrations returns the embedded migrations (for tools that list them).
func Migrations() fs.FS { return migrate.Dir(migrationFiles, "migrations") }

// Ping reports whether the database answers.
func (s *Store) Ping(ctx context.Context) error {
	if err := s.pool.Ping(ctx); err != nil {
		return fmt.Errorf("postgres: ping: %w", err)
	}
	return nil
}

// Close closes the pool, after the NOTIFY of the last enqueue (if one is
// in flight). Listeners end with their contexts.
func (s *Store) Close() error {
	s.waker.close()
	s.pool.Close()
	return nil
}

// q puts the schema before every table name, which the statements write
// as {s}.name.
func (s *Store) q(query string) string {
	return strings.ReplaceAll(query, "{s}.", s.prefix)
}

// inTx runs fn in a transaction and commits it if fn returns nil.
func (s *Store) inTx(ctx context.Context, fn func(tx pgx.Tx) error) error {
	return formatError(pgx.BeginFunc(ctx, s.pool, fn), "transaction")
}

// indexPlans, run first inside the transaction of a hot queue statement
// (claim, complete), makes the planner take the index nested loops those
// statements are written for, whatever the statistics say. The queue
// churns faster than ANALYZE follows: planned on statistics from when few
// rows were pending or leased, the claim sorted every due row and the
// complete hash-joined every leased row through an index full of dead
// entries (EXPLAIN ANALYZE in docs/PERFORMANCE.md), and a cached generic
// plan keeps such a choice until the next ANALYZE. Each statement's
// driving set is a short list of ids or the head of the pending index, so
// the nested loop is always right. For the same reason the statements run
// their generic plans (plan_cache_mode), made under these settings: in
// auto mode PostgreSQL re-planned the claim on most calls (509 plans of
// 891 claims in a 100,000-delivery bench, and again after each of the
// leader's VACUUM ANALYZEs; pg_stat_statements with track_planning,
// docs/PERFORMANCE.md session 9). A generic plan does not know its LIMIT
// and guesses a tenth of the table, which at a million rows prices the
// claim above jit_above_cost (100,000 by default): PostgreSQL then
// JIT-compiled it on every call — 33 ms a claim of 128 against 5.8 ms
// without, a 1,000,000-delivery backlog drained at 2,933–3,579/s instead
// of 7,000/s (issue 39 item 4, docs/PERFORMANCE.md session 15). None of
// these statements reads enough rows for JIT to pay, so jit is off with
// the other settings (session 10 found the same in the reminder claim).
// set_config(…, true) lasts until the transaction ends: other statements
// on the connection plan freely.
const indexPlans = `SELECT set_config('enable_seqscan', 'off', true), set_config('enable_bitmapscan', 'off', true),
	set_config('enable_hashjoin', 'off', true), set_config('enable_mergejoin', 'off', true),
	set_config('plan_cache_mode', 'force_generic_plan', true), set_config('jit', 'off', true)`

// indexedQuery runs one statement in its own transaction after indexPlans,
// in one pipelined round trip (BEGIN, indexPlans, the statement, COMMIT),
// and hands its rows to read. It is for the statements that must walk a
// partial queue index whatever the statistics say: the lease reaper and
// the queue depth count, which stale statistics turned into full scans of
// a 1,000,000-row table (300-500 ms each, docs/PERFORMANCE.md).
func (s *Store) indexedQuery(ctx context.Context, what, sql string, read func(pgx.Rows) error, args ...any) error {
	return s.indexedQueries(ctx, what, indexed{sql: sql, args: args, read: read})
}

// indexed is one statement of indexedQueries and the reader of its rows.
type indexed struct {
	sql  string
	args []any
	read func(pgx.Rows) error
}

// indexedQueries is indexedQuery for several statements, run in order in
// the one transaction and round trip.
func (s *Store) indexedQueries(ctx context.Context, what string, qs ...indexed) error {
	b := &pgx.Batch{}
	b.Queue("BEGIN")
	b.Queue(indexPlans)
	for _, q := range qs {
		b.Queue(s.q(q.sql), q.args...)
	}
	b.Queue("COMMIT")
	br := s.pool.SendBatch(ctx, b)
	err := func() error {
		for range 2 { // BEGIN, indexPlans
			if _, err := br.Exec(); err != nil {
				return err
			}
		}
		for _, q := range qs {
			rows, err := br.Query()
			if err != nil {
				return err
			}
			if err := q.read(rows); err != nil {
				rows.Close()
				return err
			}
			rows.Close()
			if err := rows.Err(); err != nil {
				return err
			}
		}
		_, err := br.Exec() // COMMIT
		return err
	}()
	if cerr := br.Close(); err == nil {
		err = cerr
	}
	return formatError(err, what)
}

// notifySQL wakes the listeners of every instance (S4.2). Inside a
// transaction PostgreSQL delivers it at commit, once per transaction
// however often it was called, and not at all on rollback.
func (s *Store) notifySQL() string { return `SELECT pg_notify('` + s.channel + `', '')` }

// formatError is the one place where driver errors become Herald errors:
// a missing row is ENOTFOUND, a uniqueness violation ECONFLICT, a foreign
// key violation ENOTFOUND (the row referred to is missing), invalid input
// (SQLSTATE class 22: bad text encoding, out-of-range values) EINVALID.
// what names the object for the message. An error that is already a
// *heraldtype.Error passes through; anything else is wrapped as is.
func formatError(err error, what string) error {
	if err == nil {
		return nil
	}
	var he *heraldtype.Error
	if errors.As(err, &he) {
		return err
	}
	if errors.Is(err, pgx.ErrNoRows) || errors.Is(err, sql.ErrNoRows) {
		return heraldtype.Errorf(heraldtype.ENOTFOUND, "%s not found", what)
	}
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		switch {
		case pe.Code == "23505":
			return heraldtype.Errorf(heraldtype.ECONFLICT, "%s already exists", what)
		case pe.Code == "23503":
			return heraldtype.Errorf(heraldtype.ENOTFOUND, "%s refers to a row that does not exist", what)
		case strings.HasPrefix(pe.Code, "22"):
			return heraldtype.Errorf(heraldtype.EINVALID, "%s: %s", what, pe.Message)
		}
	}
	return fmt.Errorf("postgres: %s: %w", what, err)
}

// utc returns t in UTC: pgx returns timestamptz in the local zone.
func utc(t time.Time) time.Time { return t.UTC() }

func utcPtr(t *time.Time) *time.Time {
	if t == nil {
		return nil
	}
	u := t.UTC()
	return &u
}

// nullTime is NULL for the zero time.
func nullTime(t time.Time) *time.Time {
	if t.IsZero() {
		return nil
	}
	return &t
}
