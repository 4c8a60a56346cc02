package herald

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/heraldhq/herald/heraldtype"
	"github.com/heraldhq/herald/internal/escalation"
	"github.com/heraldhq/herald/store"
)

// EscalationStepConfig is one step of a type's escalation
// (TypeConfig.Escalate): when none of the notification's messages so far
// got the receipt Unless within After of its send, the notification is
// sent again on Channels (docs/escalation.md).
type EscalationStepConfig struct {
	// After is how long after the notification's send the step waits, as
	// a Go duration ("10m"), 1s to 7 days, each step's later than the
	// one before. Required.
	After string `json:"after" koanf:"after"`
	// Unless is the receipt that makes the step unnecessary: read (the
	// inbox item was read), opened, delivered or clicked. Required.
	Unless heraldtype.ReceiptEvent `json:"unless" koanf:"unless"`
	// Channels are the channels the step sends on. Required.
	Channels []heraldtype.Channel `json:"channels" koanf:"channels"`
}

// resolveEscalation validates a type's escalation steps.
func resolveEscalation(steps []EscalationStepConfig, lim Limits) ([]heraldtype.EscalationStep, error) {
	if len(steps) == 0 {
		return nil, nil
	}
	out := make([]heraldtype.EscalationStep, len(steps))
	for i, sc := range steps {
		out[i] = heraldtype.EscalationStep{Unless: sc.Unless, Channels: sc.Channels}
		if sc.After != "" {
			d, err := time.ParseDuration(sc.After)
			if err != nil {
				return nil, heraldtype.FieldErrorf(fmt.Sprintf("escalate[%d].after", i), "%q is not a duration such as 10m", sc.After)
			}
			out[i].After = d
		}
	}
	if err := escalation.Normalize(out, lim.MaxEscalationSteps); err != nil {
		return nil, err
	}
	return out, nil
}

// escalationView is a type's escalation as the API shows it: empty, not
// null, when it has none.
func escalationView(steps []heraldtype.EscalationStep) []EscalationStepConfig {
	out := make([]EscalationStepConfig, len(steps))
	for i, st := range steps {
		out[i] = EscalationStepConfig{After: st.After.String(), Unless: st.Unless, Channels: st.Channels}
	}
	return out
}

// EscalationWorkerConfig tunes the escalation worker every instance runs;
// zero values take the defaults documented on each field.
type EscalationWorkerConfig struct {
	// PollInterval is how often the worker looks for due steps. Default
	// 1 s: a step fires at most this late.
	PollInterval time.Duration
	// BatchSize is how many due steps one claim takes. Default 100.
	BatchSize int
	// Lease is how long a worker holds the steps it claimed: one that
	// dies before firing leaves them to another after it. Default 30 s.
	Lease time.Duration
	// Disabled runs no escalation worker on this instance (the others
	// fire).
	Disabled bool
}

// newEscalations builds this instance's escalation worker, unless it runs
// no workers.
func (c *Client) newEscalations(cfg Config) error {
	if cfg.DisableWorkers || cfg.Escalations.Disabled {
		return nil
	}
	w, err := escalation.New(escalation.Config{Store: cfg.Store, Build: c.buildEscalation, Owner: cfg.Owner,
		PollInterval: cfg.Escalations.PollInterval, BatchSize: cfg.Escalations.BatchSize, Lease: cfg.Escalations.Lease,
		Now: c.now, Logger: c.Logger(ComponentEscalations),
		Fired:   c.wakeAfterFire,
		Outcome: func(outcome string) { c.metrics.Escalations.WithLabelValues(outcome).Inc() }})
	if err != nil {
		return fmt.Errorf("herald: Escalations: %w", err)
	}
	c.escalations = w
	return nil
}

// buildEscalation makes a claimed step's notification: the escalated
// notification's content, type, priority and cancellation key, sent on
// the step's channels, its source naming the notification and the step,
// its idempotency key escalation:{notification}:{step} (so a fire
// repeated after a crash finds the first one's notification).
func (c *Client) buildEscalation(ctx context.Context, ce store.ClaimedEscalation) (*store.EnqueueParams, error) {
	n, err := c.store.GetNotification(ctx, ce.NotificationID)
	if heraldtype.ErrorCode(err) == heraldtype.ENOTFOUND {
		return nil, &escalation.Failure{Reason: "notification_gone: the notification no longer exists"}
	}
	if err != nil {
		return nil, err
	}
	t, err := c.types.Type(ctx, n.Type)
	if err != nil {
		return nil, err
	}
	now := c.now().UTC()
	key := store.EscalationIdempotencyKey(ce.NotificationID, ce.Step)
	e := heraldtype.Notification{ID: newID(now), UserID: n.UserID, Type: n.Type, Title: n.Title, Body: n.Body, Data: n.Data,
		Channels: ce.Channels, Priority: cmp.Or(n.Priority, heraldtype.PriorityNormal), PayloadMode: n.PayloadMode,
		Guarantee: n.Guarantee, IdempotencyKey: key, CreatedAt: now, CancellationKey: n.CancellationKey, Critical: t.Critical,
		// A notification rendered from its type's templates escalates in
		// the same version: the step's SMS or e-mail is that version's
		// form for the channel, not the push's text (issue 37).
		TemplateVersion: n.TemplateVersion,
		Source:          &heraldtype.Source{Kind: heraldtype.SourceEscalation, ID: ce.NotificationID, Count: ce.Step}}
	return &store.EnqueueParams{IdempotencyKey: key, IdempotencyNamespace: store.EscalationNamespace, RequestHash: key,
		Notifications: []heraldtype.Notification{e}, MaxAttempts: c.cfg.MaxAttempts, PushProviders: c.cfg.PushRouting,
		ChannelProviders: c.cfg.ChannelRouting, Now: now}, nil
}

// runEscalationsOnce runs one synchronous escalation worker cycle (tests
// with an injected clock).
func (c *Client) runEscalationsOnce(ctx context.Context) (int, error) {
	if c.escalations == nil {
		return 0, errors.New("herald: the escalation worker is disabled")
	}
	return c.escalations.RunOnce(ctx)
}
