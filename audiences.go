package herald

import (
	"context"
	"fmt"
	"regexp"
	"time"

	"github.com/heraldhq/herald/heraldtype"
	"github.com/heraldhq/herald/internal/audience"
	"github.com/heraldhq/herald/internal/callout"
)

// AudienceSource is a deployment's own audience (issue 20 item 3, S3.3):
// behaviour data kept elsewhere — a CRM segment, a warehouse table —
// paged by user id for one event. Register it under a name in
// Config.AudienceSources; a rule names it ("audience":{"source":"crm-segment"}).
//
// Users answers up to q.Limit user ids greater than q.After, in ascending
// byte order ("u10" < "u9"); an empty page is the end of the audience. The
// rule runner calls it once per batch with the last id of the previous
// batch, and again with the same After after a crash, so the same query
// must answer the same page. An error leaves the run at its cursor; it is
// tried again after rules.audience_retry, and the run's last_error says
// why once it keeps failing. Ids of users Herald does not know are left
// out of the fan-out.
type AudienceSource interface {
	Users(ctx context.Context, q AudienceQuery) ([]string, error)
}

// AudienceQuery asks an AudienceSource for one page: the rule, the event
// (its id, name, subject, user and data) and the keyset cursor.
type AudienceQuery = heraldtype.AudienceQuery

// AudienceSourceFunc is a function that is an AudienceSource.
type AudienceSourceFunc func(ctx context.Context, q AudienceQuery) ([]string, error)

// Users calls f.
func (f AudienceSourceFunc) Users(ctx context.Context, q AudienceQuery) ([]string, error) {
	return f(ctx, q)
}

// audienceSourceName is the pattern of a registered source's name, the
// rules' own names' pattern.
var audienceSourceName = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$`)

// MaxWebhookAnswer bounds RuleConfig.WebhookMaxAnswer.
const MaxWebhookAnswer = 64 << 20

// newAudiences checks the registered sources and the webhook bounds and
// returns the resolver of the rule runs' audiences.
func newAudiences(cfg Config, st audience.InterestStore, caller *callout.Caller) (audience.Resolver, error) {
	res := audience.Resolver{Interests: st, Sources: make(map[string]audience.Users, len(cfg.AudienceSources))}
	for name, src := range cfg.AudienceSources {
		if !audienceSourceName.MatchString(name) {
			return res, fmt.Errorf("herald: AudienceSources: %q is not a source name (1-64 letters, digits, '_', '.', '-')", name)
		}
		if src == nil {
			return res, fmt.Errorf("herald: AudienceSources: %q is nil", name)
		}
		res.Sources[name] = src
	}
	rc := cfg.Rules
	switch {
	case rc.WebhookTimeout < 0 || rc.WebhookMaxTimeout < 0 || rc.WebhookMaxAnswer < 0:
		return res, fmt.Errorf("herald: Rules: the webhook timeouts and answer size must not be negative")
	case rc.WebhookMaxTimeout > time.Hour:
		return res, fmt.Errorf("herald: Rules.WebhookMaxTimeout %v is above 1h", rc.WebhookMaxTimeout)
	case rc.WebhookMaxAnswer > MaxWebhookAnswer:
		return res, fmt.Errorf("herald: Rules.WebhookMaxAnswer %d is above %d bytes", rc.WebhookMaxAnswer, MaxWebhookAnswer)
	}
	res.Webhooks = audience.WebhookConfig{Caller: caller, Timeout: rc.WebhookTimeout,
		MaxTimeout: rc.WebhookMaxTimeout, MaxAnswer: rc.WebhookMaxAnswer}
	if res.Webhooks.Timeout == 0 {
		res.Webhooks.Timeout = audience.DefaultWebhookTimeout
	}
	if res.Webhooks.MaxTimeout == 0 {
		res.Webhooks.MaxTimeout = audience.DefaultWebhookMaxTimeout
	}
	if res.Webhooks.Timeout > res.Webhooks.MaxTimeout {
		return res, fmt.Errorf("herald: Rules.WebhookTimeout %v is above Rules.WebhookMaxTimeout %v", res.Webhooks.Timeout, res.Webhooks.MaxTimeout)
	}
	return res, nil
}

// checkRuleAudience checks what of a rule's audience depends on this
// Client: the source it names is registered, its webhook's timeout within
// the bound.
func (c *Client) checkRuleAudience(a heraldtype.RuleAudience) error {
	if a.Limit > c.cfg.Rules.MaxAudience {
		return heraldtype.FieldErrorf("audience.limit", "is %d; the most is %d (rules.max_audience)", a.Limit, c.cfg.Rules.MaxAudience)
	}
	if a.Source != "" {
		if _, ok := c.audiences.Sources[a.Source]; !ok {
			return heraldtype.FieldErrorf("audience.source", "%q is not a registered audience source (Config.AudienceSources)", a.Source)
		}
	}
	if w := a.Webhook; w != nil {
		if w.Timeout.Std() > c.audiences.Webhooks.MaxTimeout {
			return heraldtype.FieldErrorf("audience.webhook.timeout", "must be at most %v (rules.webhook_max_timeout)", c.audiences.Webhooks.MaxTimeout)
		}
		return c.checkCallout("audience.webhook", w.URL, w.Secret)
	}
	return nil
}
