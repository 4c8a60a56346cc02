// Package fanout is the rule runner (issue 20 item 4, S3.5): a leader
// daemon that enqueues each rule run's audience in batches through the
// normal pipeline.
//
// A rule run is a row written in the transaction that recorded its event
// (store.Events.RecordEvent): the rendered notification and the resolved
// audience, fixed then. The runner pages the audience by user id
// (internal/audience, keyset: never the whole audience at once) and writes
// each batch's notifications with the run's advanced cursor in one
// transaction guarded by the run's version
// (store.Events.AdvanceRuleRun). A crash anywhere leaves the run running
// at its last cursor; the next leader resumes it, and nobody is reached
// twice. An audience source that fails (a webhook down) leaves the run at
// its cursor, tried again after a pause; a run that keeps failing says
// why in its last_error. Preferences, quiet hours, the 1 h user × subject × type
// de-duplication and the daily cap are the pipeline's, per recipient, as
// for any notification (S3.8).
package fanout

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"go.opentelemetry.io/otel/trace"

	"github.com/heraldhq/herald/heraldtype"
	"github.com/heraldhq/herald/internal/audience"
	"github.com/heraldhq/herald/internal/metrics"
	"github.com/heraldhq/herald/store"
)

// Store is what the runner needs of the database.
type Store interface {
	audience.InterestStore
	GetRule(ctx context.Context, name string) (heraldtype.Rule, error)
	GetUser(ctx context.Context, id string) (heraldtype.User, error)
	RunningRuleRuns(ctx context.Context, limit int) ([]heraldtype.RuleRun, error)
	AdvanceRuleRun(ctx context.Context, b store.RuleBatch) (store.RuleBatchResult, error)
}

// Config configures a Runner. Store and Build are required.
type Config struct {
	Store Store
	// Audiences resolves each run's audience (the Go sources an embedding
	// program registered, the webhooks' bounds). Its Interests default to
	// Store.
	Audiences audience.Resolver
	// Build makes the trigger of a batch: the run's notification for each
	// of users (the type's defaults, validation, routing). An
	// invalid_argument error fails the run with its reason (the content
	// is wrong for everyone); a not_found error (a listed user that does
	// not exist) is retried one user at a time, the unknown users left
	// out; any other error leaves the batch to be tried again.
	Build func(ctx context.Context, run heraldtype.RuleRun, users []string) (store.EnqueueParams, error)
	// Enqueued is told of every batch the store wrote (metrics, waking
	// the workers and the inbox streams). Optional.
	Enqueued func(typ string, res store.EnqueueResult)
	// BatchSize is how many recipients one batch takes (S3.5). Default
	// 1000; at most store.MaxAudiencePage.
	BatchSize int
	// Pause is the wait between two batches of a run, so a large audience
	// does not swamp the pipeline (S3.5). Default 10 ms; negative: none.
	Pause time.Duration
	// Concurrency is how many runs are worked on at once, so a large
	// fan-out does not hold back the small ones behind it. Default 4.
	Concurrency int
	// Poll bounds how long an idle runner sleeps before looking again
	// (another instance may have applied an event). Default 1 s.
	Poll time.Duration
	// RetryPause is how long a run whose audience source failed (a
	// webhook down, a Go source's error) waits at its cursor before it is
	// tried again. Default 5 s.
	RetryPause time.Duration
	Now        func() time.Time
	Metrics    *metrics.Metrics
	Logger     *slog.Logger
	// Tracer records a "herald.rule.batch" span per batch of a run that
	// kept its event's traceparent, child of that trace; Build then gets
	// the span's context, so the batch's notifications (and their sends)
	// continue it. Nil: tracing is off.
	Tracer trace.Tracer
}

// Defaults of Config.
const (
	DefaultBatchSize   = 1000
	DefaultPause       = 10 * time.Millisecond
	DefaultConcurrency = 4
	DefaultPoll        = time.Second
	DefaultRetryPause  = 5 * time.Second
	// failuresBeforeError is how many times in a row a run's audience
	// source fails before the run's last_error says so: one failure is
	// often a blip, three is something an operator should see.
	failuresBeforeError = 3
	// maxRuns bounds the runs one tick picks up.
	maxRuns = 100
)

// Runner works rule runs.
type Runner struct {
	cfg  Config
	log  *slog.Logger
	wake chan struct{}

	mu     sync.Mutex
	active map[string]bool // runs a goroutine of this runner is working on
	// failed counts, per run, its audience's failures in a row, and
	// notBefore is when it may be tried again.
	failed    map[string]int
	notBefore map[string]time.Time
}

// New checks cfg and fills its defaults.
func New(cfg Config) (*Runner, error) {
	if cfg.Store == nil || cfg.Build == nil {
		return nil, errors.New("fanout: Store and Build are required")
	}
	if cfg.BatchSize <= 0 {
		cfg.BatchSize = DefaultBatchSize
	}
	if cfg.BatchSize > store.MaxAudiencePage {
		return nil, fmt.Errorf("fanout: batch size %d is above %d", cfg.BatchSize, store.MaxAudiencePage)
	}
	if cfg.Pause == 0 {
		cfg.Pause = DefaultPause
	}
	if cfg.Concurrency <= 0 {
		cfg.Concurrency = DefaultConcurrency
	}
	if cfg.Poll <= 0 {
		cfg.Poll = DefaultPoll
	}
	if cfg.RetryPause <= 0 {
		cfg.RetryPause = DefaultRetryPause
	}
	if cfg.Audiences.Interests == nil {
		cfg.Audiences.Interests = cfg.Store
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Metrics == nil {
		cfg.Metrics = metrics.New(nil)
	}
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Runner{cfg: cfg, log: log, wake: make(chan struct{}, 1), active: map[string]bool{},
		failed: map[string]int{}, notBefore: map[string]time.Time{}}, nil
}

// Name names the runner among the leader's services.
func (r *Runner) Name() string { return "rule_runner" }

// Wake tells a sleeping runner to look again (an event started a run).
func (r *Runner) Wake() {
	select {
	case r.wake <- struct{}{}:
	default:
	}
}

// Run works rule runs until ctx (the leader's term) ends: every running
// run is picked up, at most Concurrency at once, and worked to its end.
func (r *Runner) Run(ctx context.Context) {
	var wg sync.WaitGroup
	defer wg.Wait()
	sem := make(chan struct{}, r.cfg.Concurrency)
	for ctx.Err() == nil {
		runs, err := r.cfg.Store.RunningRuleRuns(ctx, maxRuns)
		if err != nil && ctx.Err() == nil {
			r.log.Error("rules: cannot read the running rule runs", "err", err)
		}
		for _, run := range runs {
			key := runKey(run)
			r.mu.Lock()
			busy := r.active[key] || r.cfg.Now().Before(r.notBefore[key])
			if !busy {
				r.active[key] = true
			}
			r.mu.Unlock()
			if busy {
				continue
			}
			select {
			case sem <- struct{}{}:
			case <-ctx.Done():
				r.release(key)
				return
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				defer func() { <-sem }()
				defer r.release(key)
				defer r.Wake() // the run's slot is free: look for more
				if err := r.Execute(ctx, run); err != nil && ctx.Err() == nil {
					r.log.Warn("rules: a run stopped; it is resumed at its cursor", "rule", run.Rule, "run", run.ID, "err", err)
				}
			}()
		}
		r.sleep(ctx, r.cfg.Poll)
	}
}

// Tick works every running run to its end, one after the other, and
// returns the errors of those that stopped early (tests, and a caller
// without a leader).
func (r *Runner) Tick(ctx context.Context) error {
	runs, err := r.cfg.Store.RunningRuleRuns(ctx, maxRuns)
	if err != nil {
		return err
	}
	var errs []error
	for _, run := range runs {
		if err := r.Execute(ctx, run); err != nil {
			errs = append(errs, fmt.Errorf("rule %q run %q: %w", run.Rule, run.ID, err))
		}
	}
	return errors.Join(errs...)
}

func runKey(run heraldtype.RuleRun) string { return run.Rule + "\x00" + run.ID }

func (r *Runner) release(key string) {
	r.mu.Lock()
	delete(r.active, key)
	r.mu.Unlock()
}

func (r *Runner) sleep(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-r.wake:
	case <-t.C:
	}
}

// Execute works one run from its cursor to the end of its audience (or its
// limit), a batch at a time. It returns early, leaving the run running at
// its last cursor, when ctx ends or a batch cannot be written; the next
// pick-up resumes it. A run another runner moved on is left to it. A run
// whose rule was deleted or disabled meanwhile stops, failed, with that
// reason.
func (r *Runner) Execute(ctx context.Context, run heraldtype.RuleRun) error {
	if run.Cursor != "" || run.Version > 1 {
		r.cfg.Metrics.RuleRuns.WithLabelValues("resumed").Inc()
	}
	src := r.cfg.Audiences.ForJob(run.Rule, run.Job.Audience)
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		started := time.Now() // processing time: the machine's clock, not the injected one
		b := store.RuleBatch{Rule: run.Rule, RunID: run.ID, Version: run.Version, Cursor: run.Cursor}
		if reason, err := r.stopped(ctx, run.Rule); err != nil {
			return err
		} else if reason != "" {
			b.Finish, b.LastError = heraldtype.RunFailed, reason
			r.forget(run)
			_, err := r.advance(ctx, run, b)
			return err
		}
		want := min(r.cfg.BatchSize, run.Job.Audience.Limit-run.Recipients)
		var users []audience.User
		if want > 0 {
			var err error
			if users, err = src.Next(ctx, run.Cursor, want); err != nil {
				return r.audienceFailed(ctx, run, err)
			}
			r.forget(run)
		}
		// The end of the audience (an empty page, or a short one from a
		// source that says so), or its limit: this batch is the last.
		if audience.Ends(src, len(users), want) || run.Recipients+len(users) >= run.Job.Audience.Limit {
			b.Finish = heraldtype.RunDone
		}
		bctx, span := r.startBatch(ctx, run, len(users))
		if len(users) > 0 {
			if err := r.fill(bctx, run, users, &b); err != nil {
				r.observe(ctx, run, started, len(users), err)
				endBatch(span, b, store.RuleBatchResult{}, err)
				return err
			}
		}
		res, err := r.advance(bctx, run, b)
		endBatch(span, b, res, err)
		r.observe(ctx, run, started, len(users), err)
		if err != nil || !res.Applied || b.Finish != "" {
			if b.Finish != "" {
				r.forget(run)
			}
			return err
		}
		run = res.Run
		if r.cfg.Pause > 0 {
			r.sleepCtx(ctx, r.cfg.Pause)
		}
	}
}

// observe records one batch's processing time (S2.7) and, with
// log.debug: [rules], what it did.
func (r *Runner) observe(ctx context.Context, run heraldtype.RuleRun, started time.Time, users int, err error) {
	d := time.Since(started)
	outcome := metrics.BatchOK
	if err != nil {
		outcome = metrics.BatchError
	}
	r.cfg.Metrics.RuleBatchDuration.WithLabelValues(outcome).Observe(d.Seconds())
	if r.log.Enabled(ctx, slog.LevelDebug) {
		r.log.Debug("rules: batch done", "rule", run.Rule, "run", run.ID, "cursor", run.Cursor, "users", users,
			"duration", d, "err", err)
	}
}

func (r *Runner) sleepCtx(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-t.C:
	}
}

// audienceFailed leaves a run whose audience source failed at its cursor,
// to be tried again after RetryPause; from the failuresBeforeError-th
// failure in a row on, the run's last_error says why (GET
// /v1/rules/{name}/runs). It returns err.
func (r *Runner) audienceFailed(ctx context.Context, run heraldtype.RuleRun, err error) error {
	if ctx.Err() != nil {
		return err
	}
	key := runKey(run)
	r.mu.Lock()
	r.failed[key]++
	n := r.failed[key]
	r.notBefore[key] = r.cfg.Now().Add(r.cfg.RetryPause)
	r.mu.Unlock()
	if n < failuresBeforeError {
		return err
	}
	msg := fmt.Sprintf("%v (failed %d times in a row; tried again every %v)", err, n, r.cfg.RetryPause)
	_, werr := r.cfg.Store.AdvanceRuleRun(ctx, store.RuleBatch{Rule: run.Rule, RunID: run.ID, Version: run.Version,
		Cursor: run.Cursor, LastError: msg, Now: r.cfg.Now().UTC()})
	return errors.Join(err, werr)
}

// forget forgets a run's audience failures in a row: it answered, or it
// ended.
func (r *Runner) forget(run heraldtype.RuleRun) {
	key := runKey(run)
	r.mu.Lock()
	delete(r.failed, key)
	delete(r.notBefore, key)
	r.mu.Unlock()
}

// stopped says why a run must stop: its rule was deleted or disabled.
func (r *Runner) stopped(ctx context.Context, name string) (string, error) {
	rule, err := r.cfg.Store.GetRule(ctx, name)
	switch {
	case heraldtype.ErrorCode(err) == heraldtype.ENOTFOUND:
		return "the rule was deleted", nil
	case err != nil:
		return "", err
	case rule.Disabled:
		return "the rule was disabled", nil
	}
	return "", nil
}

// fill builds the batch's notifications. Content the pipeline refuses
// fails the run; users that do not exist (an explicit list) are left out.
func (r *Runner) fill(ctx context.Context, run heraldtype.RuleRun, users []audience.User, b *store.RuleBatch) error {
	ids := make([]string, len(users))
	for i, u := range users {
		ids[i] = u.ID
	}
	b.Recipients, b.Cursor = len(users), ids[len(ids)-1]
	p, err := r.cfg.Build(ctx, run, ids)
	switch heraldtype.ErrorCode(err) {
	case "":
		b.Enqueue = &p
	case heraldtype.EINVALID:
		b.Finish, b.LastError = heraldtype.RunFailed, err.Error()
	default:
		return err
	}
	if b.Enqueue != nil {
		b.Enqueue.Now = r.cfg.Now().UTC()
	}
	b.Now = r.cfg.Now().UTC()
	return nil
}

// advance writes a batch; an enqueue refused for a user that does not
// exist is written again without the users that do not.
func (r *Runner) advance(ctx context.Context, run heraldtype.RuleRun, b store.RuleBatch) (store.RuleBatchResult, error) {
	if b.Now.IsZero() {
		b.Now = r.cfg.Now().UTC()
	}
	res, err := r.cfg.Store.AdvanceRuleRun(ctx, b)
	if heraldtype.ErrorCode(err) == heraldtype.ENOTFOUND && b.Enqueue != nil {
		b.Enqueue, b.LastError, err = r.existing(ctx, b.Enqueue)
		if err != nil {
			return res, err
		}
		res, err = r.cfg.Store.AdvanceRuleRun(ctx, b)
	}
	if err != nil || !res.Applied {
		return res, err
	}
	name := r.cfg.Metrics.Rule(run.Rule)
	if b.Enqueue != nil {
		r.cfg.Metrics.RuleRecipients.WithLabelValues(name).Add(float64(len(b.Enqueue.Notifications)))
		if r.cfg.Enqueued != nil {
			r.cfg.Enqueued(run.Job.Notification.Type, res.Result)
		}
	}
	if b.Finish != "" {
		r.cfg.Metrics.RuleRuns.WithLabelValues(string(b.Finish)).Inc()
		r.cfg.Metrics.RuleAudience.WithLabelValues(name).Observe(float64(res.Run.Recipients))
		r.log.Info("rules: run finished", "rule", run.Rule, "run", run.ID, "state", b.Finish,
			"recipients", res.Run.Recipients, "enqueued", res.Run.Enqueued, "last_error", res.Run.LastError)
	}
	return res, nil
}

// existing is p without the notifications of users that do not exist.
func (r *Runner) existing(ctx context.Context, p *store.EnqueueParams) (*store.EnqueueParams, string, error) {
	var keep []heraldtype.Notification
	var missing []string
	for _, n := range p.Notifications {
		_, err := r.cfg.Store.GetUser(ctx, n.UserID)
		switch heraldtype.ErrorCode(err) {
		case "":
			keep = append(keep, n)
		case heraldtype.ENOTFOUND:
			missing = append(missing, n.UserID)
		default:
			return nil, "", err
		}
	}
	last := ""
	if len(missing) > 0 {
		last = fmt.Sprintf("%d listed users do not exist (first: %q)", len(missing), missing[0])
	}
	if len(keep) == 0 {
		return nil, last, nil
	}
	q := *p
	q.Notifications = keep
	return &q, last, nil
}
