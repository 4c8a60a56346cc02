// Package herald is Herald's Go API: the Client an embedding program uses to
// register users and devices, enqueue notifications and run the delivery
// workers, and the request and result types it needs. Value types shared
// with the stores and providers live in package heraldtype; the database
// seam is package store; providers live under provider/.
//
// A Client never imports a concrete store or provider: the program that
// embeds Herald (or Herald's own CLI) opens them and passes them in Config.
package herald

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/heraldhq/herald/heraldtype"
	"github.com/heraldhq/herald/internal/dispatch"
	"github.com/heraldhq/herald/internal/metrics"
	"github.com/heraldhq/herald/store"
)

// Provider sends one message through one delivery service (FCM, APNs, …)
// and classifies its failures as *heraldtype.SendError. Providers never
// retry: the Client's workers decide.
type Provider interface {
	Send(ctx context.Context, m *heraldtype.Message) (providerMessageID string, err error)
}

// NotificationValidator is an optional Provider capability: a provider that
// can tell at trigger time that a notification will never be accepted (for
// example FCM's 4096-byte payload limit) implements it, so the trigger is
// refused with a clear error instead of dying in the queue.
type NotificationValidator interface {
	ValidateNotification(n *heraldtype.Notification) error
}

// RetryPolicy is the exponential backoff for one error class:
// min(Max, Base·Factor^(attempt-1)), with jitter.
type RetryPolicy = dispatch.RetryPolicy

// TypeConfig is the configuration of one notification type.
type TypeConfig struct {
	// Guarantee is at_least_once (default) or at_most_once.
	Guarantee heraldtype.Guarantee `koanf:"guarantee" json:"guarantee"`
}

// Config configures a Client. Store is required; everything else has a
// default.
type Config struct {
	Store store.Store
	// Providers by name. A delivery is routed to a provider by PushRouting.
	Providers map[string]Provider
	// PushRouting maps a device platform to the provider that delivers push
	// to it. Default: every platform to "fcm" when an "fcm" provider is
	// configured.
	PushRouting map[heraldtype.Platform]string
	// Types configures notification types by name; unknown types get the
	// defaults (at_least_once).
	Types map[string]TypeConfig
	// DefaultTimezone for users created without one. Default Asia/Seoul
	// (S2.2).
	DefaultTimezone string
	// MaxAttempts per delivery, first attempt included. Default 4 (S0.3).
	MaxAttempts int
	// Retry overrides the backoff per error class (see dispatch defaults:
	// temporary 5 s ×2 capped at 15 min; throttled 60 s ×2 capped at 15 min).
	Retry map[heraldtype.ErrorClass]RetryPolicy
	// Worker tunes the delivery workers.
	Worker WorkerConfig
	// DisableWorkers runs the Client as an API-only instance.
	DisableWorkers bool
	// IdempotencyRetention is how long an Idempotency-Key is remembered.
	// Default 24 h.
	IdempotencyRetention time.Duration
	// DeviceMaxAge prunes devices not seen for this long. Default 270 days
	// (FCM expires inactive Android tokens after 270 days).
	DeviceMaxAge time.Duration
	// MaintenanceInterval is how often pruning runs. Default 1 h; negative
	// disables it.
	MaintenanceInterval time.Duration
	// Now is the clock; default time.Now.
	Now func() time.Time
	// Logger; default slog.Default().
	Logger *slog.Logger
	// Registerer receives Herald's Prometheus collectors; nil registers
	// nowhere.
	Registerer prometheus.Registerer
}

// WorkerConfig tunes the delivery workers; zero values take the defaults
// documented on each field.
type WorkerConfig struct {
	BatchSize     int           `koanf:"batch_size"`     // claim size, default 100
	Concurrency   int           `koanf:"concurrency"`    // in-flight sends, default 64
	LeaseDuration time.Duration `koanf:"lease_duration"` // default 30 s
	SendTimeout   time.Duration `koanf:"send_timeout"`   // default 10 s
	PollInterval  time.Duration `koanf:"poll_interval"`  // default 1 s (S4.2)
	ReapInterval  time.Duration `koanf:"reap_interval"`  // default 5 s
}

// Client is Herald's entry point for an embedding program.
type Client struct {
	cfg     Config
	store   store.Store
	worker  *dispatch.Worker
	metrics *metrics.Metrics
	log     *slog.Logger
	now     func() time.Time

	mu       sync.Mutex
	started  bool
	stopMain context.CancelFunc
	mainDone chan struct{}
}

// NewClient validates cfg, applies defaults and builds a Client. It does not
// start the workers: call Start.
func NewClient(cfg Config) (*Client, error) {
	if cfg.Store == nil {
		return nil, errors.New("herald: Config.Store is required")
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.DefaultTimezone == "" {
		cfg.DefaultTimezone = "Asia/Seoul"
	}
	if _, err := loadTimezone("default_timezone", cfg.DefaultTimezone); err != nil {
		return nil, fmt.Errorf("herald: %w", err)
	}
	if cfg.MaxAttempts == 0 {
		cfg.MaxAttempts = 4
	}
	if cfg.MaxAttempts < 1 || cfg.MaxAttempts > 100 {
		return nil, fmt.Errorf("herald: MaxAttempts %d must be between 1 and 100", cfg.MaxAttempts)
	}
	if cfg.IdempotencyRetention == 0 {
		cfg.IdempotencyRetention = 24 * time.Hour
	}
	if cfg.DeviceMaxAge == 0 {
		cfg.DeviceMaxAge = 270 * 24 * time.Hour
	}
	if cfg.MaintenanceInterval == 0 {
		cfg.MaintenanceInterval = time.Hour
	}
	if cfg.PushRouting == nil {
		cfg.PushRouting = map[heraldtype.Platform]string{}
		if _, ok := cfg.Providers["fcm"]; ok {
			for _, p := range []heraldtype.Platform{heraldtype.PlatformAndroid, heraldtype.PlatformIOS, heraldtype.PlatformWeb} {
				cfg.PushRouting[p] = "fcm"
			}
		}
	}
	for platform, name := range cfg.PushRouting {
		if !platform.Valid() {
			return nil, fmt.Errorf("herald: PushRouting: unknown platform %q", platform)
		}
		if _, ok := cfg.Providers[name]; !ok {
			return nil, fmt.Errorf("herald: PushRouting: platform %s routes to provider %q, which is not configured", platform, name)
		}
	}
	for name, t := range cfg.Types {
		if t.Guarantee == "" {
			t.Guarantee = heraldtype.AtLeastOnce
			cfg.Types[name] = t
		}
		if !t.Guarantee.Valid() {
			return nil, fmt.Errorf("herald: type %q: guarantee %q must be at_least_once or at_most_once", name, t.Guarantee)
		}
	}
	c := &Client{
		cfg:     cfg,
		store:   cfg.Store,
		metrics: metrics.New(cfg.Registerer),
		log:     cfg.Logger,
		now:     cfg.Now,
	}
	if !cfg.DisableWorkers {
		senders := make(map[string]dispatch.Sender, len(cfg.Providers))
		for name, p := range cfg.Providers {
			senders[name] = p
		}
		w, err := dispatch.New(dispatch.Config{
			Store:         cfg.Store,
			Senders:       senders,
			BatchSize:     cfg.Worker.BatchSize,
			Concurrency:   cfg.Worker.Concurrency,
			LeaseDuration: cfg.Worker.LeaseDuration,
			SendTimeout:   cfg.Worker.SendTimeout,
			PollInterval:  cfg.Worker.PollInterval,
			ReapInterval:  cfg.Worker.ReapInterval,
			Retry:         cfg.Retry,
			Now:           cfg.Now,
			Logger:        cfg.Logger,
			Metrics:       c.metrics,
		})
		if err != nil {
			return nil, fmt.Errorf("herald: %w", err)
		}
		c.worker = w
	}
	return c, nil
}

// Start launches the delivery workers and the maintenance loop. The Client
// serves API calls whether or not it is started.
func (c *Client) Start(ctx context.Context) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.started {
		return errors.New("herald: client already started")
	}
	if c.worker != nil {
		// The workers outlive ctx: cancelling a start-up context must not
		// abort in-flight sends. Stop is the graceful way down.
		if err := c.worker.Start(context.WithoutCancel(ctx)); err != nil {
			return err
		}
	}
	mctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	c.stopMain = cancel
	c.mainDone = make(chan struct{})
	go c.maintain(mctx)
	c.started = true
	return nil
}

// Stop stops claiming new work, waits for in-flight sends (until ctx is
// done) and records their outcomes. It does not close the store.
func (c *Client) Stop(ctx context.Context) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.started {
		return nil
	}
	c.started = false
	c.stopMain()
	<-c.mainDone
	if c.worker != nil {
		return c.worker.Stop(ctx)
	}
	return nil
}

// Worker exposes the dispatcher for tests in this module (RunOnce).
func (c *Client) runOnce(ctx context.Context) (int, error) {
	if c.worker == nil {
		return 0, errors.New("herald: workers are disabled")
	}
	return c.worker.RunOnce(ctx)
}

// Ready reports whether the Client can serve: the store answers.
func (c *Client) Ready(ctx context.Context) error {
	return c.store.Ping(ctx)
}

// maintain prunes stale devices and expired idempotency records
// periodically (S0.2 token hygiene). On PostgreSQL this moves to the elected
// leader.
func (c *Client) maintain(ctx context.Context) {
	defer close(c.mainDone)
	if c.cfg.MaintenanceInterval < 0 {
		return
	}
	t := time.NewTicker(c.cfg.MaintenanceInterval)
	defer t.Stop()
	for {
		if _, err := c.RunMaintenance(ctx); err != nil && ctx.Err() == nil {
			c.log.Error("maintenance failed", "err", err)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// MaintenanceResult counts what RunMaintenance removed.
type MaintenanceResult struct {
	PrunedDevices  int `json:"pruned_devices"`
	PrunedTriggers int `json:"pruned_triggers"`
}

// RunMaintenance prunes devices not seen within DeviceMaxAge and
// idempotency records older than IdempotencyRetention, once.
func (c *Client) RunMaintenance(ctx context.Context) (MaintenanceResult, error) {
	now := c.now()
	var r MaintenanceResult
	var err error
	if r.PrunedDevices, err = c.store.PruneDevices(ctx, now.Add(-c.cfg.DeviceMaxAge)); err != nil {
		return r, err
	}
	if r.PrunedTriggers, err = c.store.PruneTriggers(ctx, now.Add(-c.cfg.IdempotencyRetention)); err != nil {
		return r, err
	}
	if r.PrunedDevices > 0 || r.PrunedTriggers > 0 {
		c.log.Info("maintenance", "pruned_devices", r.PrunedDevices, "pruned_triggers", r.PrunedTriggers)
	}
	return r, nil
}
