package herald

import (
	"fmt"
	"time"

	"github.com/heraldhq/herald/internal/leadership"
	"github.com/heraldhq/herald/internal/maintenance"
	"github.com/heraldhq/herald/store"
)

// defaultReapInterval is how often the leader reclaims expired leases
// unless WorkerConfig.ReapInterval says otherwise.
const defaultReapInterval = 5 * time.Second

// newElector builds the pruners and the leader elector, with every
// leader-only service registered. A new service plugs in with one line in
// the list below; its Interval decides how often the leader runs it (zero:
// never).
func (c *Client) newElector() error {
	cfg := c.cfg
	ttl := cfg.LeaderTTL
	if ttl == 0 {
		ttl = leadership.DefaultTTL
	}
	reapEvery := cfg.Worker.ReapInterval
	if reapEvery <= 0 {
		reapEvery = defaultReapInterval
	}
	// A negative MaintenanceInterval, DeviceMaxAge, IdempotencyRetention or
	// Retention disables that pruning; RunMaintenance still prunes what
	// has a positive age.
	pruneEvery := cfg.MaintenanceInterval
	c.pruners = maintenance.Pruners{
		Devices:       maintenance.NewDevicePruner(cfg.Store, pruneEvery, cfg.DeviceMaxAge),
		Idempotency:   maintenance.NewIdempotencyPruner(cfg.Store, pruneEvery, cfg.IdempotencyRetention),
		Policy:        maintenance.NewPolicyPruner(cfg.Store, pruneEvery),
		Notifications: maintenance.NewNotificationPruner(cfg.Store, pruneEvery, cfg.Retention),
		Interests:     maintenance.NewInterestPruner(cfg.Store, pruneEvery, cfg.InterestRetention),
		Reminders:     maintenance.NewReminderPruner(cfg.Store, pruneEvery, cfg.Reminders.Retention),
		CampaignRuns:  maintenance.NewCampaignRunPruner(cfg.Store, pruneEvery, cfg.Retention),
		Events:        maintenance.NewEventPruner(cfg.Store, pruneEvery, cfg.Rules.EventRetention),
		Rollup:        maintenance.NewRollupPruner(cfg.Store, pruneEvery, cfg.Worker.RollupRetention),
		Engagement:    maintenance.NewEngagementPruner(cfg.Store, pruneEvery, cfg.EngagementRetention),
		Webhooks:      maintenance.NewWebhookPruner(cfg.Store, pruneEvery, cfg.Retention),
		Digests:       maintenance.NewDigestPruner(cfg.Store, pruneEvery, cfg.Retention),
	}
	services := []leadership.Service{
		maintenance.NewLeaseReaper(cfg.Store, reapEvery, ttl, c.metrics),
		c.pruners.Devices,
		c.pruners.Idempotency,
		c.pruners.Policy,
		c.pruners.Notifications,
		c.pruners.Interests,
		c.pruners.Reminders,
		c.pruners.CampaignRuns,
		c.pruners.Events,
		c.pruners.Rollup,
		c.pruners.Engagement,
		c.pruners.Webhooks,
		c.pruners.Digests,
	}
	var daemons []leadership.Daemon
	if !cfg.Reminders.Disabled {
		sch, err := c.newScheduler()
		if err != nil {
			return err
		}
		c.scheduler = sch
		daemons = append(daemons, sch)
	}
	if !cfg.Campaigns.Disabled {
		run, err := c.newCampaignRunner()
		if err != nil {
			return err
		}
		c.campaigns = run
		daemons = append(daemons, run)
	}
	if !cfg.Rules.Disabled {
		run, err := c.newRuleRunner()
		if err != nil {
			return err
		}
		c.ruleRunner = run
		daemons = append(daemons, run)
	}
	if v, ok := cfg.Store.(store.QueueVacuumer); ok {
		services = append(services, maintenance.NewQueueVacuum(v, maintenance.DefaultVacuumInterval))
	}
	e, err := leadership.New(leadership.Config{
		Locker: cfg.Store, Owner: cfg.Owner, TTL: ttl, Services: services, Daemons: daemons,
		Now: cfg.Now, Logger: c.Logger(ComponentLeader),
	})
	if err != nil {
		return fmt.Errorf("herald: %w", err)
	}
	c.elector = e
	return nil
}
