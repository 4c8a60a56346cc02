package maintenance

import (
	"context"
	"time"

	"github.com/heraldhq/herald/store"
)

// InterestStore is the part of the store the interest pruner uses.
type InterestStore interface {
	PruneInterests(ctx context.Context, cutoff time.Time, limit int) (int, error)
}

var _ InterestStore = store.Store(nil)

// NewInterestPruner deletes interests last shown longer than retention
// ago, every interval (issue 20 item 3: interests are pruned after a
// retention). A zero (or negative) retention keeps them forever.
func NewInterestPruner(st InterestStore, interval, retention time.Duration) *Pruner {
	return agePruner("interest_pruner", "interests", "interests", interval, retention, batched(st.PruneInterests))
}
