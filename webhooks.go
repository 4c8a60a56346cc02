package herald

import (
	"cmp"
	"fmt"
	"slices"
	"time"

	"github.com/heraldhq/herald/heraldtype"

	"github.com/heraldhq/herald/internal/outbound"
	"github.com/heraldhq/herald/internal/webhook"
)

// Outbound webhooks (issue 35 item 4; docs/ARCHITECTURE.md, "Outbound
// webhooks"): the endpoints an operator registers, and the dispatcher
// that sends them the events the stores write with each change.

// WebhookConfig tunes outbound webhooks; zero values take the defaults
// documented on each field.
type WebhookConfig struct {
	// Timeout bounds one send (webhooks.timeout). Default 15 s, as the
	// Standard Webhooks specification recommends.
	Timeout time.Duration
	// RetryBase, doubling per retry up to RetryMaxDelay, bounds the
	// random wait before a retry (full jitter). Defaults 5 s and 1 h.
	RetryBase     time.Duration
	RetryMaxDelay time.Duration
	// RetryFor is how long a message is retried before it is dead, on
	// its endpoint's dead letter list. Default 24 h.
	RetryFor time.Duration
	// DisableAfter disables an endpoint that failed continuously this
	// long; its messages are held until it is enabled again. Default 120 h
	// (five days); negative: never.
	DisableAfter time.Duration
	// RotationOverlap is how long a rotated secret keeps signing beside
	// the new one, so receivers can switch. Default 24 h.
	RotationOverlap time.Duration
	// BatchSize is how many messages this instance sends at once.
	// Default 100.
	BatchSize int
	// MaxInFlightPerEndpoint is how many messages this instance sends to
	// one endpoint at once: a slow endpoint never gets more, and the
	// others are not held behind it. Default 50.
	MaxInFlightPerEndpoint int
	// PollInterval is how often an idle dispatcher looks for due
	// messages. Default 1 s.
	PollInterval time.Duration
	// Disabled runs no dispatcher on this instance (the others send).
	Disabled bool
}

// DefaultRotationOverlap is WebhookConfig.RotationOverlap's default.
const DefaultRotationOverlap = 24 * time.Hour

// newWebhooks builds the outbound client every webhook goes through (the
// guard: public addresses and callout.allow's networks only, no redirect)
// and, unless this instance runs no workers, the dispatcher.
func (c *Client) newWebhooks(cfg Config) error {
	if c.cfg.Webhooks.RotationOverlap == 0 {
		c.cfg.Webhooks.RotationOverlap = DefaultRotationOverlap
	}
	if c.cfg.Webhooks.RotationOverlap < 0 {
		return fmt.Errorf("herald: Webhooks.RotationOverlap %v must be positive", c.cfg.Webhooks.RotationOverlap)
	}
	// A claim's batch is sent at once, most often to one receiver: the
	// pool keeps that many connections to it.
	c.webhookOut = outbound.New(outbound.Config{Allow: cfg.Callout.Allow, Logger: c.Logger(ComponentWebhooks),
		MaxIdleConnsPerHost: cmp.Or(cfg.Webhooks.BatchSize, webhook.DefaultBatchSize)})
	if cfg.DisableWorkers || cfg.Webhooks.Disabled {
		return nil
	}
	w := cfg.Webhooks
	d, err := webhook.New(webhook.Config{Store: cfg.Store, Client: c.webhookOut, Owner: cfg.Owner,
		Timeout: w.Timeout, RetryBase: w.RetryBase, RetryMaxDelay: w.RetryMaxDelay, RetryFor: w.RetryFor,
		DisableAfter: w.DisableAfter, BatchSize: w.BatchSize, MaxInFlightPerEndpoint: w.MaxInFlightPerEndpoint,
		PollInterval: w.PollInterval,
		StoreTimeout: cmp.Or(cfg.Worker.StoreTimeout, cfg.Worker.LeaseDuration),
		Now:          cfg.Now, Logger: c.Logger(ComponentWebhooks), Observe: c.observeWebhook,
		Pending: func(n int) { c.metrics.WebhookPending.Set(float64(n)) }})
	if err != nil {
		return fmt.Errorf("herald: Webhooks: %w", err)
	}
	c.webhooks = d
	return nil
}

// notifyWebhooks wakes this instance's dispatcher, if it runs one.
func (c *Client) notifyWebhooks() {
	if c.webhooks != nil {
		c.webhooks.Notify()
	}
}

// observeWebhook counts an attempt in the metrics. The type label is one
// of the types Herald emits, else "other", and the outcome one of
// webhook.Outcomes: both bounded.
func (c *Client) observeWebhook(eventType, outcome string, took time.Duration) {
	if !slices.Contains(heraldtype.WebhookEventTypes, eventType) {
		eventType = "other"
	}
	c.metrics.WebhookMessages.WithLabelValues(eventType, outcome).Inc()
	c.metrics.WebhookSend.WithLabelValues(outcome).Observe(took.Seconds())
}
