package maintenance

import (
	"context"
	"time"

	"github.com/heraldhq/herald/store"
)

// RollupStore is the part of the store the rollup pruner uses.
type RollupStore interface {
	PruneDeliveryMinutes(ctx context.Context, cutoff time.Time) (int, error)
}

var _ RollupStore = store.Store(nil)

// NewRollupPruner deletes the delivery rollup's minutes older than
// retention, every interval: the overview reads the last hour, and a day
// keeps the table a few thousand rows per instance. A zero (or negative)
// retention keeps them forever.
func NewRollupPruner(st RollupStore, interval, retention time.Duration) *Pruner {
	return agePruner("rollup_pruner", "delivery_minutes", "delivery rollup minutes", interval, retention, st.PruneDeliveryMinutes)
}
