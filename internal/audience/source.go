package audience

import (
	"context"
	"fmt"
	"net/http"
	"time"

	"github.com/heraldhq/herald/heraldtype"
	"github.com/heraldhq/herald/internal/callout"
)

// Users is an audience source a deployment writes in Go
// (herald.AudienceSource): a page of user ids for a query, in ascending
// byte order, all greater than q.After; an empty page is the end.
type Users interface {
	Users(ctx context.Context, q heraldtype.AudienceQuery) ([]string, error)
}

// FromUsers is the audience src pages for q (its Rule and event; After
// and Limit are set per page). A page out of order, or with an id not
// after the cursor, is an error: the run's cursor could not resume it.
// A page longer than asked is cut to the limit (it is in order, so the
// cursor resumes after the last id taken).
func FromUsers(src Users, q heraldtype.AudienceQuery) Source {
	return fromUsers{src: src, q: q, what: "audience source"}
}

type fromUsers struct {
	src  Users
	q    heraldtype.AudienceQuery
	what string
}

func (s fromUsers) Next(ctx context.Context, after string, limit int) ([]User, error) {
	q := s.q
	q.After, q.Limit = after, limit
	ids, err := s.src.Users(ctx, q)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", s.what, err)
	}
	return ordered(s.what, ids, after, limit)
}

// ordered checks a page's order and cuts it to limit.
func ordered(what string, ids []string, after string, limit int) ([]User, error) {
	ids = ids[:min(len(ids), limit)]
	out := make([]User, len(ids))
	prev := after
	for i, id := range ids {
		if id == "" {
			return nil, fmt.Errorf("%s: user id %d of the page is empty", what, i)
		}
		if id <= prev {
			return nil, fmt.Errorf("%s: user ids must come in ascending order after the cursor %q: %q follows %q", what, after, id, prev)
		}
		out[i], prev = User{ID: id}, id
	}
	return out, nil
}

// unregistered is the source a rule names that this instance does not
// have (a configuration changed after the rule was saved): every page is
// an error, so the run waits at its cursor, says why, and resumes on an
// instance that has it.
type unregistered string

func (u unregistered) Next(context.Context, string, int) ([]User, error) {
	return nil, fmt.Errorf("audience source %q is not registered on this instance (Config.AudienceSources)", string(u))
}

// Webhook defaults and bounds (rules.webhook_* in the configuration).
const (
	DefaultWebhookTimeout    = 5 * time.Second
	DefaultWebhookMaxTimeout = 30 * time.Second
	// DefaultWebhookMaxAnswer holds a page of 1,000 ids of 128 bytes
	// several times over.
	DefaultWebhookMaxAnswer = 1 << 20
)

// WebhookConfig bounds the calls of audience webhooks.
type WebhookConfig struct {
	// Client makes the calls. Default: a client without a timeout of its
	// own (each call has its own).
	Client *http.Client
	// Timeout bounds a call of a webhook that names none. Default 5 s.
	Timeout time.Duration
	// MaxTimeout bounds every call, whatever the rule says. Default 30 s.
	MaxTimeout time.Duration
	// MaxAnswer bounds an answer's body in bytes. Default 1 MiB.
	MaxAnswer int64
}

func (c WebhookConfig) withDefaults() WebhookConfig {
	if c.Client == nil {
		c.Client = &http.Client{}
	}
	if c.Timeout <= 0 {
		c.Timeout = DefaultWebhookTimeout
	}
	if c.MaxTimeout <= 0 {
		c.MaxTimeout = DefaultWebhookMaxTimeout
	}
	if c.MaxAnswer <= 0 {
		c.MaxAnswer = DefaultWebhookMaxAnswer
	}
	return c
}

// WebhookAnswer is what an audience webhook answers: the next user ids,
// in ascending order; an empty list is the end of the audience.
type WebhookAnswer struct {
	Users []string `json:"users"`
}

// Webhook is the audience an operator's endpoint pages (issue 20 item 3):
// each page is a POST of q (After and Limit set) to url, within timeout
// (the config's default when zero, never above its maximum), its answer
// at most cfg.MaxAnswer bytes. A failed call is an error: the run stays
// at its cursor and is tried again.
func Webhook(cfg WebhookConfig, url string, timeout time.Duration, q heraldtype.AudienceQuery) Source {
	cfg = cfg.withDefaults()
	if timeout <= 0 {
		timeout = cfg.Timeout
	}
	return fromUsers{src: webhook{cfg: cfg, url: url, timeout: min(timeout, cfg.MaxTimeout)}, q: q, what: "audience webhook"}
}

type webhook struct {
	cfg     WebhookConfig
	url     string
	timeout time.Duration
}

func (w webhook) Users(ctx context.Context, q heraldtype.AudienceQuery) ([]string, error) {
	var ans WebhookAnswer
	err := callout.PostJSON(ctx, w.cfg.Client, w.url, w.timeout, w.cfg.MaxAnswer, q, &ans)
	return ans.Users, err
}
