// Command riverpeer is the peer Herald's PostgreSQL throughput is compared
// against: River (v0.51, riverpgxv5 on pgx v5) with 100 workers and tuned
// fetch intervals, jobs inserted in batches of 100, and a worker that sends
// one FCM HTTP v1 push per job with plain net/http and an x/oauth2 token
// source — "River plus a worker you write yourself". It sends to Herald's
// FCM emulator (`herald emulate fcm`) and prints deliveries/s and CPU.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net/url"
	"os"
	"os/signal"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/riverqueue/river/rivermigrate"
)

// pushArgs is one job: one push to one user's device token.
type pushArgs struct {
	UserID string `json:"user_id"`
	Token  string `json:"token"`
	Title  string `json:"title"`
	Body   string `json:"body"`
	Seq    int    `json:"seq"`
}

func (pushArgs) Kind() string { return "push" }

// pushWorker sends the job's push through FCM. A permanent error (invalid
// or unregistered token) cancels the job; anything else is returned for
// River to retry.
type pushWorker struct {
	river.WorkerDefaults[pushArgs]
	fcm  *fcmSender
	sent *atomic.Int64
}

func (w *pushWorker) Work(ctx context.Context, job *river.Job[pushArgs]) error {
	err := w.fcm.send(ctx, fcmMessage{
		Token:        job.Args.Token,
		Notification: &fcmNotification{Title: job.Args.Title, Body: job.Args.Body},
		Data:         map[string]string{"job_id": strconv.FormatInt(job.ID, 10), "user_id": job.Args.UserID},
		Android:      &fcmAndroid{Priority: "normal", TTL: "2419200s"},
	})
	if errors.Is(err, errPermanent) {
		return river.JobCancel(err)
	}
	if err == nil {
		w.sent.Add(1)
	}
	return err
}

type options struct {
	database     string
	endpoint     string
	credentials  string
	jobs         int
	users        int
	mode         string
	workers      int
	pollInterval time.Duration
	cooldown     time.Duration
	batch        int
	insertConc   int
	insertMode   string
	poolConns    int
	timeout      time.Duration
	emulatorPID  int
	analyzeEvery time.Duration
}

func main() {
	var o options
	flag.StringVar(&o.database, "database", "postgres://postgres@127.0.0.1:5432/riverpeer?sslmode=disable", "PostgreSQL URL; the database is created if missing, migrated with rivermigrate, and river_job truncated each run")
	flag.StringVar(&o.endpoint, "fcm-endpoint", "http://127.0.0.1:8081", "FCM base URL (the emulator's; production would be https://fcm.googleapis.com)")
	flag.StringVar(&o.credentials, "credentials", "", "service-account JSON file (the emulator's --credentials-out)")
	flag.IntVar(&o.jobs, "jobs", 100_000, "jobs (= pushes) in the run")
	flag.IntVar(&o.users, "users", 10_000, "distinct users/tokens the jobs are spread over")
	flag.StringVar(&o.mode, "mode", "continuous", "backlog: insert all, then start the workers and time the drain; continuous: start the workers, insert while they drain, time first insert → last completion")
	flag.IntVar(&o.workers, "workers", 100, "River MaxWorkers of the queue")
	flag.DurationVar(&o.pollInterval, "fetch-poll-interval", 20*time.Millisecond, "River FetchPollInterval (must be ≥ the cooldown)")
	flag.DurationVar(&o.cooldown, "fetch-cooldown", 2*time.Millisecond, "River FetchCooldown")
	flag.IntVar(&o.batch, "batch", 100, "jobs per insert call")
	flag.IntVar(&o.insertConc, "insert-concurrency", 4, "insert calls in flight (continuous mode; backlog inserts with the same)")
	flag.StringVar(&o.insertMode, "insert", "fast", "fast: InsertManyFast (COPY FROM); many: InsertMany (INSERT … RETURNING)")
	flag.IntVar(&o.poolConns, "pool-conns", 20, "pgxpool MaxConns")
	flag.DurationVar(&o.timeout, "timeout", 10*time.Minute, "give up if the run has not finished in this long")
	flag.DurationVar(&o.analyzeEvery, "analyze-every", 5*time.Second, "ANALYZE river_job this often while the run lasts, as autovacuum would (this machine runs with autovacuum off); 0: never")
	flag.IntVar(&o.emulatorPID, "emulator-pid", 0, "pid of the FCM emulator, to report its CPU too (0: not reported)")
	flag.Parse()

	if err := validate(o); err != nil {
		fmt.Fprintln(os.Stderr, "riverpeer:", err)
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if err := run(ctx, o); err != nil {
		fmt.Fprintln(os.Stderr, "riverpeer:", err)
		os.Exit(1)
	}
}

func validate(o options) error {
	switch {
	case o.credentials == "":
		return errors.New("-credentials: required (the emulator's service-account JSON)")
	case o.mode != "backlog" && o.mode != "continuous":
		return fmt.Errorf("-mode: %q is neither backlog nor continuous", o.mode)
	case o.insertMode != "fast" && o.insertMode != "many":
		return fmt.Errorf("-insert: %q is neither fast nor many", o.insertMode)
	case o.jobs < 1, o.users < 1, o.workers < 1, o.batch < 1, o.insertConc < 1, o.poolConns < 2:
		return errors.New("-jobs, -users, -workers, -batch, -insert-concurrency must be ≥ 1 and -pool-conns ≥ 2")
	}
	return nil
}

func run(ctx context.Context, o options) error {
	if err := ensureDatabase(ctx, o.database); err != nil {
		return err
	}
	pcfg, err := pgxpool.ParseConfig(o.database)
	if err != nil {
		return fmt.Errorf("-database: %w", err)
	}
	pcfg.MaxConns = int32(o.poolConns)
	pool, err := pgxpool.NewWithConfig(ctx, pcfg)
	if err != nil {
		return err
	}
	defer pool.Close()

	driver := riverpgxv5.New(pool)
	migrator, err := rivermigrate.New(driver, nil)
	if err != nil {
		return err
	}
	if _, err := migrator.Migrate(ctx, rivermigrate.DirectionUp, nil); err != nil {
		return fmt.Errorf("rivermigrate: %w", err)
	}
	if _, err := pool.Exec(ctx, "TRUNCATE river_job"); err != nil {
		return err
	}
	// A fresh table's statistics, as a fresh schema would have.
	if _, err := pool.Exec(ctx, "VACUUM ANALYZE river_job"); err != nil {
		return err
	}

	fcm, err := newFCMSender(ctx, o.endpoint, o.credentials, o.workers)
	if err != nil {
		return err
	}
	// Fetch the OAuth2 token once before the clock starts, as a long-running
	// service would have one.
	if err := fcm.warmToken(ctx); err != nil {
		return fmt.Errorf("OAuth2 token from the credentials' token_uri: %w", err)
	}

	var sent atomic.Int64
	workers := river.NewWorkers()
	river.AddWorker(workers, &pushWorker{fcm: fcm, sent: &sent})
	client, err := river.NewClient(driver, &river.Config{
		Queues:            map[string]river.QueueConfig{river.QueueDefault: {MaxWorkers: o.workers}},
		Workers:           workers,
		FetchCooldown:     o.cooldown,
		FetchPollInterval: o.pollInterval,
		Logger:            slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn})),
	})
	if err != nil {
		return err
	}
	events, cancelSub := client.SubscribeConfig(&river.SubscribeConfig{
		ChanSize: o.jobs + 10_000,
		Kinds:    []river.EventKind{river.EventKindJobCompleted, river.EventKindJobFailed, river.EventKindJobCancelled},
	})
	defer cancelSub()

	ctx, cancel := context.WithTimeout(ctx, o.timeout)
	defer cancel()

	fmt.Printf("riverpeer: mode %s, %d jobs over %d users, River %d workers, FetchCooldown %s, FetchPollInterval %s, batches of %d (%s) × %d in flight, pool %d conns\n",
		o.mode, o.jobs, o.users, o.workers, o.cooldown, o.pollInterval, o.batch, insertName(o.insertMode), o.insertConc, o.poolConns)

	var start cpuTimes
	var startErr error
	// The backends serving this database, read before and after the
	// measured phase (the pool's connections live through it).
	ownPIDs := backendPIDs(pool)
	if o.mode == "backlog" {
		t0 := time.Now()
		if err := insertAll(ctx, client, o); err != nil {
			return err
		}
		fmt.Printf("inserted %d jobs in %.2f s (workers stopped)\n", o.jobs, time.Since(t0).Seconds())
		// Autovacuum would analyze a table that just took o.jobs rows.
		if _, err := pool.Exec(ctx, "ANALYZE river_job"); err != nil {
			return err
		}
		start, startErr = readCPUTimes(o.emulatorPID)
		if err := client.Start(ctx); err != nil {
			return err
		}
	} else {
		if err := client.Start(ctx); err != nil {
			return err
		}
		time.Sleep(500 * time.Millisecond) // let the producer and leader settle
		start, startErr = readCPUTimes(o.emulatorPID)
		go func() {
			if err := insertAll(ctx, client, o); err != nil {
				fmt.Fprintln(os.Stderr, "riverpeer: insert:", err)
				cancel()
			}
		}()
	}
	if startErr != nil {
		return startErr
	}
	analyzed := analyzeEvery(ctx, pool, o.analyzeEvery)

	completed, failed, cancelled := 0, 0, 0
	for completed+cancelled < o.jobs {
		select {
		case ev := <-events:
			switch ev.Kind {
			case river.EventKindJobCompleted:
				completed++
			case river.EventKindJobCancelled:
				cancelled++
			case river.EventKindJobFailed:
				failed++
			}
		case <-ctx.Done():
			return fmt.Errorf("gave up after %s: %d completed, %d cancelled, %d failed attempts of %d jobs", o.timeout, completed, cancelled, failed, o.jobs)
		}
	}
	end, err := readCPUTimes(o.emulatorPID)
	if err != nil {
		return err
	}
	fmt.Printf("ANALYZE river_job ran %d times during the run\n", analyzed.Load())
	for pid := range backendPIDs(pool) {
		ownPIDs[pid] = true
	}
	u := usageSince(start, end, ownPIDs)
	report(o, u, sent.Load(), completed, cancelled, failed)

	stopCtx, stopCancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer stopCancel()
	return client.Stop(stopCtx)
}

// analyzeEvery runs ANALYZE river_job every d until ctx ends, standing in
// for autovacuum's analyze, which this machine's PostgreSQL has turned off:
// without it River plans its fetch and completion statements on the empty
// table's statistics taken at the start, and one UPDATE ran for minutes.
func analyzeEvery(ctx context.Context, pool *pgxpool.Pool, d time.Duration) *atomic.Int64 {
	var n atomic.Int64
	if d <= 0 {
		return &n
	}
	go func() {
		t := time.NewTicker(d)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
				if _, err := pool.Exec(ctx, "ANALYZE river_job"); err == nil {
					n.Add(1)
				}
			}
		}
	}()
	return &n
}

func insertName(m string) string {
	if m == "fast" {
		return "InsertManyFast"
	}
	return "InsertMany"
}

// insertAll inserts o.jobs jobs in batches of o.batch from o.insertConc
// goroutines taking batches from a shared counter.
func insertAll(ctx context.Context, client *river.Client[pgx.Tx], o options) error {
	var next atomic.Int64
	var wg sync.WaitGroup
	errs := make(chan error, o.insertConc)
	for range o.insertConc {
		wg.Add(1)
		go func() {
			defer wg.Done()
			params := make([]river.InsertManyParams, 0, o.batch)
			for {
				first := int(next.Add(int64(o.batch))) - o.batch
				if first >= o.jobs {
					return
				}
				params = params[:0]
				for i := first; i < min(first+o.batch, o.jobs); i++ {
					u := i % o.users
					params = append(params, river.InsertManyParams{Args: pushArgs{
						UserID: "user-" + strconv.Itoa(u),
						Token:  "riverpeer-token-u" + strconv.Itoa(u),
						Title:  "River peer",
						Body:   "Notification " + strconv.Itoa(i),
						Seq:    i,
					}})
				}
				var err error
				if o.insertMode == "fast" {
					_, err = client.InsertManyFast(ctx, params)
				} else {
					_, err = client.InsertMany(ctx, params)
				}
				if err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	return <-errs
}

func report(o options, u usage, sent int64, completed, cancelled, failed int) {
	per := func(s float64) float64 {
		if sent == 0 {
			return 0
		}
		return s * 1e6 / float64(sent)
	}
	fmt.Printf("deliveries sent         %d in %.2f s = %.0f/s (jobs completed %d, cancelled %d, failed attempts %d)\n",
		sent, u.wall, float64(sent)/u.wall, completed, cancelled, failed)
	fmt.Printf("peer process            CPU %.1f s (%.2f cores) = %.0f µs per delivery [getrusage: River client, workers, FCM sender, inserter]\n",
		u.self, u.self/u.wall, per(u.self))
	if o.emulatorPID > 0 {
		fmt.Printf("FCM emulator            CPU %.1f s = %.0f µs per delivery (peer + emulator %.0f µs) [/proc/%d/stat]\n",
			u.emu, per(u.emu), per(u.self+u.emu), o.emulatorPID)
	}
	fmt.Printf("postgres processes      CPU %.1f s = %.0f µs per delivery [/proc/<pid>/stat of every process named postgres, as herald bench counts]\n",
		u.db, per(u.db))
	fmt.Printf("  of which this database CPU %.1f s = %.0f µs per delivery [the backends pg_stat_activity lists for it; the rest is other databases' backends and PostgreSQL's own helpers]\n",
		u.ownDB, per(u.ownDB))
	ceiling := 0.0
	if m := per(u.machine); m > 0 {
		ceiling = float64(u.cpus) * 1e6 / m
	}
	fmt.Printf("machine                 %.1f CPU-s busy (%.0f %% of %d CPUs) = %.0f µs per delivery (PostgreSQL's processes %.0f): at most %.0f deliveries/s on this machine\n",
		u.machine, u.busyShare*100, u.cpus, per(u.machine), per(u.db), ceiling)
	fmt.Printf("RESULT mode=%s deliveries=%d seconds=%.2f per_sec=%.0f peer_cpu_s=%.2f emu_cpu_s=%.2f pg_cpu_s=%.2f pg_own_cpu_s=%.2f machine_cpu_s=%.2f machine_us=%.0f pg_us=%.0f peer_us=%.0f\n",
		o.mode, sent, u.wall, float64(sent)/u.wall, u.self, u.emu, u.db, u.ownDB, u.machine, per(u.machine), per(u.db), per(u.self))
}

// backendPIDs lists the PostgreSQL backends connected to the pool's
// database (pg_stat_activity), the pool's own among them.
func backendPIDs(pool *pgxpool.Pool) map[int]bool {
	pids := map[int]bool{}
	rows, err := pool.Query(context.Background(), "SELECT pid FROM pg_stat_activity WHERE datname = current_database()")
	if err != nil {
		return pids
	}
	defer rows.Close()
	for rows.Next() {
		var pid int
		if rows.Scan(&pid) == nil {
			pids[pid] = true
		}
	}
	return pids
}

// ensureDatabase creates the URL's database if it does not exist, connecting
// to the server's "postgres" database to do so.
func ensureDatabase(ctx context.Context, dbURL string) error {
	cfg, err := pgx.ParseConfig(dbURL)
	if err != nil {
		return fmt.Errorf("-database: %w", err)
	}
	name := cfg.Database
	if name == "" {
		return errors.New("-database: no database name in the URL")
	}
	u, err := url.Parse(dbURL)
	if err != nil {
		return fmt.Errorf("-database: %w", err)
	}
	u.Path = "/postgres"
	conn, err := pgx.Connect(ctx, u.String())
	if err != nil {
		return fmt.Errorf("connecting to create %q: %w", name, err)
	}
	defer conn.Close(ctx)
	var exists bool
	if err := conn.QueryRow(ctx, "SELECT EXISTS (SELECT 1 FROM pg_database WHERE datname = $1)", name).Scan(&exists); err != nil {
		return err
	}
	if !exists {
		if _, err := conn.Exec(ctx, "CREATE DATABASE "+pgx.Identifier{name}.Sanitize()); err != nil {
			return fmt.Errorf("creating database %q: %w", name, err)
		}
	}
	return nil
}
