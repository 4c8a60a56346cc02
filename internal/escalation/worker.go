package escalation

import (
	"cmp"
	"context"
	"errors"
	"log/slog"
	"time"

	"github.com/heraldhq/herald/heraldtype"
	"github.com/heraldhq/herald/internal/poll"
	"github.com/heraldhq/herald/store"
)

// Store is what the Worker needs of the store.
type Store interface {
	ClaimEscalations(ctx context.Context, p store.EscalationClaimParams) ([]store.ClaimedEscalation, error)
	FireEscalation(ctx context.Context, f store.EscalationFire) (outcome, reason string, res store.EnqueueResult, err error)
}

// Build makes a claimed step's notification (a trigger with the
// idempotency key store.EscalationIdempotencyKey). It returns a *Failure
// when the step cannot be sent (its notification or type is gone): the
// step is then stopped with it. Any other error leaves the step to its
// lease's end.
type Build func(ctx context.Context, c store.ClaimedEscalation) (*store.EnqueueParams, error)

// Failure is a step that cannot be sent; Reason is kept on the row.
type Failure struct{ Reason string }

func (f *Failure) Error() string { return f.Reason }

// Outcomes a Worker reports (Config.Outcome, the metric's bounded label
// set): a step fired, stopped by a receipt found at its fire, or failed.
const (
	OutcomeEscalated = "escalated"
	OutcomeStopped   = "stopped"
	OutcomeFailed    = "failed"
)

// Defaults of Config.
const (
	DefaultPollInterval = time.Second
	DefaultBatchSize    = 100
	DefaultLease        = 30 * time.Second
)

// Config configures a Worker.
type Config struct {
	Store Store
	Build Build
	// Owner names this instance in the steps' leases.
	Owner string
	// PollInterval is how often an idle worker looks for due steps.
	PollInterval time.Duration
	// BatchSize bounds one claim.
	BatchSize int
	// Lease is how long a claimed step is this worker's: one that dies
	// before its fire leaves the step to be claimed again after it.
	Lease time.Duration
	// Now is the clock; default time.Now.
	Now    func() time.Time
	Logger *slog.Logger
	// Fired, when set, is told once per claimed batch, after its fires,
	// of the notifications they enqueued (their results merged), so the
	// delivery workers are woken once and claim the batch's deliveries
	// together rather than one by one; Outcome is told of each step settled:
	// OutcomeEscalated, OutcomeStopped or OutcomeFailed.
	Fired   func(res store.EnqueueResult)
	Outcome func(outcome string)
}

// Worker claims due escalation steps and fires them. Every instance runs
// one: claims are FOR UPDATE SKIP LOCKED, so workers never take one step
// twice while its lease lasts, and the fire's guard refuses a step whose
// lease another worker took since.
type Worker struct {
	cfg  Config
	loop *poll.Loop
}

// New checks cfg and fills its defaults.
func New(cfg Config) (*Worker, error) {
	if cfg.Store == nil || cfg.Build == nil || cfg.Owner == "" {
		return nil, errors.New("escalation: Store, Build and Owner are required")
	}
	if cfg.PollInterval < 0 || cfg.BatchSize < 0 || cfg.Lease < 0 {
		return nil, errors.New("escalation: PollInterval, BatchSize and Lease must not be negative")
	}
	cfg.PollInterval = cmp.Or(cfg.PollInterval, DefaultPollInterval)
	cfg.BatchSize = cmp.Or(cfg.BatchSize, DefaultBatchSize)
	cfg.Lease = cmp.Or(cfg.Lease, DefaultLease)
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	w := &Worker{cfg: cfg}
	w.loop = poll.New(cfg.PollInterval, poll.ClaimRound(cfg.BatchSize, w.RunOnce, cfg.Logger, "escalation"))
	return w, nil
}

// Start runs the worker's loop until Stop.
func (w *Worker) Start(ctx context.Context) { w.loop.Start(ctx) }

// Stop ends the loop after the batch in hand, or when ctx ends; a step
// claimed and not fired is claimed again once its lease ends.
func (w *Worker) Stop(ctx context.Context) error { return w.loop.Stop(ctx) }

// RunOnce claims one batch of due steps and fires each; it returns how
// many it claimed.
func (w *Worker) RunOnce(ctx context.Context) (int, error) {
	now := w.cfg.Now()
	claimed, err := w.cfg.Store.ClaimEscalations(ctx, store.EscalationClaimParams{Owner: w.cfg.Owner, Now: now,
		LeaseUntil: now.Add(w.cfg.Lease), Limit: w.cfg.BatchSize})
	if err != nil {
		return 0, err
	}
	var errs []error
	var fired store.EnqueueResult
	for _, c := range claimed {
		if err := w.fire(ctx, c, &fired); err != nil {
			errs = append(errs, err)
		}
	}
	if len(fired.Notifications) > 0 && w.cfg.Fired != nil {
		w.cfg.Fired(fired)
	}
	return len(claimed), errors.Join(errs...)
}

// fire builds and fires one claimed step. A step whose notification the
// store refuses as invalid or whose user is gone is stopped with the
// reason; any other error leaves it to its lease's end, to be claimed
// again.
func (w *Worker) fire(ctx context.Context, c store.ClaimedEscalation, fired *store.EnqueueResult) error {
	p, err := w.cfg.Build(ctx, c)
	f := store.EscalationFire{NotificationID: c.NotificationID, Step: c.Step, Owner: w.cfg.Owner, Now: w.cfg.Now(), Enqueue: p}
	var failure *Failure
	switch {
	case errors.As(err, &failure):
		f.Enqueue, f.Failure = nil, failure.Reason
	case err != nil:
		return err
	}
	outcome, reason, res, err := w.cfg.Store.FireEscalation(ctx, f)
	if code := heraldtype.ErrorCode(err); err != nil && f.Failure == "" && (code == heraldtype.ENOTFOUND || code == heraldtype.EINVALID) {
		f.Enqueue, f.Failure = nil, err.Error() // "not_found: user … not found"
		outcome, reason, res, err = w.cfg.Store.FireEscalation(ctx, f)
	}
	if err != nil {
		return err
	}
	var label string
	switch {
	case outcome == "":
		return nil // another worker holds it now, or a receipt or a cancel stopped it
	case outcome == heraldtype.EscalationFired:
		label = OutcomeEscalated
		fired.Notifications = append(fired.Notifications, res.Notifications...)
		fired.Inbox = append(fired.Inbox, res.Inbox...)
	case f.Failure != "" && reason == f.Failure:
		label = OutcomeFailed
		w.cfg.Logger.Warn("escalation: not sent", "notification", c.NotificationID, "step", c.Step, "reason", reason)
	default:
		label = OutcomeStopped
	}
	if w.cfg.Outcome != nil {
		w.cfg.Outcome(label)
	}
	return nil
}
