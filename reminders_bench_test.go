package herald

import (
	"context"
	"database/sql"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/heraldhq/herald/heraldtype"
	"github.com/heraldhq/herald/internal/cputime"
	"github.com/heraldhq/herald/internal/leadership"
	"github.com/heraldhq/herald/internal/maintenance"
	"github.com/heraldhq/herald/internal/reminder"
	"github.com/heraldhq/herald/store"
	"github.com/heraldhq/herald/store/postgres"
	"github.com/heraldhq/herald/store/postgres/pgtest"
	"github.com/heraldhq/herald/store/sqlite"
)

// The reminder benchmarks of issue 19 item 10 (docs/PERFORMANCE.md,
// session 9). Each runs on SQLite and PostgreSQL; the reminder rows are
// bulk-inserted by SQL in the setup, outside the timer, as copies of one
// reminder made through the API.
//
//	go test -run '^$' -bench 'ReminderDrain' -benchtime 1000000x -timeout 60m .  # 1,000,000 due at one instant
//	go test -run '^$' -bench 'ReminderLag' -benchtime 30000x .                    # 1,000 due/s for 30 s
//	go test -run '^$' -bench 'ReminderIdle' -benchtime 1000000x .                 # 1,000,000 future, 30 s idle

// benchUsers is how many users the benchmarks' reminders belong to.
const benchUsers = 10_000

// benchDB is a migrated store of one kind and a raw handle on its
// database for the bulk setup.
type benchDB struct {
	name  string
	st    store.Store
	exec  func(ctx context.Context, query string, args ...any) error
	table func(name string) string
	// backends returns the pids of the PostgreSQL backends serving the
	// store's connections (none on SQLite, which runs in this process).
	backends func(ctx context.Context) ([]int, error)
}

func openBenchDB(b *testing.B, db string) benchDB {
	b.Helper()
	ctx := b.Context()
	d := benchDB{name: db}
	switch db {
	case "sqlite":
		path := filepath.Join(b.TempDir(), "h.db")
		s, err := sqlite.Open(ctx, path, sqlite.Options{})
		if err != nil {
			b.Fatal(err)
		}
		d.st = s
		raw, err := sql.Open("sqlite", path+"?_pragma=busy_timeout(10000)")
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { raw.Close() })
		d.exec = func(ctx context.Context, query string, args ...any) error {
			_, err := raw.ExecContext(ctx, query, args...)
			return err
		}
		d.table = func(name string) string { return name }
		d.backends = func(context.Context) ([]int, error) { return nil, nil }
	default:
		dsn, schema := pgtest.NewSchema(b)
		// The store's connections are named after the schema, so that
		// the idle benchmark finds their backends.
		sep := "?"
		if strings.Contains(dsn, "?") {
			sep = "&"
		}
		s, err := postgres.Open(ctx, dsn+sep+"application_name="+schema, postgres.Options{Schema: schema})
		if err != nil {
			b.Fatal(err)
		}
		d.st = s
		raw, err := pgx.Connect(ctx, dsn)
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { raw.Close(context.Background()) })
		d.exec = func(ctx context.Context, query string, args ...any) error {
			_, err := raw.Exec(ctx, query, args...)
			return err
		}
		d.table = func(name string) string { return schema + "." + name }
		d.backends = func(ctx context.Context) ([]int, error) {
			rows, err := raw.Query(ctx, `SELECT pid FROM pg_stat_activity WHERE application_name = $1`, schema)
			if err != nil {
				return nil, err
			}
			return pgx.CollectRows(rows, pgx.RowTo[int])
		}
	}
	b.Cleanup(func() { d.st.Close() })
	if err := d.st.Migrate(ctx); err != nil {
		b.Fatal(err)
	}
	return d
}

// benchClient is a Client on d without workers: the benchmarks run the
// scheduler themselves.
func benchClient(b *testing.B, d benchDB, now func() time.Time) *Client {
	b.Helper()
	c, err := NewClient(Config{Store: d.st, Types: map[string]TypeConfig{"nudge": {}}, Now: now,
		Logger: slog.New(slog.DiscardHandler), Reminders: ReminderConfig{Gap: -1}, DisableWorkers: true})
	if err != nil {
		b.Fatal(err)
	}
	return c
}

// bulkReminders writes benchUsers users and n reminders of them: one
// through PutReminder (an in-app nudge with a backoff of 1 h), the others
// copies of it made by one INSERT … SELECT. Reminder i (0 ≤ i < n) is
// r{i}, of user u{i % benchUsers}, due at first + i·step.
func bulkReminders(b *testing.B, d benchDB, c *Client, n int, first time.Time, step time.Duration) {
	b.Helper()
	ctx := b.Context()
	users, reminders := d.table("users"), d.table("reminders")
	var series, usersSQL, nextAt string
	var args []any
	switch d.name {
	case "sqlite":
		series = `WITH RECURSIVE g (i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM g WHERE i + 1 < ?) `
		usersSQL = series + `INSERT INTO ` + users + ` (id, timezone, created_at, updated_at)
SELECT 'u' || i, 'Asia/Seoul', ?, ? FROM g`
		nextAt = `? + g.i * ?`
		args = []any{first.UnixMicro(), step.Microseconds()}
	default:
		series = `WITH g (i) AS (SELECT generate_series(0, $1 - 1)) `
		usersSQL = series + `INSERT INTO ` + users + ` (id, timezone, created_at, updated_at)
SELECT 'u' || i, 'Asia/Seoul', $2, $3 FROM g`
		nextAt = `$2::timestamptz + g.i * $3 * interval '1 microsecond'`
		args = []any{first, step.Microseconds()}
	}
	now := time.Now().UTC()
	stamp := any(now)
	if d.name == "sqlite" {
		stamp = now.UnixMicro()
	}
	if err := d.exec(ctx, usersSQL, benchUsers, stamp, stamp); err != nil {
		b.Fatalf("users: %v", err)
	}
	_, _, err := c.PutReminder(ctx, ReminderRequest{Key: "template", UserID: "u0", Type: "nudge", Title: "hi",
		Channels: []heraldtype.Channel{heraldtype.ChannelInApp},
		Schedule: heraldtype.Schedule{Backoff: &heraldtype.Backoff{First: heraldtype.Duration(time.Hour), Factor: 2,
			Max: heraldtype.Duration(48 * time.Hour)}}})
	if err != nil {
		b.Fatal(err)
	}
	copyRows := series + `INSERT INTO ` + reminders + ` (id, key, user_id, type, title, body, data, channels, priority,
	data_only, schedule, max_sends, expires_at, on_event, match, quiet_hours, state, stop_reason, stopped_at,
	schedule_start, next_at, next_occurrence, sent_count, last_notification_id, last_sent_at, lease_owner, lease_until,
	version, created_at, updated_at)
SELECT 'rem-r' || g.i, 'r' || g.i, 'u' || (g.i % ` + fmt.Sprint(benchUsers) + `), t.type, t.title, t.body, t.data,
	t.channels, t.priority, t.data_only, t.schedule, t.max_sends, t.expires_at, t.on_event, t.match, t.quiet_hours,
	t.state, t.stop_reason, t.stopped_at, t.schedule_start, ` + nextAt + `, t.next_occurrence, t.sent_count,
	t.last_notification_id, t.last_sent_at, t.lease_owner, t.lease_until, t.version, t.created_at, t.updated_at
FROM g, ` + reminders + ` t WHERE t.key = 'template'`
	if err := d.exec(ctx, copyRows, append([]any{n}, args...)...); err != nil {
		b.Fatalf("reminders: %v", err)
	}
	if err := c.CancelReminder(ctx, "template"); err != nil {
		b.Fatal(err)
	}
	// Fresh statistics on PostgreSQL, as autovacuum would have them (it
	// is off on this machine, docs/PERFORMANCE.md); and the bulk insert
	// checkpointed, so that the timed part does not pay for writing it
	// out (SQLite's first commit after it would copy the whole WAL).
	checkpoint := `PRAGMA wal_checkpoint(TRUNCATE)`
	if d.name == "postgres" {
		if err := d.exec(ctx, `ANALYZE `+users+`, `+reminders); err != nil {
			b.Fatal(err)
		}
		checkpoint = `CHECKPOINT`
	}
	if err := d.exec(ctx, checkpoint); err != nil {
		b.Fatal(err)
	}
}

// BenchmarkReminderDrain measures issue 19 item 10's drain: b.N reminders
// all due at one instant are claimed, enqueued (one in-app notification
// each) and advanced by one scheduler (batch 500, no per-user gap); the
// figure is occurrences/s.
//
//	go test -run '^$' -bench ReminderDrain -benchtime 1000000x -timeout 60m .
func BenchmarkReminderDrain(b *testing.B) {
	for _, db := range []string{"sqlite", "postgres"} {
		b.Run(db, func(b *testing.B) {
			d := openBenchDB(b, db)
			clock := &testClock{now: time.Now().UTC().Truncate(time.Second)}
			c := benchClient(b, d, clock.Now)
			bulkReminders(b, d, c, b.N, clock.Now(), 0)
			bs := newBenchStore(d.st, b.N)
			s, err := reminder.New(reminder.Config{Store: bs, Build: c.buildOccurrence, Owner: "drain", Gap: -1,
				Now: clock.Now, Logger: c.log})
			if err != nil {
				b.Fatal(err)
			}
			// Beside the scheduler, the leader's services that keep its
			// tables fast, as a deployment runs them: on PostgreSQL the
			// queue vacuum (it vacuums the reminders too; autovacuum is off
			// on this machine). Their backends' CPU is counted.
			if v, ok := d.st.(store.QueueVacuumer); ok {
				bs.beside = maintenance.NewQueueVacuum(v, maintenance.DefaultVacuumInterval)
			}
			cpu := startCPU(b, d)
			elapsed := bs.run(b, s, time.Hour)
			cpu.report(b, b.N)
			b.ReportMetric(float64(b.N)/elapsed.Seconds(), "occurrences/s")
			// Time inside the store's calls, per occurrence.
			perOp := func(d time.Duration) float64 { return float64(d.Microseconds()) / float64(b.N) }
			b.ReportMetric(perOp(bs.claim), "claim-µs/op")
			b.ReportMetric(perOp(bs.fire), "fire-µs/op")
		})
	}
}

// cpuSpan measures the CPU time of this process and of the PostgreSQL
// backends serving the store's connections.
type cpuSpan struct {
	d     benchDB
	ctx   context.Context
	start time.Time
	self  time.Duration
	pg    map[int]time.Duration // by backend pid
}

func startCPU(b *testing.B, d benchDB) *cpuSpan {
	b.Helper()
	c := &cpuSpan{d: d, ctx: b.Context(), start: time.Now()}
	var err error
	if c.pg, err = c.backends(); err != nil {
		b.Fatal(err)
	}
	if c.self, err = cputime.Process(); err != nil {
		b.Fatal(err)
	}
	return c
}

func (c *cpuSpan) backends() (map[int]time.Duration, error) {
	pids, err := c.d.backends(c.ctx)
	if err != nil {
		return nil, err
	}
	m := make(map[int]time.Duration, len(pids))
	for _, pid := range pids {
		if m[pid], err = cputime.Processes(pid); err != nil {
			return nil, err
		}
	}
	return m, nil
}

// stop ends the span and returns the wall time, this process's CPU and
// the backends' CPU in it. A backend started during the span counts from
// its start; one that ended in it is not counted.
func (c *cpuSpan) stop(b *testing.B) (wall, self, pg time.Duration) {
	b.Helper()
	wall = time.Since(c.start)
	end, err := cputime.Process()
	if err != nil {
		b.Fatal(err)
	}
	later, err := c.backends()
	if err != nil {
		b.Fatal(err)
	}
	for pid, t := range later {
		pg += t - c.pg[pid]
	}
	return wall, end - c.self, pg
}

// report stops the span and reports the CPU per operation: Herald's
// process (with SQLite in it) and PostgreSQL's backends.
func (c *cpuSpan) report(b *testing.B, n int) {
	_, self, pg := c.stop(b)
	b.ReportMetric(float64(self.Microseconds())/float64(n), "herald-cpu-µs/op")
	if c.d.name == "postgres" {
		b.ReportMetric(float64(pg.Microseconds())/float64(n), "pg-cpu-µs/op")
	}
}

// benchStore records what a scheduler does: for each occurrence it
// sends, its lag, from when it was due (as claimed) to when the
// transaction that enqueued it committed; and the time spent inside the
// claims and the fires.
type benchStore struct {
	reminder.Store
	mu          sync.Mutex
	due         map[string]time.Time
	lags        []time.Duration
	claim, fire time.Duration
	want        int
	done        chan struct{}
	// beside, if set, is a leader service run while the scheduler runs:
	// at once, then every Interval, as the elector runs it.
	beside leadership.Service
}

func newBenchStore(st reminder.Store, want int) *benchStore {
	return &benchStore{Store: st, due: map[string]time.Time{}, want: want, done: make(chan struct{})}
}

func (l *benchStore) ClaimReminders(ctx context.Context, p store.ReminderClaimParams) ([]store.ReminderClaim, error) {
	start := time.Now()
	cs, err := l.Store.ClaimReminders(ctx, p)
	l.mu.Lock()
	defer l.mu.Unlock()
	l.claim += time.Since(start)
	for _, c := range cs {
		l.due[c.ID] = c.NextAt
	}
	return cs, err
}

func (l *benchStore) FireReminders(ctx context.Context, owner string, fires []store.ReminderFire, now time.Time) ([]store.FireResult, error) {
	start := time.Now()
	res, err := l.Store.FireReminders(ctx, owner, fires, now)
	committed := time.Now()
	l.mu.Lock()
	defer l.mu.Unlock()
	l.fire += committed.Sub(start)
	for i, r := range res {
		if r.Applied && fires[i].Sends > 0 {
			l.lags = append(l.lags, committed.Sub(l.due[r.ID]))
		}
	}
	if len(l.lags) >= l.want {
		select {
		case <-l.done:
		default:
			close(l.done)
		}
	}
	return res, err
}

// run runs s until it has sent the occurrences wanted (or limit passed),
// on the benchmark's timer, and returns how long that took.
func (l *benchStore) run(b *testing.B, s *reminder.Scheduler, limit time.Duration) time.Duration {
	ctx, cancel := context.WithCancel(b.Context())
	stopped := make(chan struct{})
	b.ResetTimer()
	start := time.Now()
	go func() { defer close(stopped); s.Run(ctx) }()
	besideDone := make(chan struct{})
	go func() {
		defer close(besideDone)
		if l.beside == nil {
			return
		}
		t := time.NewTicker(l.beside.Interval())
		defer t.Stop()
		for {
			if _, err := l.beside.RunOnce(ctx, time.Now()); err != nil && ctx.Err() == nil {
				b.Errorf("%s: %v", l.beside.Name(), err)
			}
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
		}
	}()
	select {
	case <-l.done:
	case <-time.After(limit):
	}
	elapsed := time.Since(start)
	b.StopTimer()
	cancel()
	<-stopped
	<-besideDone
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.lags) != l.want {
		b.Fatalf("sent %d occurrences of %d", len(l.lags), l.want)
	}
	return elapsed
}

// BenchmarkReminderLag measures the scheduler's lag (issue 19 item 10:
// p99 < 1 s at 1,000 due/s): b.N reminders come due one every
// millisecond, on the wall clock, and one scheduler (the defaults: batch
// 500, poll 500 ms) sends them; the lag of an occurrence is from its due
// time to the commit of its enqueue.
//
//	go test -run '^$' -bench ReminderLag -benchtime 30000x .
func BenchmarkReminderLag(b *testing.B) {
	const step = time.Millisecond // 1,000 due/s
	for _, db := range []string{"sqlite", "postgres"} {
		b.Run(db, func(b *testing.B) {
			d := openBenchDB(b, db)
			c := benchClient(b, d, nil)
			// Written due far ahead, then moved to start just after the setup.
			placeholder := time.Now().UTC().Add(24 * time.Hour).Truncate(time.Millisecond)
			bulkReminders(b, d, c, b.N, placeholder, step)
			first := time.Now().UTC().Add(time.Second).Truncate(time.Millisecond)
			shift := `UPDATE ` + d.table("reminders") + ` SET next_at = next_at - $1 * interval '1 microsecond'`
			if db == "sqlite" {
				shift = `UPDATE reminders SET next_at = next_at - ?`
			}
			if err := d.exec(b.Context(), shift, placeholder.Sub(first).Microseconds()); err != nil {
				b.Fatal(err)
			}
			if db == "sqlite" {
				if err := d.exec(b.Context(), `PRAGMA wal_checkpoint(TRUNCATE)`); err != nil {
					b.Fatal(err)
				}
			}
			bs := newBenchStore(d.st, b.N)
			s, err := reminder.New(reminder.Config{Store: bs, Build: c.buildOccurrence, Owner: "lag", Gap: -1,
				Logger: c.log})
			if err != nil {
				b.Fatal(err)
			}
			bs.run(b, s, time.Duration(b.N)*step+5*time.Minute)
			lags := slices.Clone(bs.lags)
			if len(lags) != b.N {
				b.Fatalf("sent %d occurrences of %d", len(lags), b.N)
			}
			slices.Sort(lags)
			q := func(p float64) float64 { return float64(lags[int(p*float64(len(lags)-1))]) / 1e6 }
			b.ReportMetric(q(0.5), "p50-ms")
			b.ReportMetric(q(0.99), "p99-ms")
			b.ReportMetric(q(1), "max-ms")
		})
	}
}

// BenchmarkReminderIdle measures what a quiet schedule table costs
// (issue 19 item 10: < 5 % of one CPU): b.N reminders, all due tomorrow,
// and one scheduler running (poll 500 ms) for HERALD_IDLE_WINDOW (default
// 30 s). The CPU is this process's (Herald, and SQLite in it) plus, on
// PostgreSQL, the backends serving the store's connections; cpu-% is
// their sum over the window, in percent of one CPU. (Go first runs every
// benchmark with b.N = 1; that probe watches for 1 s only.)
//
//	go test -run '^$' -bench ReminderIdle -benchtime 1000000x .
func BenchmarkReminderIdle(b *testing.B) {
	for _, db := range []string{"sqlite", "postgres"} {
		b.Run(db, func(b *testing.B) {
			window := 30 * time.Second
			if w, err := time.ParseDuration(os.Getenv("HERALD_IDLE_WINDOW")); err == nil {
				window = w
			}
			if b.N == 1 {
				window = time.Second
			}
			d := openBenchDB(b, db)
			c := benchClient(b, d, nil)
			bulkReminders(b, d, c, b.N, time.Now().UTC().Add(24*time.Hour), 0)
			ctx, cancel := context.WithCancel(b.Context())
			stopped := make(chan struct{})
			go func() { defer close(stopped); c.scheduler.Run(ctx) }()
			time.Sleep(time.Second) // past the first look and the pool's start
			cpu := startCPU(b, d)
			b.ResetTimer()
			time.Sleep(window)
			b.StopTimer()
			wall, self, pg := cpu.stop(b)
			cancel()
			<-stopped
			percent := func(d time.Duration) float64 { return 100 * d.Seconds() / wall.Seconds() }
			b.ReportMetric(percent(self), "herald-cpu-%")
			if db == "postgres" {
				b.ReportMetric(percent(pg), "pg-cpu-%")
			}
			b.ReportMetric(percent(self+pg), "cpu-%")
		})
	}
}
