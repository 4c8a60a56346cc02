package maintenance

import (
	"context"
	"time"

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

// NewNotificationPruner is retention: every interval it deletes the
// notifications (with their deliveries and attempts) whose deliveries all
// finished longer than retention ago, in batches of pruneBatch. A zero (or
// negative) retention keeps them forever; a zero interval leaves retention
// to Prune calls.
func NewNotificationPruner(st NotificationStore, interval, retention time.Duration) *Pruner {
	return agePruner("notification_pruner", "notifications", "finished notifications", interval, retention,
		func(ctx context.Context, cutoff time.Time) (int, error) {
			total := 0
			for ctx.Err() == nil {
				n, err := st.PruneFinished(ctx, cutoff, pruneBatch)
				total += n
				if err != nil || n < pruneBatch {
					return total, err
				}
			}
			return total, ctx.Err()
		})
}
