package maintenance

import (
	"context"
	"fmt"
	"time"

	"github.com/heraldhq/herald/internal/leadership"
	"github.com/heraldhq/herald/store"
)

// IdempotencyStore is the part of the store the idempotency pruner uses.
type IdempotencyStore interface {
	PruneTriggers(ctx context.Context, cutoff time.Time) (int, error)
}

var _ IdempotencyStore = store.Store(nil)

// IdempotencyPruner expires idempotency records: after the retention, an
// Idempotency-Key may be used again for a new trigger.
type IdempotencyPruner struct {
	store     IdempotencyStore
	interval  time.Duration
	retention time.Duration
}

var _ leadership.Service = (*IdempotencyPruner)(nil)

// NewIdempotencyPruner expires records older than retention every
// interval. A zero (or negative) retention keeps them forever; a zero
// interval leaves expiry to Prune calls.
func NewIdempotencyPruner(st IdempotencyStore, interval, retention time.Duration) *IdempotencyPruner {
	return &IdempotencyPruner{store: st, interval: enabledEvery(interval, retention), retention: retention}
}

// Name implements leadership.Service.
func (p *IdempotencyPruner) Name() string { return "idempotency_pruner" }

// Interval implements leadership.Service.
func (p *IdempotencyPruner) Interval() time.Duration { return p.interval }

// RunOnce implements leadership.Service.
func (p *IdempotencyPruner) RunOnce(ctx context.Context, now time.Time) (leadership.Result, error) {
	n, err := p.Prune(ctx, now)
	return leadership.Result{Counts: map[string]int{"idempotency_records": n}}, err
}

// Prune deletes the idempotency records older than the retention, once,
// and counts them.
func (p *IdempotencyPruner) Prune(ctx context.Context, now time.Time) (int, error) {
	if p.retention <= 0 {
		return 0, nil
	}
	n, err := p.store.PruneTriggers(ctx, now.Add(-p.retention))
	if err != nil {
		return n, fmt.Errorf("prune idempotency records: %w", err)
	}
	return n, nil
}
