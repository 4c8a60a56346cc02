package heraldclient

import (
	"context"
	"iter"
	"net/http"
	"net/url"

	"github.com/heraldhq/herald/heraldtype"
)

// RulePage is one page of rules, by name.
type RulePage struct {
	Rules      []heraldtype.Rule `json:"rules"`
	NextCursor string            `json:"next_cursor,omitempty"`
}

// RuleRunPage is one page of a rule's runs, newest first.
type RuleRunPage struct {
	Runs       []heraldtype.RuleRun `json:"runs"`
	NextCursor string               `json:"next_cursor,omitempty"`
}

// RuleDryRun is what a rule would do with one event, without sending.
type RuleDryRun struct {
	// Matches: the rule applies to the event (its name; the rule is
	// enabled). The rest is filled in when it does.
	Matches bool `json:"matches"`
	// Detected: the detector fires; Reason says why or why not.
	Detected bool   `json:"detected"`
	Reason   string `json:"reason"`
	// AudienceSize counts the recipients, at most the rule's limit
	// (AudienceCapped says there were more).
	AudienceSize   int  `json:"audience_size"`
	AudienceCapped bool `json:"audience_capped,omitempty"`
	// Sample names some recipients; empty, with SampleWithheld, for a
	// caller that may not read interests.
	Sample         []string `json:"sample"`
	SampleWithheld bool     `json:"sample_withheld,omitempty"`
	// Notification is the rendered message.
	Notification *RenderedNotification `json:"notification,omitempty"`
	// Error is what would stop the notification.
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

// PutRule creates the rule r.Name or replaces it (PUT /v1/rules/{name});
// created says which. r's CreatedAt and UpdatedAt are the server's.
func (c *Client) PutRule(ctx context.Context, r heraldtype.Rule) (rule heraldtype.Rule, created bool, err error) {
	body := ruleBody{Source: r.Source, When: r.When, Audience: r.Audience, Notify: r.Notify, Disabled: r.Disabled}
	res, err := c.do(ctx, call{method: http.MethodPut, path: pathf("/v1/rules/%s", r.Name), body: body, out: &rule})
	return rule, err == nil && res.status == http.StatusCreated, err
}

// ruleBody is the body of PutRule: a heraldtype.Rule without the fields
// the server owns (the name is the path's).
type ruleBody struct {
	Source   heraldtype.RuleSource   `json:"source,omitzero"`
	When     heraldtype.RuleWhen     `json:"when"`
	Audience heraldtype.RuleAudience `json:"audience"`
	Notify   heraldtype.RuleNotify   `json:"notify"`
	Disabled bool                    `json:"disabled,omitempty"`
}

// GetRule reads a rule (GET /v1/rules/{name}).
func (c *Client) GetRule(ctx context.Context, name string) (heraldtype.Rule, error) {
	var r heraldtype.Rule
	_, err := c.do(ctx, call{method: http.MethodGet, path: pathf("/v1/rules/%s", name), out: &r})
	return r, err
}

// DeleteRule deletes a rule (DELETE /v1/rules/{name}).
func (c *Client) DeleteRule(ctx context.Context, name string) error {
	_, err := c.do(ctx, call{method: http.MethodDelete, path: pathf("/v1/rules/%s", name)})
	return err
}

// ListRules reads one page of rules (GET /v1/rules), by source topic and
// event name. f.Enabled is not a parameter of the API and is ignored.
func (c *Client) ListRules(ctx context.Context, f heraldtype.RuleFilter) (RulePage, error) {
	q := newQuery().str("source", f.Source).str("event", f.Event).str("cursor", f.Cursor).limit(f.Limit)
	var page RulePage
	_, err := c.do(ctx, call{method: http.MethodGet, path: "/v1/rules", query: url.Values(q), out: &page})
	return page, err
}

// Rules walks every rule f selects.
func (c *Client) Rules(ctx context.Context, f heraldtype.RuleFilter) iter.Seq2[heraldtype.Rule, error] {
	return walk(ctx, f.Cursor, func(ctx context.Context, cursor string) ([]heraldtype.Rule, string, error) {
		f.Cursor = cursor
		p, err := c.ListRules(ctx, f)
		return p.Rules, p.NextCursor, err
	})
}

// DryRunRule says what the rule would do with e, sending nothing (POST
// /v1/rules/{name}/dry-run). It changes nothing, so it is retried.
func (c *Client) DryRunRule(ctx context.Context, name string, e Event) (RuleDryRun, error) {
	var out RuleDryRun
	_, err := c.do(ctx, call{method: http.MethodPost, path: pathf("/v1/rules/%s/dry-run", name), body: e, out: &out, safe: true})
	return out, err
}

// ListRuleRuns reads one page of a rule's runs, newest first (GET
// /v1/rules/{name}/runs): each event it fired on and how far its fan-out
// went.
func (c *Client) ListRuleRuns(ctx context.Context, f heraldtype.RuleRunFilter) (RuleRunPage, error) {
	q := newQuery().str("cursor", f.Cursor).limit(f.Limit)
	var page RuleRunPage
	_, err := c.do(ctx, call{method: http.MethodGet, path: pathf("/v1/rules/%s/runs", f.Rule), query: url.Values(q), out: &page})
	return page, err
}

// RuleRuns walks every run of the rule f.Rule.
func (c *Client) RuleRuns(ctx context.Context, f heraldtype.RuleRunFilter) iter.Seq2[heraldtype.RuleRun, error] {
	return walk(ctx, f.Cursor, func(ctx context.Context, cursor string) ([]heraldtype.RuleRun, string, error) {
		f.Cursor = cursor
		p, err := c.ListRuleRuns(ctx, f)
		return p.Runs, p.NextCursor, err
	})
}
