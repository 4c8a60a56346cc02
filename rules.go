package herald

import (
	"context"
	"time"

	"github.com/heraldhq/herald/heraldtype"
	"github.com/heraldhq/herald/internal/audience"
	"github.com/heraldhq/herald/internal/rule"
	"github.com/heraldhq/herald/store"
)

// Rule turns events into notifications (issue 20 item 2, S3.2, S3.4).
type Rule = heraldtype.Rule

// RuleFilter selects a page of rules.
type RuleFilter = store.RuleFilter

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
	AudienceSize   int      `json:"audience_size"`
	AudienceCapped bool     `json:"audience_capped,omitempty"`
	Sample         []string `json:"sample"`
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
	compiled, err := rule.Compile(r)
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
	return c.store.PutRule(ctx, r, c.now().UTC())
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
	compiled, err := rule.Compile(r)
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
	rendered, err := compiled.Render(rule.Vars(fields, res))
	if err != nil {
		out.Error = err.Error()
	} else {
		out.Notification = &RenderedNotification{Type: r.Notify.Type, Title: rendered.Title, Body: rendered.Body,
			Data: rendered.Data, Channels: r.Notify.Channels}
		trig := Request{UserID: "rule-check", Type: r.Notify.Type, Title: rendered.Title, Body: rendered.Body,
			Data: rendered.Data, Channels: r.Notify.Channels, Priority: r.Notify.Priority}
		if _, err := c.prepare(ctx, &trig); err != nil {
			out.Error = "the rendered notification is refused: " + err.Error()
		}
		out.Notification.Channels = trig.Channels
	}
	err = c.ruleAudience(ctx, compiled, fields, e, now, func(users []string) error {
		for _, u := range users {
			if len(out.Sample) < DryRunSample {
				out.Sample = append(out.Sample, u)
			}
		}
		out.AudienceSize += len(users)
		return nil
	})
	if err != nil {
		return RuleDryRun{}, err
	}
	out.AudienceCapped = out.AudienceSize >= r.Audience.Limit
	return out, nil
}

// ruleAudience streams the recipients of rule cr for the event with
// fields f to fn, in batches of at most audiencePage users and never more
// than the rule's limit in all, from the rule's audience.Source: the
// interested users of the event's subject (keyset pages, never the whole
// audience at once), an explicit list, or the event's user (S3.3).
func (c *Client) ruleAudience(ctx context.Context, cr *rule.Compiled, f rule.Fields, e Event, now time.Time, fn func([]string) error) error {
	a := cr.Rule.Audience
	var src audience.Source
	switch {
	case a.EventUser:
		if e.UserID == "" {
			return nil
		}
		src = audience.List([]string{e.UserID})
	case len(a.UserIDs) > 0:
		src = audience.List(a.UserIDs)
	case e.Subject == "":
		return nil // an event about no subject interests nobody
	default:
		q := heraldtype.InterestQuery{Subject: e.Subject, Kinds: a.Interest.Kinds}
		if w := time.Duration(a.Interest.Within); w > 0 {
			q.Since = now.Add(-w)
		}
		src = audience.Interested(c.store, q, func(data map[string]string) bool { return cr.Admits(f, data) })
	}
	after, left := "", a.Limit
	for left > 0 {
		page, err := src.Next(ctx, after, min(audiencePage, left))
		if err != nil || len(page) == 0 {
			return err
		}
		users := make([]string, len(page))
		for i, u := range page {
			users[i] = u.ID
		}
		if err := fn(users); err != nil {
			return err
		}
		left -= len(users)
		after = users[len(users)-1]
	}
	return nil
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
