package maintenance

import (
	"context"
	"fmt"
	"time"

	"github.com/heraldhq/herald/internal/leadership"
	"github.com/heraldhq/herald/store"
)

// DefaultVacuumInterval is how often the leader asks the store whether its
// queue needs vacuuming.
const DefaultVacuumInterval = 10 * time.Second

// QueueVacuum asks a store whose queue leaves dead rows behind
// (store.QueueVacuumer: PostgreSQL) to vacuum it when it needs it, so the
// queue stays fast whether or not autovacuum is on and keeping up. Like
// every service it runs in the background, so a long VACUUM never delays a
// leadership renewal, and never twice at once.
type QueueVacuum struct {
	store    store.QueueVacuumer
	interval time.Duration
}

var _ leadership.Service = (*QueueVacuum)(nil)

// NewQueueVacuum asks st every interval (zero: never).
func NewQueueVacuum(st store.QueueVacuumer, interval time.Duration) *QueueVacuum {
	return &QueueVacuum{store: st, interval: max(interval, 0)}
}

// Name implements leadership.Service.
func (v *QueueVacuum) Name() string { return "queue_vacuum" }

// Interval implements leadership.Service.
func (v *QueueVacuum) Interval() time.Duration { return v.interval }

// RunOnce asks the store to vacuum its queue if it needs it, once.
func (v *QueueVacuum) RunOnce(ctx context.Context, _ time.Time) (leadership.Result, error) {
	did, err := v.store.VacuumQueue(ctx)
	if err != nil {
		return leadership.Result{}, fmt.Errorf("vacuum queue: %w", err)
	}
	r := leadership.Result{Counts: map[string]int{"vacuumed": 0}}
	if did {
		r.Counts["vacuumed"] = 1
	}
	return r, nil
}
