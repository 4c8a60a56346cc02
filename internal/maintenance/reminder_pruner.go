package maintenance

import (
	"context"
	"time"

	"github.com/heraldhq/herald/store"
)

// ReminderStore is the part of the store the reminder pruner uses.
type ReminderStore interface {
	PruneReminders(ctx context.Context, cutoff time.Time, limit int) (int, error)
}

var _ ReminderStore = store.Store(nil)

// NewReminderPruner deletes reminders stopped longer than retention ago
// (max_sends reached, expired, stopped by an event, cancelled), every
// interval; active reminders are never pruned. A zero (or negative)
// retention keeps them forever.
func NewReminderPruner(st ReminderStore, interval, retention time.Duration) *Pruner {
	return agePruner("reminder_pruner", "reminders", "stopped reminders", interval, retention, batched(st.PruneReminders))
}
