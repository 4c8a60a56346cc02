// Package reminder is the reminder scheduler (issue 19; S2.1–S2.7): a
// leader daemon that claims due reminder rows, decides each occurrence
// with the time evaluator (internal/schedule) and writes every decision
// of a batch — the notifications and the advanced rows — in one store
// transaction.
package reminder

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"sync"
	"time"

	"go.opentelemetry.io/otel/trace"

	"github.com/heraldhq/herald/heraldtype"
	"github.com/heraldhq/herald/internal/metrics"
	"github.com/heraldhq/herald/internal/schedule"
	"github.com/heraldhq/herald/store"
)

// Store is what the scheduler needs of the database: the reminder rows
// (store.Reminders documents each call).
type Store interface {
	ClaimReminders(ctx context.Context, p store.ReminderClaimParams) ([]store.ReminderClaim, error)
	FireReminders(ctx context.Context, owner string, fires []store.ReminderFire, now time.Time) ([]store.FireResult, error)
	ReleaseReminders(ctx context.Context, owner string, ids []string) error
	NextReminderAt(ctx context.Context) (time.Time, bool, error)
}

// Firing is one occurrence the scheduler is about to send.
type Firing struct {
	Claim store.ReminderClaim
	// N is the occurrence's send number: the reminder's sent count after
	// it. The sent count only grows, so (reminder id, N) names the send
	// for as long as the reminder lives: the idempotency key
	// reminder:{id}:{N} (S2.6).
	N          int
	Occurrence schedule.Occurrence
}

// Config configures a Scheduler. Store, Build and Owner are required.
type Config struct {
	Store Store
	// Build makes the trigger of an occurrence (validation, routing, the
	// idempotency key reminder:{id}:{N}). An error with code EINVALID or
	// ENOTFOUND stops the reminder (StopRejected, StopUserGone): a retry
	// cannot fix it. Any other error releases it to be tried again.
	Build func(ctx context.Context, f Firing) (*store.EnqueueParams, error)
	// InQuietHours reports whether the user of c is in the quiet hours of
	// c's type at t; consulted only for reminders that skip quiet hours
	// (S2.5). Nil: never.
	InQuietHours func(ctx context.Context, c store.ReminderClaim, t time.Time) (bool, error)
	Owner        string
	// DefaultZone evaluates the schedules of users without a zone.
	// Default Asia/Seoul (S2.2).
	DefaultZone string
	// Lease is how long a claim holds reminders; a crashed scheduler's
	// claims are taken over when it ends (S2.4). Default 30 s.
	Lease time.Duration
	// BatchSize is how many due reminders one claim takes (S2.7
	// fetch_limit). Default 500.
	BatchSize int
	// Gap is the least time between two occurrences of one user's
	// reminders (S2.5), and between two of one reminder's own (issue 31
	// item 6: nearer occurrences of its schedule are passed over). Default
	// 60 s; negative: no gap.
	Gap time.Duration
	// Poll bounds how long an idle scheduler sleeps before looking for
	// due reminders (another instance may have written one). Default 500 ms.
	Poll    time.Duration
	Now     func() time.Time
	Metrics *metrics.Metrics
	Logger  *slog.Logger
	// Tracer records a "herald.reminder.batch" span per batch of due
	// reminders, the root of a trace their occurrences' sends continue.
	// Nil: tracing is off.
	Tracer trace.Tracer
}

// Defaults of Config.
const (
	DefaultLease     = 30 * time.Second
	DefaultBatchSize = 500
	DefaultGap       = 60 * time.Second
	DefaultPoll      = 500 * time.Millisecond
)

// Scheduler turns due reminders into notifications, exactly once per
// occurrence (S2.4, S2.6): it claims a batch with a lease, decides each
// occurrence (stop, skip, move or send; the next due time), and writes
// every decision — the notifications and the advanced reminders — in one
// transaction guarded by the claimed versions. A crash before that commit
// leaves the batch to the lease's successor; a cancel committed after the
// claim makes its reminder's fire write nothing.
type Scheduler struct {
	cfg  Config
	log  *slog.Logger
	wake chan struct{}

	mu    sync.Mutex
	plans map[planKey]*schedule.Plan
}

type planKey struct {
	s    string
	zone string
}

// New checks cfg and fills its defaults.
func New(cfg Config) (*Scheduler, error) {
	if cfg.Store == nil || cfg.Build == nil || cfg.Owner == "" {
		return nil, errors.New("reminder: Store, Build and Owner are required")
	}
	if cfg.DefaultZone == "" {
		cfg.DefaultZone = schedule.DefaultZone
	}
	if cfg.Lease <= 0 {
		cfg.Lease = DefaultLease
	}
	if cfg.BatchSize <= 0 {
		cfg.BatchSize = DefaultBatchSize
	}
	if cfg.Gap == 0 {
		cfg.Gap = DefaultGap
	}
	if cfg.Poll <= 0 {
		cfg.Poll = DefaultPoll
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
	return &Scheduler{cfg: cfg, log: log, wake: make(chan struct{}, 1), plans: map[planKey]*schedule.Plan{}}, nil
}

// Wake tells a sleeping scheduler that a reminder is due at t.
func (s *Scheduler) Wake(t time.Time) {
	if t.After(s.cfg.Now().Add(s.cfg.Poll)) {
		return
	}
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

// Name names the scheduler among the leader's services. The scheduler
// is a leadership.Daemon: Run drains due reminders for the leader's whole
// term, so the election's tick (seconds) does not bound its lag.
func (s *Scheduler) Name() string { return "reminder_scheduler" }

// Counts is what the scheduler did, by event (claimed, enqueued, …).
type Counts map[string]int

func (c Counts) add(o Counts) {
	for k, v := range o {
		c[k] += v
	}
}

// Run drains due reminders until ctx ends, then logs what it did.
func (s *Scheduler) Run(ctx context.Context) {
	total := Counts{}
	defer func() {
		if len(total) > 0 {
			s.log.Info("reminder: reminder scheduler stopped", "counts", map[string]int(total))
		}
	}()
	for ctx.Err() == nil {
		c, full, err := s.Tick(ctx)
		total.add(c)
		if err != nil && ctx.Err() == nil {
			s.log.Error("reminder: reminder batch failed", "err", err)
		}
		if full && err == nil {
			continue
		}
		s.sleep(ctx)
	}
}

// sleep waits for the next due reminder, a Wake or at most Poll.
func (s *Scheduler) sleep(ctx context.Context) {
	d := s.cfg.Poll
	if next, ok, err := s.cfg.Store.NextReminderAt(ctx); err == nil && ok {
		if until := next.Sub(s.cfg.Now()); until < d {
			d = max(until, 0)
		}
	}
	if d == 0 {
		return
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-s.wake:
	case <-t.C:
	}
}

// Tick claims one batch of due reminders as of now and fires it. full
// reports a batch of BatchSize (more are probably due).
func (s *Scheduler) Tick(ctx context.Context) (Counts, bool, error) {
	// Processing time is measured on the machine's clock, not the
	// injected one that decides due times.
	started := time.Now()
	now := s.cfg.Now().UTC()
	claims, err := s.cfg.Store.ClaimReminders(ctx, store.ReminderClaimParams{
		Owner: s.cfg.Owner, Now: now, LeaseUntil: now.Add(s.cfg.Lease), Limit: s.cfg.BatchSize,
	})
	if err != nil || len(claims) == 0 {
		if err != nil {
			s.observe(started, err)
		}
		return Counts{}, false, err
	}
	counts := Counts{"claimed": len(claims)}
	for _, c := range claims {
		if c.Rescued {
			counts["rescued"]++
		}
	}
	ctx, span := s.startBatch(ctx, len(claims))
	defer func() { endBatch(span, counts, err) }()
	fires, release := s.decide(ctx, claims, now, counts)
	if len(release) > 0 {
		if err := s.cfg.Store.ReleaseReminders(ctx, s.cfg.Owner, release); err != nil {
			s.log.Warn("reminder: cannot release reminders; their lease will end", "err", err, "reminders", len(release))
		}
		counts["released"] += len(release)
	}
	err = s.fire(ctx, fires, counts)
	s.record(counts)
	s.observe(started, err)
	if s.log.Enabled(ctx, slog.LevelDebug) {
		s.log.Debug("reminder: batch done", "counts", map[string]int(counts), "duration", time.Since(started), "err", err)
	}
	return counts, len(claims) == s.cfg.BatchSize, err
}

// observe records a batch's processing time (S2.7).
func (s *Scheduler) observe(started time.Time, err error) {
	outcome := metrics.BatchOK
	if err != nil {
		outcome = metrics.BatchError
	}
	s.cfg.Metrics.ReminderBatchDuration.WithLabelValues(outcome).Observe(time.Since(started).Seconds())
}

// decide makes the fire of each claim, or puts it in release when it must
// be tried again later.
func (s *Scheduler) decide(ctx context.Context, claims []store.ReminderClaim, now time.Time, counts Counts) (fires []pending, release []string) {
	lastOfUser := map[string]time.Time{}
	debug := s.log.Enabled(ctx, slog.LevelDebug) // log.debug: [reminder]
	for _, c := range claims {
		f, ok := s.decideOne(ctx, c, now, lastOfUser, counts)
		if debug {
			s.log.Debug("reminder: decided", "reminder", c.Key, "id", c.ID, "user_id", c.UserID, "due", c.NextAt,
				"sent_count", c.SentCount, "sends", f.Sends, "next_at", f.NextAt, "stop_reason", f.StopReason, "retry", !ok)
		}
		if !ok {
			release = append(release, c.ID)
			continue
		}
		fires = append(fires, f)
	}
	return fires, release
}

// pending is a fire and what the metrics need once it is applied.
type pending struct {
	store.ReminderFire
	due time.Time
}

func (s *Scheduler) decideOne(ctx context.Context, c store.ReminderClaim, now time.Time, lastOfUser map[string]time.Time, counts Counts) (pending, bool) {
	f := pending{ReminderFire: store.ReminderFire{ID: c.ID, Version: c.Version}, due: c.NextAt}
	stop := func(reason string) (pending, bool) {
		f.StopReason = reason
		return f, true
	}
	plan, err := s.plan(c)
	if err != nil {
		// A stored schedule that no longer compiles (a zone the tz database
		// dropped) would never fire again: it stops, visibly.
		s.log.Warn("reminder: a reminder's schedule no longer compiles; stopping it", "reminder", c.Key, "err", err)
		return stop(heraldtype.StopRejected)
	}
	if c.Stop.MaxSends > 0 && c.SentCount >= c.Stop.MaxSends {
		return stop(heraldtype.StopMaxSends)
	}
	if !c.Stop.ExpiresAt.IsZero() && c.NextAt.After(c.Stop.ExpiresAt) {
		return stop(heraldtype.StopExpired)
	}
	a := schedule.Anchor{Key: c.ID, Start: c.ScheduleStart}
	due := plan.Restore(c.NextOccurrence, c.NextAt, c.SentCount)
	d := plan.CatchUp(a, due, c.SentCount, now)
	if d.Missed > 0 {
		counts["missed"] += d.Missed
	}
	fire := d.Fire
	if left := c.Stop.MaxSends - c.SentCount; c.Stop.MaxSends > 0 && len(fire) > left {
		fire = fire[len(fire)-left:]
	}
	if len(fire) > 0 && s.cfg.Gap > 0 {
		last := c.UserLastSentAt
		if l := lastOfUser[c.UserID]; l.After(last) {
			last = l
		}
		// Issue 31 item 6: the plan keeps the reminder's own occurrences
		// apart from one another (WithSpacing), but an update restarts the
		// schedule, so its first occurrence is kept apart from the last
		// send here.
		if c.ScheduleStart.After(c.LastSentAt) && c.LastSentAt.After(last) {
			last = c.LastSentAt
		}
		if !last.IsZero() && now.Sub(last) < s.cfg.Gap {
			// S2.5: moved, not sent: past the gap by a deterministic jitter,
			// so two reminders of one user never fire together and no retry
			// loops. The occurrence keeps its identity.
			f.NextAt = last.Add(s.cfg.Gap).Add(schedule.Jitter(c.UserID, due.ID(), s.cfg.Gap))
			f.NextOccurrence = due.At
			counts["collided"]++
			return f, true
		}
	}
	if len(fire) > 0 && c.QuietHours == "skip" && s.cfg.InQuietHours != nil {
		quiet, err := s.cfg.InQuietHours(ctx, c, now)
		if err != nil {
			s.log.Warn("reminder: cannot read quiet hours; trying the reminder again", "reminder", c.Key, "err", err)
			return f, false
		}
		if quiet {
			counts["skipped_quiet_hours"] += len(fire)
			fire = nil
			if plan.Kind() == schedule.KindBackoff {
				// Not sent: the backoff does not grow.
				d.Next, _ = plan.Next(a, now, c.SentCount)
			}
		}
	}
	for i, o := range fire {
		p, err := s.cfg.Build(ctx, Firing{Claim: c, N: c.SentCount + 1 + i, Occurrence: o})
		switch heraldtype.ErrorCode(err) {
		case "":
		case heraldtype.ENOTFOUND:
			return stop(heraldtype.StopUserGone)
		case heraldtype.EINVALID:
			s.log.Warn("reminder: a reminder's occurrence is no longer valid; stopping it", "reminder", c.Key, "err", err)
			return stop(heraldtype.StopRejected)
		default:
			s.log.Warn("reminder: cannot build a reminder's occurrence; trying again", "reminder", c.Key, "err", err)
			return f, false
		}
		if f.Enqueue == nil {
			// One trigger under the first send's key carries every
			// occurrence a catch-up fires.
			f.Enqueue = p
		} else {
			f.Enqueue.Notifications = append(f.Enqueue.Notifications, p.Notifications...)
		}
	}
	if f.Sends = len(fire); f.Sends > 0 {
		lastOfUser[c.UserID] = now
	}
	switch {
	case c.Stop.MaxSends > 0 && c.SentCount+f.Sends >= c.Stop.MaxSends:
		return stop(heraldtype.StopMaxSends)
	case d.Done:
		return stop(heraldtype.StopCompleted)
	case !c.Stop.ExpiresAt.IsZero() && d.Next.Due.After(c.Stop.ExpiresAt):
		return stop(heraldtype.StopExpired)
	}
	f.NextAt, f.NextOccurrence = d.Next.Due, d.Next.At
	return f, true
}

// plan compiles c's schedule in its zone, once per (schedule, zone).
func (s *Scheduler) plan(c store.ReminderClaim) (*schedule.Plan, error) {
	zone := c.Schedule.TimeZone
	if zone == "" {
		zone = c.UserTimeZone
	}
	if zone == "" {
		zone = s.cfg.DefaultZone
	}
	key := planKey{s: scheduleKey(c.Schedule), zone: zone}
	s.mu.Lock()
	p, ok := s.plans[key]
	s.mu.Unlock()
	if ok {
		return p, nil
	}
	p, err := schedule.Compile(c.Schedule, zone)
	if err != nil {
		return nil, err
	}
	p = p.WithSpacing(s.cfg.Gap)
	s.mu.Lock()
	if len(s.plans) > maxPlans {
		clear(s.plans)
	}
	s.plans[key] = p
	s.mu.Unlock()
	return p, nil
}

// maxPlans bounds the compiled-plan cache.
const maxPlans = 4096

// fire writes the batch in one transaction. When the batch fails as a
// whole, each fire is tried alone, so one reminder that cannot be written
// does not hold back the others; what still fails is released.
func (s *Scheduler) fire(ctx context.Context, fires []pending, counts Counts) error {
	if len(fires) == 0 {
		return nil
	}
	err := s.fireBatch(ctx, fires, counts)
	if err == nil || len(fires) == 1 || ctx.Err() != nil {
		if err != nil {
			s.release(ctx, fires, counts)
		}
		return err
	}
	var failed []pending
	var last error
	for _, f := range fires {
		if err := s.fireBatch(ctx, []pending{f}, counts); err != nil {
			failed, last = append(failed, f), err
		}
	}
	if len(failed) > 0 {
		s.release(ctx, failed, counts)
	}
	return last
}

func (s *Scheduler) fireBatch(ctx context.Context, fires []pending, counts Counts) error {
	batch := make([]store.ReminderFire, len(fires))
	for i, f := range fires {
		batch[i] = f.ReminderFire
	}
	now := s.cfg.Now().UTC()
	res, err := s.cfg.Store.FireReminders(ctx, s.cfg.Owner, batch, now)
	if err != nil {
		return err
	}
	for i, r := range res {
		f := fires[i]
		if !r.Applied {
			counts["raced"]++
			continue
		}
		if f.Sends > 0 {
			counts["enqueued"] += f.Sends
			s.cfg.Metrics.ReminderLag.Observe(max(now.Sub(f.due), 0).Seconds())
		}
		if f.StopReason != "" {
			counts["stopped_"+f.StopReason]++
		}
	}
	return nil
}

func (s *Scheduler) release(ctx context.Context, fires []pending, counts Counts) {
	ids := make([]string, len(fires))
	for i, f := range fires {
		ids[i] = f.ID
	}
	if err := s.cfg.Store.ReleaseReminders(context.WithoutCancel(ctx), s.cfg.Owner, ids); err != nil {
		s.log.Warn("reminder: cannot release reminders; their lease will end", "err", err, "reminders", len(ids))
	}
	counts["released"] += len(ids)
}

// record adds a batch's counts to the metrics.
func (s *Scheduler) record(c Counts) {
	const stopped = "stopped_"
	for k, v := range c {
		if v == 0 {
			continue
		}
		if len(k) > len(stopped) && k[:len(stopped)] == stopped {
			s.cfg.Metrics.RemindersStopped.WithLabelValues(k[len(stopped):]).Add(float64(v))
			continue
		}
		s.cfg.Metrics.Reminders.WithLabelValues(k).Add(float64(v))
	}
}

// scheduleKey is a schedule's identity in the plan cache.
func scheduleKey(s heraldtype.Schedule) string {
	b, _ := json.Marshal(s)
	return string(b)
}
