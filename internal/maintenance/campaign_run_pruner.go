package maintenance

import (
	"context"
	"time"

	"github.com/heraldhq/herald/store"
)

// CampaignRunStore is the part of the store campaign-run retention uses.
type CampaignRunStore interface {
	PruneCampaignRuns(ctx context.Context, cutoff time.Time, limit int) (int, error)
}

var _ CampaignRunStore = store.Store(nil)

// NewCampaignRunPruner deletes, every interval, the campaign runs that
// finished longer than retention ago with their recipient records (issue
// 19 item 6), in batches of pruneBatch: the per-user rows a daily campaign
// writes would otherwise grow without end. A pruned run cannot be run
// again; a schedule never comes back to an occurrence that old. A zero
// (or negative) retention keeps them forever.
func NewCampaignRunPruner(st CampaignRunStore, interval, retention time.Duration) *Pruner {
	return agePruner("campaign_run_pruner", "campaign_runs", "finished campaign runs", interval, retention,
		func(ctx context.Context, cutoff time.Time) (int, error) {
			total := 0
			for ctx.Err() == nil {
				n, err := st.PruneCampaignRuns(ctx, cutoff, pruneBatch)
				total += n
				if err != nil || n < pruneBatch {
					return total, err
				}
			}
			return total, ctx.Err()
		})
}
