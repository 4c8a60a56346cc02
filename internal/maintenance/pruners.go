package maintenance

import (
	"context"
	"time"
)

// Pruners are the leader's pruning services, kept together so that
// Client.RunMaintenance can run them all at once, on demand. A nil field
// is skipped.
type Pruners struct {
	Devices       *Pruner
	Idempotency   *Pruner
	Policy        *Pruner
	Notifications *Pruner
	Interests     *Pruner
	Reminders     *Pruner
	CampaignRuns  *Pruner
	Events        *Pruner
	Rollup        *Pruner
	Engagement    *Pruner
	Webhooks      *Pruner
	Digests       *Pruner
}

// PruneResult counts what one Prune removed.
type PruneResult struct {
	Devices, Triggers, Notifications int
	// Policy counts expired dedupe locks and daily counts deleted.
	Policy int
	// Interests and Reminders count aged interests and stopped reminders.
	Interests, Reminders int
	// CampaignRuns counts finished campaign runs deleted.
	CampaignRuns int
	// Events counts event records and finished rule runs deleted.
	Events int
	// Rollup counts the delivery rollup's minutes deleted.
	Rollup int
	// Engagement counts the engagement counters' rows deleted.
	Engagement int
	// Webhooks counts finished webhook messages deleted.
	Webhooks int
	// Digests counts sent or failed digests deleted.
	Digests int
}

// Prune runs every pruner once, now, whatever their intervals: stale
// devices, expired idempotency records, expired policy rows, finished
// notifications and campaign runs past retention, aged interests, then
// stopped reminders. It stops at the first error.
func (p Pruners) Prune(ctx context.Context, now time.Time) (PruneResult, error) {
	var r PruneResult
	var err error
	if p.Devices != nil {
		if r.Devices, err = p.Devices.Prune(ctx, now); err != nil {
			return r, err
		}
	}
	if p.Idempotency != nil {
		if r.Triggers, err = p.Idempotency.Prune(ctx, now); err != nil {
			return r, err
		}
	}
	if p.Policy != nil {
		if r.Policy, err = p.Policy.Prune(ctx, now); err != nil {
			return r, err
		}
	}
	if p.Notifications != nil {
		if r.Notifications, err = p.Notifications.Prune(ctx, now); err != nil {
			return r, err
		}
	}
	if p.Interests != nil {
		if r.Interests, err = p.Interests.Prune(ctx, now); err != nil {
			return r, err
		}
	}
	if p.Reminders != nil {
		if r.Reminders, err = p.Reminders.Prune(ctx, now); err != nil {
			return r, err
		}
	}
	if p.CampaignRuns != nil {
		if r.CampaignRuns, err = p.CampaignRuns.Prune(ctx, now); err != nil {
			return r, err
		}
	}
	if p.Events != nil {
		if r.Events, err = p.Events.Prune(ctx, now); err != nil {
			return r, err
		}
	}
	if p.Rollup != nil {
		if r.Rollup, err = p.Rollup.Prune(ctx, now); err != nil {
			return r, err
		}
	}
	if p.Engagement != nil {
		if r.Engagement, err = p.Engagement.Prune(ctx, now); err != nil {
			return r, err
		}
	}
	if p.Webhooks != nil {
		if r.Webhooks, err = p.Webhooks.Prune(ctx, now); err != nil {
			return r, err
		}
	}
	if p.Digests != nil {
		if r.Digests, err = p.Digests.Prune(ctx, now); err != nil {
			return r, err
		}
	}
	return r, ctx.Err()
}
