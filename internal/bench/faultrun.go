package bench

import (
	"cmp"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os/exec"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/heraldhq/herald"
	"github.com/heraldhq/herald/heraldtype"
	"github.com/heraldhq/herald/provider/fcm"
	"github.com/heraldhq/herald/store/postgres"
)

// FaultRunConfig is one fault-injection run: notifications delivered by a
// `herald serve` process against PostgreSQL while the emulator fails sends,
// the process is SIGKILLed and restarted, and PostgreSQL restarts.
type FaultRunConfig struct {
	// Database is the PostgreSQL URL; the run uses a fresh schema, dropped
	// at the end unless KeepData.
	Database string
	KeepData bool
	// HeraldBin is the herald binary to run as `serve`.
	HeraldBin string
	// Notifications in total, sent as triggers of Recipients users each,
	// alternating between an at_least_once and an at_most_once type. Every
	// notification goes to a user (and device token) of its own: the
	// emulator keeps Retry-After per token, so a second notification to
	// the same token inside another's Retry-After would count as an early
	// retry although Herald did nothing wrong.
	Notifications int
	Recipients    int
	// Kills is how many times the process is SIGKILLed and restarted.
	Kills int
	// PostgresRestart, if not empty, is the command that restarts
	// PostgreSQL once mid-run.
	PostgresRestart []string
	// Faults the emulator injects (default: 20 % UNAVAILABLE, 5 %
	// QUOTA_EXCEEDED with Retry-After 1 s, 2 % of tokens UNREGISTERED).
	Faults Faults
	// MaxAttempts per delivery (default 10, so 20 % UNAVAILABLE rarely
	// exhausts them: 0.2^10).
	MaxAttempts int
	// WebhookDown, if positive, adds an endpoint subscribed to every
	// webhook event type at a receiver that is down this long from the
	// run's start, and one more SIGKILL once half of its messages have
	// arrived after its return: every message must arrive, signed, in
	// order per notification (issue 35 item 5).
	WebhookDown time.Duration
	// Timeout bounds the whole run (default 30 minutes).
	Timeout time.Duration
	// Out receives progress lines.
	Out io.Writer
}

// DefaultFaultRunFaults are the fault rates.
var DefaultFaultRunFaults = Faults{Unavailable: 0.20, Quota: 0.05, QuotaRetryAfter: 1, Unregistered: 0.02}

// Types of the run: one per delivery guarantee.
const (
	faultTypeAtLeastOnce = "reminder"
	faultTypeAtMostOnce  = "nudge"
)

// FaultRun runs the fault-injection scenario and checks the outcome. The
// report is returned whether or not the checks pass; the error says which
// failed.
func FaultRun(ctx context.Context, cfg FaultRunConfig) (*FaultReport, error) {
	if err := faultDefaults(&cfg); err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, cfg.Timeout)
	defer cancel()
	logf := func(format string, args ...any) {
		fmt.Fprintf(cfg.Out, "%s faultrun: %s\n", time.Now().Format("15:04:05"), fmt.Sprintf(format, args...))
	}
	b := make([]byte, 6)
	rand.Read(b)
	schema := "herald_faultrun_" + hex.EncodeToString(b)
	st, err := postgres.Open(ctx, cfg.Database, postgres.Options{Schema: schema, MaxConns: 8})
	if err != nil {
		return nil, err
	}
	defer st.Close()
	if !cfg.KeepData {
		defer dropSchema(cfg.Database, schema)
	}
	if err := st.Migrate(ctx); err != nil {
		return nil, err
	}
	sk := newSink(true)
	em, err := startEmulator("", sk)
	if err != nil {
		return nil, err
	}
	defer em.Close()
	creds := em.ServiceAccountJSON("herald-faultrun")
	pop := newPopulation(hex.EncodeToString(b[:3]), cfg.Notifications, 1, cfg.Faults.Unregistered)
	if err := injectFaults(em, cfg.Faults, pop); err != nil {
		return nil, err
	}
	push, err := fcm.New(fcm.Config{CredentialsJSON: creds, Endpoint: em.URL()})
	if err != nil {
		return nil, err
	}
	// The run's own Client only registers users and enqueues: the herald
	// process under test does every send.
	client, err := herald.NewClient(herald.Config{
		Store: st, Providers: map[string]herald.Provider{"fcm": push}, DisableWorkers: true,
		MaxAttempts: cfg.MaxAttempts, Logger: slog.New(slog.DiscardHandler),
		Types: map[string]herald.TypeConfig{faultTypeAtMostOnce: {Guarantee: heraldtype.AtMostOnce}},
	})
	if err != nil {
		return nil, err
	}
	if err := registerDirect(ctx, client, pop); err != nil {
		return nil, err
	}
	env := faultEnv(cfg, schema, string(creds), em.URL())
	var hooks *faultWebhooks
	if cfg.WebhookDown > 0 {
		if hooks, err = startFaultWebhooks(ctx, st, schema, cfg.WebhookDown); err != nil {
			return nil, err
		}
		defer hooks.em.Close()
		env = append(env, hooks.env()...)
	}
	proc, err := startProcess(ctx, cfg.HeraldBin, env)
	if err != nil {
		return nil, err
	}
	defer func() { proc.stop(30 * time.Second) }()
	logf("schema %s, emulator %s, herald pid %d; %d notifications", schema, em.URL(), proc.cmd.Process.Pid, cfg.Notifications)

	rep := &FaultReport{Notifications: cfg.Notifications, WebhookDown: cfg.WebhookDown}
	var enqueued atomic.Int64
	var lastEnqErr atomic.Value // the last failed enqueue attempt's error, retried
	enqErr := make(chan error, 1)
	go func() { enqErr <- enqueueAll(ctx, client, pop, cfg, &enqueued, &lastEnqErr) }()

	// stalled adds to a run that stopped making progress what says where
	// it waited: how far the enqueue got, herald's last log lines, the
	// database's backends, and the goroutines of this process (the
	// enqueuers and the emulator) and of herald (SIGQUIT).
	stalled := func(err error) error {
		diag := context.WithoutCancel(ctx)
		stats, serr := st.QueueStats(diag)
		return fmt.Errorf("%w\nenqueued %d of %d notifications (last enqueue error: %v); queue %v (%v)\n"+
			"the last lines herald logged:\n%s\n\nPostgreSQL backends:\n%s\nthis process's goroutines:\n%s\n"+
			"herald's goroutines (SIGQUIT):\n%s",
			err, enqueued.Load(), cfg.Notifications, lastEnqErr.Load(), stats, serr, proc.tail(),
			pgActivity(diag, st.Pool()), ownGoroutines(), proc.dump(10*time.Second))
	}

	// Chaos, paced by progress at the emulator so every event lands while
	// work is in flight: kills at evenly spread fractions of the expected
	// sends, the PostgreSQL restart between the second and the third.
	expected := pop.expectedSends(cfg.Notifications/cfg.Recipients, cfg.Recipients)
	type event struct {
		at   float64
		kill bool
	}
	var events []event
	for i := range cfg.Kills {
		events = append(events, event{at: float64(i+1) / float64(cfg.Kills+2)})
	}
	if len(cfg.PostgresRestart) > 0 {
		at := 0.5
		if cfg.Kills >= 2 {
			at = (events[1].at + events[2%len(events)].at) / 2
		}
		events = append(events, event{at: at})
	}
	for i := range events {
		if i < cfg.Kills {
			events[i].kill = true
		}
	}
	slices.SortFunc(events, func(a, b event) int { return cmp.Compare(a.at, b.at) })
	for _, ev := range events {
		for float64(sk.accepted.Load()) < ev.at*float64(expected) {
			select {
			case <-ctx.Done():
				return rep, stalled(fmt.Errorf("timed out before %.0f%% of sends (%d of %d)", ev.at*100, sk.accepted.Load(), expected))
			case err := <-enqErr:
				if err != nil {
					return rep, err
				}
				enqErr = nil
			case <-time.After(20 * time.Millisecond):
			}
		}
		if ev.kill {
			proc.kill()
			rep.Kills++
			logf("SIGKILL herald (%d of %d sends); restarting", sk.accepted.Load(), expected)
			if proc, err = startProcess(ctx, cfg.HeraldBin, env); err != nil {
				return rep, err
			}
			continue
		}
		logf("restarting PostgreSQL (%d of %d sends): %v", sk.accepted.Load(), expected, cfg.PostgresRestart)
		if out, err := exec.CommandContext(ctx, cfg.PostgresRestart[0], cfg.PostgresRestart[1:]...).CombinedOutput(); err != nil {
			return rep, fmt.Errorf("restarting PostgreSQL: %v: %s", err, out)
		}
		rep.PostgresRestarts++
	}
	if enqErr != nil {
		if err := <-enqErr; err != nil {
			return rep, err
		}
	}
	logf("all %d notifications enqueued; waiting for the queue to settle", enqueued.Load())
	if err := waitSettled(ctx, st); err != nil {
		return rep, stalled(err)
	}
	if err := rep.check(ctx, st, pop, sk.sends(), cfg.MaxAttempts); err != nil {
		return rep, err
	}
	if hooks != nil {
		kill := func() (err error) {
			proc.kill()
			proc, err = startProcess(ctx, cfg.HeraldBin, env)
			return err
		}
		if err := hooks.drain(ctx, st, rep, kill, logf); err != nil {
			return rep, stalled(err)
		}
		if err := hooks.check(ctx, st, rep, rep.problem); err != nil {
			return rep, err
		}
	}
	rep.EarlyRetries = em.Stats().EarlyRetries
	rep.Rejected = em.Stats().Rejected
	return rep, rep.verdict()
}

func faultDefaults(cfg *FaultRunConfig) error {
	if cfg.Notifications == 0 {
		cfg.Notifications = 100_000
	}
	if cfg.Recipients == 0 {
		cfg.Recipients = min(100, cfg.Notifications)
	}
	if cfg.MaxAttempts == 0 {
		cfg.MaxAttempts = 10
	}
	if cfg.Timeout == 0 {
		cfg.Timeout = 30 * time.Minute
	}
	if cfg.Faults == (Faults{}) {
		cfg.Faults = DefaultFaultRunFaults
	}
	if cfg.Out == nil {
		cfg.Out = io.Discard
	}
	switch {
	case cfg.Database == "":
		return errors.New("faultrun needs a PostgreSQL URL")
	case cfg.HeraldBin == "":
		return errors.New("faultrun needs the herald binary to run")
	case cfg.Notifications < 1:
		return errors.New("notifications must be at least 1")
	case cfg.Recipients < 1 || cfg.Recipients > herald.MaxRecipients:
		return fmt.Errorf("recipients must be 1..%d", herald.MaxRecipients)
	case cfg.Notifications%cfg.Recipients != 0:
		return errors.New("notifications must be a multiple of recipients")
	case cfg.Kills < 0:
		return errors.New("kills must not be negative")
	}
	return cfg.Faults.validate()
}

// faultEnv configures the herald process: short retry policies so the run
// finishes in minutes, ten attempts, and short leases so a killed
// process's deliveries come back within seconds.
func faultEnv(cfg FaultRunConfig, schema, creds, endpoint string) []string {
	return []string{
		"HERALD_DATABASE_URL=" + cfg.Database,
		"HERALD_DATABASE_SCHEMA=" + schema,
		"HERALD_FCM__CREDENTIALS_JSON=" + creds,
		"HERALD_FCM__ENDPOINT=" + endpoint,
		// FCM's 1-minute QUOTA_EXCEEDED floor would stretch a short run to
		// many minutes; the emulator's own Retry-After still applies.
		"HERALD_FCM__QUOTA_MIN_RETRY_AFTER=1s",
		"HERALD_TYPES__" + "NUDGE" + "__GUARANTEE=at_most_once",
		"HERALD_MAX_ATTEMPTS=" + strconv.Itoa(cfg.MaxAttempts),
		"HERALD_RETRY__TEMPORARY__BASE=100ms",
		"HERALD_RETRY__TEMPORARY__MAX=2s",
		"HERALD_RETRY__THROTTLED__BASE=1s",
		"HERALD_RETRY__THROTTLED__MAX=5s",
		"HERALD_WORKER__LEASE_DURATION=8s",
		"HERALD_WORKER__SEND_TIMEOUT=4s",
		"HERALD_WORKER__REAP_INTERVAL=500ms",
		"HERALD_LEADER_TTL=3s",
		"HERALD_LOG__LEVEL=info",
		// A stalled run dumps herald's goroutines with SIGQUIT: all of them.
		"GOTRACEBACK=all",
	}
}

// enqueueAll enqueues every trigger, alternating the two guarantees. A
// trigger that fails (PostgreSQL restarting) is retried with the same
// Idempotency-Key, so it is recorded exactly once.
func enqueueAll(ctx context.Context, c *herald.Client, pop *population, cfg FaultRunConfig, n *atomic.Int64, lastErr *atomic.Value) error {
	triggers := cfg.Notifications / cfg.Recipients
	var wg sync.WaitGroup
	var next atomic.Int64
	errc := make(chan error, 4)
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				k := int(next.Add(1) - 1)
				if k >= triggers {
					return
				}
				typ := faultTypeAtLeastOnce
				if k%2 == 1 {
					typ = faultTypeAtMostOnce
				}
				req := herald.Request{IdempotencyKey: "faultrun-" + strconv.Itoa(k), UserIDs: pop.recipients(k, cfg.Recipients),
					Type: typ, Title: "Fault run", Body: "Notification " + strconv.Itoa(k)}
				if cfg.Recipients == 1 {
					req.UserID, req.UserIDs = req.UserIDs[0], nil
				}
				for {
					_, err := c.Enqueue(ctx, req)
					if err == nil {
						n.Add(int64(cfg.Recipients))
						break
					}
					if ctx.Err() != nil {
						errc <- fmt.Errorf("enqueue trigger %d: %w", k, err)
						return
					}
					lastErr.Store(fmt.Errorf("trigger %d: %w", k, err))
					// PostgreSQL is restarting; the same key makes the
					// retry safe.
					select {
					case <-ctx.Done():
					case <-time.After(200 * time.Millisecond):
					}
				}
			}
		}()
	}
	wg.Wait()
	close(errc)
	return <-errc
}

// waitSettled waits until no delivery is pending or leased, riding out
// errors while PostgreSQL restarts.
func waitSettled(ctx context.Context, st *postgres.Store) error {
	for {
		s, err := st.QueueStats(ctx)
		if err == nil && s[heraldtype.StatePending] == 0 && s[heraldtype.StateLeased] == 0 {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("queue not settled: %v (last error %v)", s, err)
		case <-time.After(250 * time.Millisecond):
		}
	}
}

// registerDirect registers every user with its one android device through
// the Client, eight at a time.
func registerDirect(ctx context.Context, c *herald.Client, pop *population) error {
	var next atomic.Int64
	var wg sync.WaitGroup
	errc := make(chan error, 8)
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				u := int(next.Add(1) - 1)
				if u >= len(pop.users) {
					return
				}
				id := pop.users[u]
				if _, err := c.PutUser(ctx, id, herald.UserInput{}); err != nil {
					errc <- err
					return
				}
				in := herald.DeviceInput{DeviceID: id + "-d0", Token: pop.tokens[u][0], Platform: heraldtype.PlatformAndroid}
				if _, err := c.RegisterDevice(ctx, id, in); err != nil {
					errc <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errc)
	return <-errc
}
