package herald

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/heraldhq/herald/heraldtype"
	"github.com/heraldhq/herald/internal/rule"
	"github.com/heraldhq/herald/store"
)

// A rule whose message could not be rendered — a template over its budget,
// a field it needs that the event lacks — fails its run as render_failed
// (issue 31 item 1). An event from Kafka is applied all the same and its
// offset committed; the intake also keeps it as a dead event of kind
// RecordRenderFailed, whose replay does not apply the event again (it is
// recorded) but renders those runs' messages again with the rules as they
// are now — the operator fixed the template — and sends them.

// renderFailedPrefix begins the error of a message that could not be
// rendered (rule.RenderError), in a RuleOutcome and a run's last error.
const renderFailedPrefix = "render_failed: "

// RenderFailed says whether the rule's message could not be rendered. It
// holds for an outcome read back from the event's record too (a
// redelivery's answer), which keeps the error but not why it failed.
func (o RuleOutcome) RenderFailed() bool { return strings.HasPrefix(o.Error, renderFailedPrefix) }

// RenderFailures is the error of the rules of r whose message could not be
// rendered, naming each ("render_failed: rule "price-drop": notify.title:
// …"); nil when there is none. It sees the rules r lists (the first
// RuleConfig.RecordedDecisions).
func (r TrackResult) RenderFailures() error {
	var parts []string
	for _, o := range r.Rules {
		if o.RenderFailed() {
			parts = append(parts, ruleRenderError(o.Rule, o.Error))
		}
	}
	if len(parts) == 0 {
		return nil
	}
	return errors.New(renderFailedPrefix + strings.Join(parts, "; "))
}

// ruleRenderError is one rule's render failure, named: `rule "x": notify.title: …`.
func ruleRenderError(name, errText string) string {
	return fmt.Sprintf("rule %q: %s", name, strings.TrimPrefix(errText, renderFailedPrefix))
}

// retryRenders is the replay of a dead event of kind RecordRenderFailed:
// each run of its event that failed because its message could not be
// rendered is rendered again, with its rule as it is now and the event's
// fields (and what the detector added when it judged the event), and
// moved back to running for the rule runner (store.RetryRuleRun, guarded:
// of two replays at once one restarts a run). A rule that still cannot
// render fails the replay with its error; a replay that finds no such run
// (retried before) is a conflict and sends nothing.
func (c *Client) retryRenders(ctx context.Context, d DeadEvent, e Event) error {
	e.Topic = d.Topic
	if e.ID == "" || e.Name == "" {
		return heraldtype.Errorf(heraldtype.ECONFLICT, "dead event %d: its event has no id or name", d.ID)
	}
	runID := store.RuleRunID(e.Topic, e.Namespace, e.ID)
	fields := eventFields(e)
	retried := 0
	var errs []error
	f := RuleFilter{Source: e.Topic, Event: e.Name, Limit: store.MaxRulePage}
	for {
		rs, next, err := c.store.ListRules(ctx, f)
		if err != nil {
			return err
		}
		for _, r := range rs {
			ok, err := c.retryRender(ctx, r, runID, fields)
			if err != nil {
				errs = append(errs, err)
			}
			if ok {
				retried++
			}
		}
		if next == "" {
			break
		}
		f.Cursor = next
	}
	if retried > 0 {
		c.metrics.RuleRuns.WithLabelValues("started").Add(float64(retried))
		if c.ruleRunner != nil {
			c.ruleRunner.Wake()
		}
	}
	if len(errs) > 0 {
		return errors.Join(errs...)
	}
	if retried == 0 {
		return heraldtype.Errorf(heraldtype.ECONFLICT,
			"dead event %d: no run of event %q waits on its message any more (replayed before); nothing is sent again", d.ID, e.ID)
	}
	return nil
}

// retryRender renders r's failed run of runID again and restarts it; ok
// is false when r has no such run waiting on its message.
func (c *Client) retryRender(ctx context.Context, r Rule, runID string, fields rule.Fields) (ok bool, err error) {
	run, err := c.store.RuleRun(ctx, r.Name, runID)
	switch {
	case heraldtype.ErrorCode(err) == heraldtype.ENOTFOUND:
		return false, nil
	case err != nil:
		return false, err
	case run.State != heraldtype.RunFailed || !strings.HasPrefix(run.LastError, renderFailedPrefix):
		return false, nil
	case r.Disabled:
		return false, heraldtype.Errorf(heraldtype.ECONFLICT, "rule %q is disabled: enable it to send its run", r.Name)
	}
	cr, err := c.compiledRules.get(r, c.templateLimits())
	if err != nil {
		return false, heraldtype.Errorf(heraldtype.EINVALID, "%s", ruleRenderError(r.Name, err.Error()))
	}
	msg, err := c.ruleMessage(ctx, cr, fields, rule.Result{Fired: true, Vars: run.Job.DetectorVars})
	if err != nil {
		if limit := renderFailure(err); limit != "" && limit != "other" {
			c.metrics.TemplateOverBudget.WithLabelValues("rule", limit).Inc()
		}
		return false, heraldtype.Errorf(heraldtype.EINVALID, "%s%s", renderFailedPrefix, ruleRenderError(r.Name, err.Error()))
	}
	msg.DedupeKey = run.Subject
	job := run.Job
	job.Notification, job.DetectorVars = msg, nil
	return c.store.RetryRuleRun(ctx, store.RuleRetry{Rule: r.Name, RunID: runID, Version: run.Version, Job: job,
		Now: c.now().UTC()})
}
