package digest

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
	ClaimDigests(ctx context.Context, p store.DigestClaimParams) ([]store.ClaimedDigest, error)
	FireDigest(ctx context.Context, f store.DigestFire) (bool, store.EnqueueResult, error)
	FireDigests(ctx context.Context, fs []store.DigestFire) ([]store.DigestFired, error)
	ListDigestItems(ctx context.Context, id string) ([]store.DigestItem, error)
}

// Build makes a claimed digest's notification (a trigger with the
// idempotency key store.DigestIdempotencyKey). It returns nil for a
// digest without items, and a *Failure when the digest cannot be sent
// (its message does not render, its type is no longer a digest): the
// digest is then marked failed with it. Any other error leaves the digest
// to its lease's end.
type Build func(ctx context.Context, c store.ClaimedDigest) (*store.EnqueueParams, error)

// Failure is a digest that cannot be sent; Reason is kept on the row.
type Failure struct{ Reason string }

func (f *Failure) Error() string { return f.Reason }

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
	// Owner names this instance in the digests' leases.
	Owner string
	// PollInterval is how often an idle worker looks for due digests.
	PollInterval time.Duration
	// BatchSize bounds one claim.
	BatchSize int
	// Lease is how long a claimed digest is this worker's: one that dies
	// before its fire leaves the digest to be claimed again after it.
	Lease time.Duration
	// Now is the clock; default time.Now.
	Now    func() time.Time
	Logger *slog.Logger
	// Fired, when set, is told once per claimed batch, after its fires,
	// of the notifications they enqueued (their results merged), so the
	// delivery workers are woken once and claim the batch's deliveries
	// together rather than one by one; Outcome is told of each digest settled:
	// "sent", "empty" or "failed".
	Fired   func(res store.EnqueueResult)
	Outcome func(outcome string)
}

// Worker claims due digests and fires them. Every instance runs one:
// claims are FOR UPDATE SKIP LOCKED, so workers never take one digest
// twice while its lease lasts.
type Worker struct {
	cfg  Config
	loop *poll.Loop
}

// New checks cfg and fills its defaults.
func New(cfg Config) (*Worker, error) {
	if cfg.Store == nil || cfg.Build == nil || cfg.Owner == "" {
		return nil, errors.New("digest: Store, Build and Owner are required")
	}
	if cfg.PollInterval < 0 || cfg.BatchSize < 0 || cfg.Lease < 0 {
		return nil, errors.New("digest: PollInterval, BatchSize and Lease must not be negative")
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
	w.loop = poll.New(cfg.PollInterval, poll.ClaimRound(cfg.BatchSize, w.RunOnce, cfg.Logger, "digest"))
	return w, nil
}

// Start runs the worker's loop until Stop.
func (w *Worker) Start(ctx context.Context) { w.loop.Start(ctx) }

// Stop ends the loop after the batch in hand, or when ctx ends; a digest
// claimed and not fired is claimed again once its lease ends.
func (w *Worker) Stop(ctx context.Context) error { return w.loop.Stop(ctx) }

// RunOnce claims one batch of due digests and fires each; it returns how
// many it claimed. The batch's fires are one transaction
// (Store.FireDigests); if that fails, each is fired on its own, so one
// digest the store refuses does not hold the others back.
func (w *Worker) RunOnce(ctx context.Context) (int, error) {
	now := w.cfg.Now()
	claimed, err := w.cfg.Store.ClaimDigests(ctx, store.DigestClaimParams{Owner: w.cfg.Owner, Now: now,
		LeaseUntil: now.Add(w.cfg.Lease), Limit: w.cfg.BatchSize, ReadItems: claimItems})
	if err != nil {
		return 0, err
	}
	var errs []error
	var built []store.ClaimedDigest
	var fires []store.DigestFire
	for _, c := range claimed {
		f, err := w.build(ctx, &c)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		built, fires = append(built, c), append(fires, f)
	}
	var fired store.EnqueueResult
	if len(fires) == 0 {
		// Nothing built.
	} else if got, err := w.cfg.Store.FireDigests(ctx, fires); err == nil {
		for i, c := range built {
			w.settled(c, fires[i], got[i], &fired)
		}
	} else {
		for i, c := range built {
			if err := w.fire(ctx, c, fires[i], &fired); err != nil {
				errs = append(errs, err)
			}
		}
	}
	if len(fired.Notifications) > 0 && w.cfg.Fired != nil {
		w.cfg.Fired(fired)
	}
	return len(claimed), errors.Join(errs...)
}

// claimItems bounds the items a claim reads with its digests (the rest
// are read digest by digest as each is built): what one batch holds in
// memory at once, a few MB.
const claimItems = 10_000

// build reads c's items if the claim did not and makes its fire: the
// notification, or the failure that marks it failed. An error leaves it
// to its lease's end, to be claimed again.
func (w *Worker) build(ctx context.Context, c *store.ClaimedDigest) (store.DigestFire, error) {
	if c.Items > 0 && c.Entries == nil {
		var err error
		if c.Entries, err = w.cfg.Store.ListDigestItems(ctx, c.ID); err != nil {
			return store.DigestFire{}, err
		}
	}
	p, err := w.cfg.Build(ctx, *c)
	f := store.DigestFire{ID: c.ID, Owner: w.cfg.Owner, Now: w.cfg.Now(), Enqueue: p, Cancelled: c.Cancelled}
	var failure *Failure
	switch {
	case errors.As(err, &failure):
		f.Enqueue, f.Failure = nil, failure.Reason
	case err != nil:
		return store.DigestFire{}, err
	}
	return f, nil
}

// fire fires one built digest alone. A digest whose trigger the store
// refuses as invalid or whose user is gone is marked failed; any other
// error leaves it to its lease's end, to be claimed again.
func (w *Worker) fire(ctx context.Context, c store.ClaimedDigest, f store.DigestFire, fired *store.EnqueueResult) error {
	ok, res, err := w.cfg.Store.FireDigest(ctx, f)
	if code := heraldtype.ErrorCode(err); err != nil && f.Failure == "" && (code == heraldtype.ENOTFOUND || code == heraldtype.EINVALID) {
		f.Enqueue, f.Failure = nil, err.Error() // "not_found: user … not found"
		ok, res, err = w.cfg.Store.FireDigest(ctx, f)
	}
	if err != nil {
		return err
	}
	w.settled(c, f, store.DigestFired{Fired: ok, Res: res}, fired)
	return nil
}

// settled counts what a fire did, and adds the notification it enqueued
// to fired.
func (w *Worker) settled(c store.ClaimedDigest, f store.DigestFire, got store.DigestFired, fired *store.EnqueueResult) {
	if !got.Fired {
		return // another worker holds it now, or a cancel took an item out: built again
	}
	outcome := "sent"
	switch {
	case f.Failure != "":
		outcome = "failed"
		w.cfg.Logger.Warn("digest: not sent", "digest", c.ID, "user", c.UserID, "type", c.Type, "reason", f.Failure)
	case f.Enqueue == nil:
		outcome = "empty"
	default:
		fired.Notifications = append(fired.Notifications, got.Res.Notifications...)
		fired.Inbox = append(fired.Inbox, got.Res.Inbox...)
	}
	if w.cfg.Outcome != nil {
		w.cfg.Outcome(outcome)
	}
}
