package maintenance

import (
	"context"
	"time"

	"github.com/heraldhq/herald/store"
)

// PolicyStore deletes the delivery policy's expired dedupe locks and daily
// counts (the SQL policy store; Redis expires its keys itself).
type PolicyStore interface {
	PrunePolicy(ctx context.Context, now time.Time) (int, error)
}

var _ PolicyStore = store.Store(nil)

// NewPolicyPruner deletes the policy rows expired at the time it runs,
// every interval (zero: only on Prune calls), so the SQL policy store never
// grows without bound. The rows carry their own expiry: there is no age to
// configure.
func NewPolicyPruner(st PolicyStore, interval time.Duration) *Pruner {
	return &Pruner{name: "policy_pruner", counted: "policy_rows", subject: "policy locks and counts",
		interval: max(interval, 0), prune: st.PrunePolicy}
}
