package maintenance

import (
	"context"
	"fmt"
	"time"

	"github.com/heraldhq/herald/internal/leadership"
	"github.com/heraldhq/herald/store"
)

// PolicyStore deletes the delivery policy's expired dedupe locks and daily
// counts (the SQL policy store; Redis expires its keys itself).
type PolicyStore interface {
	PrunePolicy(ctx context.Context, now time.Time) (int, error)
}

var _ PolicyStore = store.Store(nil)

// PolicyPruner deletes expired policy rows, so the SQL policy store never
// grows without bound (issue 4).
type PolicyPruner struct {
	store    PolicyStore
	interval time.Duration
}

var _ leadership.Service = (*PolicyPruner)(nil)

// NewPolicyPruner prunes st every interval (zero: only on Prune calls).
func NewPolicyPruner(st PolicyStore, interval time.Duration) *PolicyPruner {
	return &PolicyPruner{store: st, interval: max(interval, 0)}
}

// Name implements leadership.Service.
func (p *PolicyPruner) Name() string { return "policy_pruner" }

// Interval implements leadership.Service.
func (p *PolicyPruner) Interval() time.Duration { return p.interval }

// RunOnce implements leadership.Service.
func (p *PolicyPruner) RunOnce(ctx context.Context, now time.Time) (leadership.Result, error) {
	n, err := p.Prune(ctx, now)
	return leadership.Result{Counts: map[string]int{"policy_rows": n}}, err
}

// Prune deletes the policy rows expired at now, once, and counts them.
func (p *PolicyPruner) Prune(ctx context.Context, now time.Time) (int, error) {
	n, err := p.store.PrunePolicy(ctx, now)
	if err != nil {
		return n, fmt.Errorf("prune policy locks and counts: %w", err)
	}
	return n, nil
}
