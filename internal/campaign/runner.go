// Package campaign is the campaign runner (issue 19 item 6, S3.7): a
// leader daemon that starts each campaign's due runs once per due time
// across the cluster and fans each run out to its audience in batches,
// under a per-campaign cluster lock held like ShedLock (at most 1 h, at
// least 5 min).
//
// A run's state is rows, never memory. Starting a scheduled run moves the
// campaign's next_at on and creates the run row in one transaction guarded
// by the campaign's version (store.Campaigns.StartCampaignRun), so of two
// runners only one starts a due time. Each batch — a keyset page of the
// audience (internal/audience), the content fetched for it and rendered
// per user — is written with the run's advanced cursor, its counts and one
// recipient record per user in one transaction
// (store.Campaigns.AdvanceCampaignRun), guarded by the run's version. A
// crash anywhere leaves the run running at its last cursor; the next
// leader resumes it, and nobody is reached twice by one run.
package campaign

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"

	"go.opentelemetry.io/otel/trace"

	"github.com/heraldhq/herald/heraldtype"
	"github.com/heraldhq/herald/internal/audience"
	"github.com/heraldhq/herald/internal/callout"
	"github.com/heraldhq/herald/internal/maintenance"
	"github.com/heraldhq/herald/internal/metrics"
	"github.com/heraldhq/herald/internal/schedule"
	"github.com/heraldhq/herald/internal/tmpl"
	"github.com/heraldhq/herald/store"
)

// Store is what the runner needs of the database (store.Campaigns and the
// cluster lock document each call).
type Store interface {
	audience.Store
	maintenance.Locker
	GetCampaign(ctx context.Context, name string) (heraldtype.Campaign, error)
	DueCampaigns(ctx context.Context, now time.Time, limit int) ([]heraldtype.Campaign, error)
	NextCampaignAt(ctx context.Context) (time.Time, bool, error)
	StartCampaignRun(ctx context.Context, p store.CampaignRunStart) (store.CampaignRunStarted, error)
	RunningCampaignRuns(ctx context.Context, limit int) ([]heraldtype.CampaignRun, error)
	AdvanceCampaignRun(ctx context.Context, b store.CampaignBatch) (store.CampaignBatchResult, error)
	ReachedRecipients(ctx context.Context, campaign, runID string, userIDs []string) (map[string]bool, error)
}

// Message is one recipient's notification, rendered, for Build.
type Message struct {
	Campaign heraldtype.Campaign
	Run      heraldtype.CampaignRun
	UserID   string
	Rendered
	// SendAt is when it is due (zero: now) — the run's wall time in the
	// user's zone for a local-time campaign.
	SendAt time.Time
}

// Config configures a Runner. Store, Build and Owner are required.
type Config struct {
	Store Store
	// Build makes the trigger of one recipient's notification (the type's
	// defaults, validation, routing). An error is that recipient's: it is
	// counted render_failed on the run with the error, and the run goes on.
	Build func(ctx context.Context, m Message) (store.EnqueueParams, error)
	// Enqueued is told of every batch the store wrote (metrics, waking
	// the workers and the inbox streams). Optional.
	Enqueued func(typ string, res store.EnqueueResult)
	Owner    string
	// DefaultZone is the zone of a schedule that names none (default
	// Asia/Seoul), and of users without one for local-time delivery.
	DefaultZone string
	// BatchSize is how many recipients one batch takes (S3.5). Default 500.
	BatchSize int
	// Pause is the wait between two batches of a run, so a large audience
	// does not swamp the pipeline (S3.5). Default 50 ms (the seed's);
	// negative: none.
	Pause time.Duration
	// LockAtMost and LockAtLeast are the per-campaign cluster lock's
	// ShedLock bounds (S3.7). Defaults 1 h and 5 min; a negative
	// LockAtLeast: none. A run longer than LockAtMost stops at it and is
	// resumed by the next tick.
	LockAtMost, LockAtLeast time.Duration
	// Poll bounds how long an idle runner sleeps before looking again
	// (another instance may have written a campaign or a manual run).
	// Default 1 s.
	Poll time.Duration
	// Templates bound each recipient's render (internal/tmpl: steps and
	// bytes built; zero fields take its defaults). A recipient over them
	// is counted render_failed.
	Templates tmpl.Limits
	// Caller calls the fetch endpoints through the outbound guard, with
	// the declared secrets. Required to run a campaign that fetches:
	// without it every fetch fails.
	Caller *callout.Caller
	// Fetch bounds what one fetch answer may hold (zero: the defaults).
	Fetch   FetchLimits
	Now     func() time.Time
	Metrics *metrics.Metrics
	Logger  *slog.Logger
	// Tracer records a "herald.campaign.batch" span per batch, the root
	// of a trace its notifications' sends continue. Nil: tracing is off.
	Tracer trace.Tracer
}

// Defaults of Config.
const (
	DefaultBatchSize   = 500
	DefaultPause       = 50 * time.Millisecond
	DefaultLockAtMost  = time.Hour
	DefaultLockAtLeast = 5 * time.Minute
	DefaultPoll        = time.Second
	// maxDue bounds the campaigns one tick starts, and the runs it resumes.
	maxDue = 100
)

// LockPrefix names a campaign's cluster lock: LockPrefix + name.
const LockPrefix = "herald.campaign:"

// Runner starts and runs campaigns.
type Runner struct {
	cfg  Config
	log  *slog.Logger
	wake chan struct{}

	mu      sync.Mutex
	content map[contentKey]*Content
}

type contentKey struct {
	name    string
	version int64
}

// New checks cfg and fills its defaults.
func New(cfg Config) (*Runner, error) {
	if cfg.Store == nil || cfg.Build == nil || cfg.Owner == "" {
		return nil, errors.New("campaign: Store, Build and Owner are required")
	}
	if cfg.DefaultZone == "" {
		cfg.DefaultZone = schedule.DefaultZone
	}
	if cfg.BatchSize <= 0 {
		cfg.BatchSize = DefaultBatchSize
	}
	if cfg.BatchSize > store.MaxAudiencePage {
		return nil, fmt.Errorf("campaign: batch size %d is above %d", cfg.BatchSize, store.MaxAudiencePage)
	}
	if cfg.Pause == 0 {
		cfg.Pause = DefaultPause
	}
	if cfg.LockAtMost <= 0 {
		cfg.LockAtMost = DefaultLockAtMost
	}
	switch {
	case cfg.LockAtLeast == 0:
		cfg.LockAtLeast = DefaultLockAtLeast
	case cfg.LockAtLeast < 0:
		cfg.LockAtLeast = 0
	}
	if cfg.LockAtLeast > cfg.LockAtMost {
		return nil, fmt.Errorf("campaign: need 0 <= lock at least (%v) <= lock at most (%v)", cfg.LockAtLeast, cfg.LockAtMost)
	}
	if cfg.Poll <= 0 {
		cfg.Poll = DefaultPoll
	}
	if err := cfg.Fetch.Check(); err != nil {
		return nil, fmt.Errorf("campaign: %w", err)
	}
	cfg.Fetch = cfg.Fetch.withDefaults()
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
	return &Runner{cfg: cfg, log: log, wake: make(chan struct{}, 1), content: map[contentKey]*Content{}}, nil
}

// Name names the runner among the leader's services.
func (r *Runner) Name() string { return "campaign_runner" }

// Wake tells a sleeping runner to look again (a manual run was asked for).
func (r *Runner) Wake() {
	select {
	case r.wake <- struct{}{}:
	default:
	}
}

// Run starts and runs campaigns until ctx (the leader's term) ends.
func (r *Runner) Run(ctx context.Context) {
	for ctx.Err() == nil {
		err := r.Tick(ctx)
		if err != nil && ctx.Err() == nil {
			r.log.Error("campaign: tick failed", "err", err)
		}
		r.sleep(ctx, err != nil)
	}
}

// sleep waits for the next due campaign, a Wake or at most Poll; after a
// failed tick always Poll, so a failure that lasts is not retried in a
// tight loop.
func (r *Runner) sleep(ctx context.Context, failed bool) {
	d := r.cfg.Poll
	if next, ok, err := r.cfg.Store.NextCampaignAt(ctx); err == nil && ok && !failed {
		d = min(d, max(next.Sub(r.cfg.Now()), 0))
	}
	if d == 0 {
		d = time.Millisecond // a campaign due now that could not start (locked): do not spin
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-r.wake:
	case <-t.C:
	}
}

// Tick starts the runs now due, then runs every unfinished run (new,
// manual, or left by a crashed runner) as far as it goes, each under its
// campaign's cluster lock. A campaign whose lock another instance holds
// is left for a later tick.
func (r *Runner) Tick(ctx context.Context) error {
	now := r.cfg.Now().UTC()
	due, err := r.cfg.Store.DueCampaigns(ctx, now, maxDue)
	if err != nil {
		return err
	}
	var errs []error
	for _, c := range due {
		if err := r.startDue(ctx, c, now); err != nil {
			errs = append(errs, fmt.Errorf("campaign %q: %w", c.Name, err))
		}
	}
	runs, err := r.cfg.Store.RunningCampaignRuns(ctx, maxDue)
	if err != nil {
		return errors.Join(append(errs, err)...)
	}
	// One lock per campaign: its runs (several after an "all" catch-up)
	// run one after the other under it, oldest first.
	var order []string
	byCampaign := map[string][]heraldtype.CampaignRun{}
	for _, run := range runs {
		if _, ok := byCampaign[run.Campaign]; !ok {
			order = append(order, run.Campaign)
		}
		byCampaign[run.Campaign] = append(byCampaign[run.Campaign], run)
	}
	for _, name := range order {
		if ctx.Err() != nil {
			break
		}
		err := maintenance.RunLocked(ctx, r.cfg.Store, r.cfg.Owner, LockPrefix+name, r.cfg.Now,
			r.cfg.LockAtMost, r.cfg.LockAtLeast, func(ctx context.Context) error {
				var errs []error
				for _, run := range byCampaign[name] {
					if err := r.execute(ctx, run); err != nil {
						errs = append(errs, fmt.Errorf("run %q: %w", run.ID, err))
					}
				}
				return errors.Join(errs...)
			})
		switch {
		case errors.Is(err, maintenance.ErrLocked):
			r.cfg.Metrics.Campaigns.WithLabelValues("locked").Inc()
		case err != nil:
			errs = append(errs, fmt.Errorf("campaign %q: %w", name, err))
		}
	}
	return errors.Join(errs...)
}

// Plan compiles a campaign's schedule: in its zone, or on the earliest
// wall clock on earth for local-time delivery.
func Plan(c heraldtype.Campaign, defaultZone string) (*schedule.Plan, error) {
	zone := c.Schedule.TimeZone
	if c.LocalTime {
		zone = schedule.EarliestZone
	} else if zone == "" {
		zone = defaultZone
	}
	return schedule.Compile(c.Schedule, zone)
}

// Anchor is a campaign's schedule anchor: its name seeds the spread, its
// last update is the RRULE's DTSTART.
func Anchor(c heraldtype.Campaign) schedule.Anchor {
	return schedule.Anchor{Key: "campaign:" + c.Name, Start: c.UpdatedAt}
}

// startDue decides what a due campaign fires now (catch-up after a
// downtime, issue 19 item 7) and starts it: the first run moves the
// schedule on, guarded by the version read, so another runner that read
// the same campaign starts nothing.
func (r *Runner) startDue(ctx context.Context, c heraldtype.Campaign, now time.Time) error {
	plan, err := Plan(c, r.cfg.DefaultZone)
	if err != nil {
		// A stored schedule that no longer compiles (a zone the tz database
		// dropped) would be due forever: its next_at is cleared (GET shows
		// none), and the log says why. A PUT with a valid schedule revives it.
		r.log.Warn("campaign: a campaign's schedule no longer compiles; it will not run on schedule", "campaign", c.Name, "err", err)
		_, err := r.cfg.Store.StartCampaignRun(ctx, store.CampaignRunStart{Campaign: c.Name, Now: now,
			Advance: &store.CampaignAdvance{Version: c.Version}})
		return err
	}
	d := plan.CatchUp(Anchor(c), plan.Restore(c.NextOccurrence, c.NextAt, 0), 0, now)
	adv := &store.CampaignAdvance{Version: c.Version}
	if !d.Done {
		adv.NextAt, adv.NextOccurrence = d.Next.Due, d.Next.At
	}
	if d.Missed > 0 {
		r.cfg.Metrics.Campaigns.WithLabelValues("missed").Add(float64(d.Missed))
	}
	if len(d.Fire) == 0 {
		_, err := r.cfg.Store.StartCampaignRun(ctx, store.CampaignRunStart{Campaign: c.Name, Advance: adv, Now: now})
		return err
	}
	for i, o := range d.Fire {
		p := store.CampaignRunStart{Campaign: c.Name, RunID: o.ID(), Occurrence: o.At, Now: now}
		if i == 0 {
			p.Advance = adv
		}
		res, err := r.cfg.Store.StartCampaignRun(ctx, p)
		if err != nil {
			return err
		}
		if i == 0 && !res.Advanced {
			return nil // another runner started this due time
		}
		if res.Started {
			r.cfg.Metrics.Campaigns.WithLabelValues("started").Inc()
			r.log.Info("campaign: run started", "campaign", c.Name, "run", o.ID())
		}
	}
	return nil
}

// IsManual reports a manual run's id.
func IsManual(runID string) bool { return strings.HasPrefix(runID, ManualPrefix) }

// ManualPrefix begins the id of a run asked for by hand.
const ManualPrefix = "manual-"
