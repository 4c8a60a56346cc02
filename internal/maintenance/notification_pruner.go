package maintenance

import (
	"context"
	"fmt"
	"time"

	"github.com/heraldhq/herald/internal/leadership"
	"github.com/heraldhq/herald/store"
)

// NotificationStore is the part of the store retention uses.
type NotificationStore interface {
	PruneFinished(ctx context.Context, cutoff time.Time, limit int) (int, error)
}

var _ NotificationStore = store.Store(nil)

// pruneBatch bounds one retention delete so a large backlog is removed in
// short transactions that never hold the database for long.
const pruneBatch = 1000

// NotificationPruner is retention: it deletes notifications (with their
// deliveries and attempts) whose deliveries all finished a retention ago.
type NotificationPruner struct {
	store     NotificationStore
	interval  time.Duration
	retention time.Duration
}

var _ leadership.Service = (*NotificationPruner)(nil)

// NewNotificationPruner deletes notifications finished longer than
// retention ago every interval. A zero (or negative) retention keeps them
// forever; a zero interval leaves retention to Prune calls.
func NewNotificationPruner(st NotificationStore, interval, retention time.Duration) *NotificationPruner {
	return &NotificationPruner{store: st, interval: enabledEvery(interval, retention), retention: retention}
}

// Name implements leadership.Service.
func (p *NotificationPruner) Name() string { return "notification_pruner" }

// Interval implements leadership.Service.
func (p *NotificationPruner) Interval() time.Duration { return p.interval }

// RunOnce implements leadership.Service.
func (p *NotificationPruner) RunOnce(ctx context.Context, now time.Time) (leadership.Result, error) {
	n, err := p.Prune(ctx, now)
	return leadership.Result{Counts: map[string]int{"notifications": n}}, err
}

// Prune deletes the notifications finished before now-retention, in
// batches of pruneBatch, once, and counts them.
func (p *NotificationPruner) Prune(ctx context.Context, now time.Time) (int, error) {
	if p.retention <= 0 {
		return 0, nil
	}
	total := 0
	for ctx.Err() == nil {
		n, err := p.store.PruneFinished(ctx, now.Add(-p.retention), pruneBatch)
		total += n
		if err != nil {
			return total, fmt.Errorf("prune finished notifications: %w", err)
		}
		if n < pruneBatch {
			break
		}
	}
	return total, ctx.Err()
}
