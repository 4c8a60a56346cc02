package herald

import (
	"context"
	"fmt"
	"time"

	"github.com/heraldhq/herald/heraldtype"
	"github.com/heraldhq/herald/internal/fanout"
	"github.com/heraldhq/herald/internal/rule"
	"github.com/heraldhq/herald/store"
)

// Rule turns events into notifications (issue 20 item 2, S3.2, S3.4).
type Rule = heraldtype.Rule

// RuleFilter selects a page of rules.
type RuleFilter = heraldtype.RuleFilter

// RulePage is one page of rules.
type RulePage struct {
	Rules      []Rule `json:"rules"`
	NextCursor string `json:"next_cursor,omitempty"`
}

// RuleDryRun is what a rule would do with one event, without sending
// (POST /v1/rules/{name}/dry-run).
type RuleDryRun struct {
	// Matches: the rule applies to the event (its name, and the rule is
	// enabled). The rest is filled in when it does.
	Matches bool `json:"matches"`
	// Detected: the detector fires; Reason says why or why not.
	Detected bool   `json:"detected"`
	Reason   string `json:"reason"`
	// AudienceSize counts the recipients, at most the rule's limit
	// (AudienceCapped then says there were more).
	AudienceSize   int  `json:"audience_size"`
	AudienceCapped bool `json:"audience_capped,omitempty"`
	// Sample names up to DryRunSample recipients. Over HTTP it is empty,
	// and SampleWithheld true, for a caller that may not read interests.
	Sample         []string `json:"sample"`
	SampleWithheld bool     `json:"sample_withheld,omitempty"`
	// Notification is the rendered message.
	Notification *RenderedNotification `json:"notification,omitempty"`
	// Error is what would stop the notification: a field the detector or
	// a template needs that the event lacks, a rendered message a trigger
	// would refuse.
	Error string `json:"error,omitempty"`
}

// RenderedNotification is a rule's message for one event.
type RenderedNotification struct {
	Type     string               `json:"type"`
	Title    string               `json:"title,omitempty"`
	Body     string               `json:"body,omitempty"`
	Data     map[string]string    `json:"data,omitempty"`
	Channels []heraldtype.Channel `json:"channels"`
}

// RuleConfig tunes the rule runner, a leader-only service that fans rule
// runs out (issue 20 item 4, S3.5); zero values take the defaults
// documented on each field.
type RuleConfig struct {
	// BatchSize is how many recipients one batch of a run takes; each
	// batch's notifications and the run's cursor commit together. Default
	// 1000, which is also the most (MaxRecipients).
	BatchSize int
	// Pause is the wait between two batches of a run. Default 10 ms;
	// negative: none.
	Pause time.Duration
	// Concurrency is how many runs the runner works on at once. Default 4.
	Concurrency int
	// PollInterval bounds how long an idle runner waits before looking for
	// runs started on another instance. Default 1 s.
	PollInterval time.Duration
	// EventRetention is how long an applied event is remembered — a
	// redelivery within it is answered from its record — and a finished
	// rule run kept. Default 7 days; negative: forever.
	EventRetention time.Duration
	// DefaultAudience is the audience limit of a rule that names none.
	// Default 100,000.
	DefaultAudience int
	// MaxAudience is the largest audience limit a rule may name (a rule
	// naming more is refused on save, and one saved before the bound was
	// lowered is held to it). Default and most 1,000,000.
	MaxAudience int
	// Disabled turns the runner off on this instance.
	Disabled bool
	// AudienceRetry is how long a run whose audience source or webhook
	// failed waits at its cursor before it is tried again; after three
	// failures in a row its last_error says why. Default 5 s.
	AudienceRetry time.Duration
	// WebhookTimeout bounds a call of an audience webhook that names no
	// timeout of its own. Default 5 s.
	WebhookTimeout time.Duration
	// WebhookMaxTimeout bounds every call of an audience webhook: a rule
	// naming more is refused, and a call never waits longer. Default 30 s,
	// at most 1 h.
	WebhookMaxTimeout time.Duration
	// WebhookMaxAnswer bounds an audience webhook's answer, in bytes.
	// Default 1 MiB, at most 64 MiB.
	WebhookMaxAnswer int64
	// MaxPerEvent bounds the enabled rules of one source and event name:
	// each of them judges every such event, so saving or enabling one
	// more is refused. Default 100, at most MaxRulesPerEvent.
	MaxPerEvent int
	// RecordedDecisions is how many rule decisions an event's answer and
	// its stored record name; the counts cover them all. Default 100, at
	// most MaxRecordedDecisions.
	RecordedDecisions int
	// CompiledCache is how many compiled rules a Client keeps (least
	// recently used first out). Default DefaultCompiledRules.
	CompiledCache int
	// InlineRecipients bounds the audience whose only batch Track writes
	// in the event's own transaction (issue 39 item 3): a run whose
	// audience — the event's user, an explicit list, or the interested
	// users, read before the transaction — is at most this many is
	// recorded done with its notifications, and the rule runner never
	// sees it; a larger audience, a registered source or webhook, goes
	// through the runner. Default DefaultInlineRecipients (or BatchSize,
	// when smaller); negative: off; at most BatchSize.
	InlineRecipients int
}

// Bounds of RuleConfig (issue 31 item 4).
const (
	DefaultRulesPerEvent     = 100
	MaxRulesPerEvent         = 10_000
	DefaultRecordedDecisions = 100
	MaxRecordedDecisions     = 1000
	MaxCompiledRules         = 1_000_000
	DefaultInlineRecipients  = 100
	// DefaultRuleBatchSize is the runner's batch size when BatchSize is 0.
	DefaultRuleBatchSize = fanout.DefaultBatchSize
)

// normalize fills RuleConfig's defaults and checks its bounds.
func (rc *RuleConfig) normalize() error {
	if rc.EventRetention == 0 {
		rc.EventRetention = DefaultEventRetention
	}
	if rc.MaxAudience == 0 {
		rc.MaxAudience = rule.MaxAudienceLimit
	}
	if rc.DefaultAudience == 0 {
		rc.DefaultAudience = min(rule.DefaultAudienceLimit, rc.MaxAudience)
	}
	if rc.MaxAudience < 1 || rc.MaxAudience > rule.MaxAudienceLimit || rc.DefaultAudience < 1 || rc.DefaultAudience > rc.MaxAudience {
		return fmt.Errorf("herald: need 1 <= Rules.DefaultAudience (%d) <= Rules.MaxAudience (%d) <= %d",
			rc.DefaultAudience, rc.MaxAudience, rule.MaxAudienceLimit)
	}
	if rc.MaxPerEvent == 0 {
		rc.MaxPerEvent = DefaultRulesPerEvent
	}
	if rc.MaxPerEvent < 1 || rc.MaxPerEvent > MaxRulesPerEvent {
		return fmt.Errorf("herald: Rules.MaxPerEvent %d must be between 1 and %d", rc.MaxPerEvent, MaxRulesPerEvent)
	}
	if rc.RecordedDecisions == 0 {
		rc.RecordedDecisions = DefaultRecordedDecisions
	}
	if rc.RecordedDecisions < 1 || rc.RecordedDecisions > MaxRecordedDecisions {
		return fmt.Errorf("herald: Rules.RecordedDecisions %d must be between 1 and %d", rc.RecordedDecisions, MaxRecordedDecisions)
	}
	if rc.CompiledCache == 0 {
		rc.CompiledCache = DefaultCompiledRules
	}
	if rc.CompiledCache < 1 || rc.CompiledCache > MaxCompiledRules {
		return fmt.Errorf("herald: Rules.CompiledCache %d must be between 1 and %d", rc.CompiledCache, MaxCompiledRules)
	}
	batch := rc.BatchSize
	if batch <= 0 {
		batch = DefaultRuleBatchSize
	}
	if rc.InlineRecipients == 0 {
		rc.InlineRecipients = min(DefaultInlineRecipients, batch)
	}
	if rc.InlineRecipients > batch {
		return fmt.Errorf("herald: Rules.InlineRecipients (rules.inline_recipients) %d must be at most the runner's batch size %d (rules.batch_size)",
			rc.InlineRecipients, batch)
	}
	return nil
}

// RuleRun is one rule's fan-out of one event.
type RuleRun = heraldtype.RuleRun

// RuleRunPage is one page of a rule's runs, newest first.
type RuleRunPage struct {
	Runs       []RuleRun `json:"runs"`
	NextCursor string    `json:"next_cursor,omitempty"`
}

// ListRuleRuns returns a page of the rule's runs, newest first (GET
// /v1/rules/{name}/runs): each event the rule fired on, what it sends,
// how far its fan-out went and why it stopped.
func (c *Client) ListRuleRuns(ctx context.Context, f heraldtype.RuleRunFilter) (RuleRunPage, error) {
	if err := validID("name", f.Rule); err != nil {
		return RuleRunPage{}, err
	}
	if _, err := c.store.GetRule(ctx, f.Rule); err != nil {
		return RuleRunPage{}, err
	}
	rs, next, err := c.store.ListRuleRuns(ctx, f)
	if err != nil {
		return RuleRunPage{}, err
	}
	if rs == nil {
		rs = []RuleRun{}
	}
	return RuleRunPage{Runs: rs, NextCursor: next}, nil
}

// newRuleRunner builds the rule runner, a leader-only service.
func (c *Client) newRuleRunner() (*fanout.Runner, error) {
	rc := c.cfg.Rules
	if rc.BatchSize > MaxRecipients {
		return nil, fmt.Errorf("herald: the rule runner's batch size %d is above %d (MaxRecipients)", rc.BatchSize, MaxRecipients)
	}
	return fanout.New(fanout.Config{
		Store: c.store, Build: c.buildRuleBatch, Audiences: c.audiences, RetryPause: rc.AudienceRetry,
		Enqueued:  func(typ string, res store.EnqueueResult) { c.enqueued(typ, res, true) },
		BatchSize: rc.BatchSize, Pause: rc.Pause, Concurrency: rc.Concurrency, Poll: rc.PollInterval,
		Now: c.cfg.Now, Metrics: c.metrics, Logger: c.Logger(ComponentRules), Tracer: c.tracer,
	})
}

// buildRuleBatch makes the trigger of one batch of a rule run: the run's
// notification to each of users, validated and routed like any trigger,
// de-duplicated per user × subject × type (S3.8), with the rule and the
// event on its timeline (S3.12).
func (c *Client) buildRuleBatch(ctx context.Context, run heraldtype.RuleRun, users []string) (store.EnqueueParams, error) {
	n := run.Job.Notification
	req := Request{UserIDs: users, Type: n.Type, Title: n.Title, Body: n.Body, Data: n.Data, Channels: n.Channels,
		Priority: n.Priority, DedupeKey: n.DedupeKey}
	p, err := c.prepare(ctx, &req)
	if err != nil {
		return p, err
	}
	src := &heraldtype.Source{Kind: heraldtype.SourceRule, ID: run.EventID, Name: run.Rule, Occurrence: run.ID, Event: run.Event}
	for i := range p.Notifications {
		p.Notifications[i].Source = src
	}
	stampTrace(ctx, &p) // the batch's span, in the event's trace (internal/fanout/tracing.go)
	return p, nil
}

// DryRunSample is how many recipients a dry run names.
const DryRunSample = 10

// audiencePage is how many recipients one audience read takes.
const audiencePage = 1000

// PutRule creates or replaces the rule r.Name (PUT /v1/rules/{name}),
// validated on save: the detector, the audience, the templates (each
// parsed), and the notification as a trigger of it would be validated —
// its type must be declared. It returns the stored rule and whether it
// was created.
func (c *Client) PutRule(ctx context.Context, r Rule) (Rule, bool, error) {
	if err := validID("name", r.Name); err != nil {
		return Rule{}, false, err
	}
	if r.Audience.Limit == 0 {
		r.Audience.Limit = c.cfg.Rules.DefaultAudience
	}
	compiled, err := rule.Compile(r, c.templateLimits())
	if err != nil {
		return Rule{}, false, err
	}
	r = compiled.Rule
	if err := validTypeName(r.Notify.Type); err != nil {
		return Rule{}, false, prefixField("notify.", err)
	}
	if _, err := c.types.Declared(ctx, r.Notify.Type); heraldtype.ErrorCode(err) == heraldtype.ENOTFOUND {
		return Rule{}, false, heraldtype.FieldErrorf("notify.type", "%q is not declared: declare it first (PUT /v1/types/%s or types: in the configuration)", r.Notify.Type, r.Notify.Type)
	} else if err != nil {
		return Rule{}, false, err
	}
	// The channels, priority and data keys as a trigger's, once: with the
	// templates standing in for the text they will render.
	trig := Request{UserID: "rule-check", Type: r.Notify.Type, Title: r.Notify.Title, Body: r.Notify.Body,
		Data: r.Notify.Data, Channels: r.Notify.Channels, Priority: r.Notify.Priority}
	if _, err := c.prepare(ctx, &trig); err != nil {
		return Rule{}, false, prefixField("notify.", err)
	}
	for _, u := range r.Audience.UserIDs {
		if err := validID("audience.user_ids", u); err != nil {
			return Rule{}, false, err
		}
	}
	if err := c.checkRuleAudience(r.Audience); err != nil {
		return Rule{}, false, err
	}
	if err := c.checkRulesPerEvent(ctx, r); err != nil {
		return Rule{}, false, err
	}
	saved, created, err := c.store.PutRule(ctx, r, c.now().UTC())
	if err == nil {
		c.metrics.DeclareRules(saved.Name)
	}
	return saved, created, err
}

// checkRulesPerEvent refuses to save an enabled rule that would be one
// more than rules.max_per_event judging the events of its source and
// name: every such event runs each of them (issue 31 item 4). Replacing a
// rule that is already enabled there never counts twice. Two saves racing
// may each see room for one more: the bound keeps the work per event in
// proportion, it is not an exact count.
func (c *Client) checkRulesPerEvent(ctx context.Context, r Rule) error {
	if r.Disabled {
		return nil
	}
	limit := c.cfg.Rules.MaxPerEvent
	f := RuleFilter{Source: store.RuleSourceColumn(r), Event: r.When.Event, Enabled: true, Limit: store.MaxRulePage}
	others := 0
	for {
		rs, next, err := c.store.ListRules(ctx, f)
		if err != nil {
			return err
		}
		for _, o := range rs {
			if o.Name != r.Name {
				others++
			}
		}
		if others >= limit {
			return heraldtype.FieldErrorf("when.event", "%d rules are already enabled for %s events from %s; "+
				"the limit is %d (rules.max_per_event): disable or delete one first", others, r.When.Event, f.Source, limit)
		}
		if next == "" {
			return nil
		}
		f.Cursor = next
	}
}

// GetRule returns the rule named name.
func (c *Client) GetRule(ctx context.Context, name string) (Rule, error) {
	if err := validID("name", name); err != nil {
		return Rule{}, err
	}
	return c.store.GetRule(ctx, name)
}

// DeleteRule deletes the rule named name.
func (c *Client) DeleteRule(ctx context.Context, name string) error {
	if err := validID("name", name); err != nil {
		return err
	}
	return c.store.DeleteRule(ctx, name)
}

// ListRules returns a page of rules by name.
func (c *Client) ListRules(ctx context.Context, f RuleFilter) (RulePage, error) {
	rs, next, err := c.store.ListRules(ctx, f)
	if err != nil {
		return RulePage{}, err
	}
	return RulePage{Rules: rs, NextCursor: next}, nil
}

// DryRunRule answers what the rule named name would do with event e —
// whether its detector fires, how many users its audience holds (up to
// its limit) with a sample, and the rendered message — without sending
// anything or changing any state (POST /v1/rules/{name}/dry-run). The
// detector judges the event as the first of its subject.
func (c *Client) DryRunRule(ctx context.Context, name string, e Event) (RuleDryRun, error) {
	r, err := c.GetRule(ctx, name)
	if err != nil {
		return RuleDryRun{}, err
	}
	if err := validEventName("name", e.Name); err != nil {
		return RuleDryRun{}, err
	}
	if err := validData(e.Data, false); err != nil {
		return RuleDryRun{}, err
	}
	compiled, err := rule.Compile(r, c.templateLimits())
	if err != nil {
		return RuleDryRun{}, err
	}
	out := RuleDryRun{Sample: []string{}}
	if r.Disabled || e.Name != r.When.Event {
		out.Reason = "the rule is for " + r.When.Event + " events"
		if r.Disabled {
			out.Reason = "the rule is disabled"
		}
		return out, nil
	}
	out.Matches = true
	now := c.now().UTC()
	at := now
	if e.OccurredAt != nil {
		at = e.OccurredAt.UTC()
	}
	fields := eventFields(e)
	res, _, err := rule.Detect(r.When.Detect, fields, at, rule.State{})
	if err != nil {
		out.Error = err.Error()
		return out, nil
	}
	out.Detected, out.Reason = res.Fired, res.Reason
	msg, err := c.ruleMessage(ctx, compiled, fields, res)
	if err != nil && ctx.Err() != nil {
		return RuleDryRun{}, ctx.Err()
	}
	if err != nil {
		out.Error = err.Error()
		if limit := renderFailure(err); limit != "" && limit != "other" {
			c.metrics.TemplateOverBudget.WithLabelValues("rule_dry_run", limit).Inc()
		}
	}
	if msg.Title != "" || msg.Body != "" || len(msg.Data) > 0 {
		out.Notification = &RenderedNotification{Type: msg.Type, Title: msg.Title, Body: msg.Body, Data: msg.Data, Channels: msg.Channels}
	}
	a, ok := c.jobAudience(compiled, e, fields, now)
	if !ok {
		return out, nil
	}
	src := c.audiences.ForJob(r.Name, a)
	after := ""
	for out.AudienceSize < a.Limit {
		page, err := src.Next(ctx, after, min(audiencePage, a.Limit-out.AudienceSize))
		if err != nil && (a.Source != "" || a.Webhook != nil) {
			// The deployment's own source failed: the dry run says so, as
			// the run's last_error would.
			out.Error = err.Error()
			return out, nil
		}
		if err != nil {
			return RuleDryRun{}, err
		}
		if len(page) == 0 {
			break
		}
		for _, u := range page {
			if len(out.Sample) < DryRunSample {
				out.Sample = append(out.Sample, u.ID)
			}
		}
		out.AudienceSize += len(page)
		after = page[len(page)-1].ID
	}
	out.AudienceCapped = out.AudienceSize >= a.Limit
	return out, nil
}

// eventFields are an event's fields as rules see them: its data, then
// its id, name, user_id and subject.
func eventFields(e Event) rule.Fields {
	f := make(rule.Fields, len(e.Data)+4)
	for k, v := range e.Data {
		f[k] = v
	}
	for k, v := range map[string]string{"id": e.ID, "name": e.Name, "user_id": e.UserID, "subject": e.Subject} {
		if v != "" {
			f[k] = v
		}
	}
	return f
}
