package maintenance

import (
	"context"
	"time"

	"github.com/heraldhq/herald/store"
)

// EngagementStore is the part of the store the engagement pruner uses.
type EngagementStore interface {
	PruneEngagement(ctx context.Context, cutoff time.Time) (int, error)
}

var _ EngagementStore = store.Store(nil)

// NewEngagementPruner deletes the engagement counters' hours older than
// retention, every interval (issue 35 item 3): a few rows per hour and
// group, kept longer than the deliveries they count. A zero (or negative)
// retention keeps them forever.
func NewEngagementPruner(st EngagementStore, interval, retention time.Duration) *Pruner {
	return agePruner("engagement_pruner", "engagement_counts", "engagement counters", interval, retention, st.PruneEngagement)
}
