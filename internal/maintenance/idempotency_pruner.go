package maintenance

import (
	"context"
	"time"

	"github.com/heraldhq/herald/store"
)

// IdempotencyStore is the part of the store the idempotency pruner uses.
type IdempotencyStore interface {
	PruneTriggers(ctx context.Context, cutoff time.Time) (int, error)
}

var _ IdempotencyStore = store.Store(nil)

// NewIdempotencyPruner expires idempotency records older than retention,
// every interval: after it, an Idempotency-Key may be used again for a new
// trigger. A zero (or negative) retention keeps them forever; a zero
// interval leaves expiry to Prune calls.
func NewIdempotencyPruner(st IdempotencyStore, interval, retention time.Duration) *Pruner {
	return agePruner("idempotency_pruner", "idempotency_records", "idempotency records", interval, retention, st.PruneTriggers)
}
