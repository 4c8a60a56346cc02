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

// NewNotificationPruner is retention: every interval it deletes the
// notifications (with their deliveries and attempts) whose deliveries all
// finished longer than retention ago, in batches of pruneBatch. A zero (or
// negative) retention keeps them forever; a zero interval leaves retention
// to Prune calls.
func NewNotificationPruner(st NotificationStore, interval, retention time.Duration) *Pruner {
	return agePruner("notification_pruner", "notifications", "finished notifications", interval, retention,
		batched(st.PruneFinished))
}
