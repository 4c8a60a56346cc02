package audience

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
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
// A webhook's calls go through Resolver.Caller (internal/callout, over
// internal/outbound's guard).
const (
	DefaultWebhookTimeout    = 5 * time.Second
	DefaultWebhookMaxTimeout = 30 * time.Second
	// DefaultWebhookMaxAnswer holds a page of 1,000 ids of 128 bytes
	// several times over.
	DefaultWebhookMaxAnswer = 1 << 20
)

// WebhookConfig bounds the calls of audience webhooks.
type WebhookConfig struct {
	// Caller makes the calls (the guard, the declared secrets). Required
	// to call a webhook: without it every call fails.
	Caller *callout.Caller
	// Timeout bounds a call of a webhook that names none. Default 5 s.
	Timeout time.Duration
	// MaxTimeout bounds every call, whatever the rule says. Default 30 s.
	MaxTimeout time.Duration
	// MaxAnswer bounds an answer's body in bytes. Default 1 MiB.
	MaxAnswer int64
}

func (c WebhookConfig) withDefaults() WebhookConfig {
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
// at most cfg.MaxAnswer bytes, carrying the header of the declared secret
// it names (if any). A failed call is an error: the run stays at its
// cursor and is tried again.
func Webhook(cfg WebhookConfig, w heraldtype.JobWebhook, q heraldtype.AudienceQuery) Source {
	cfg = cfg.withDefaults()
	timeout := w.Timeout.Std()
	if timeout <= 0 {
		timeout = cfg.Timeout
	}
	return fromUsers{src: webhook{cfg: cfg, url: w.URL, secret: w.Secret, timeout: min(timeout, cfg.MaxTimeout)}, q: q, what: "audience webhook"}
}

type webhook struct {
	cfg     WebhookConfig
	url     string
	secret  string
	timeout time.Duration
}

func (w webhook) Users(ctx context.Context, q heraldtype.AudienceQuery) ([]string, error) {
	if w.cfg.Caller == nil {
		return nil, errors.New("no callout caller is configured")
	}
	var ids []string
	err := w.cfg.Caller.Post(ctx, callout.Call{URL: w.url, Timeout: w.timeout, MaxBytes: w.cfg.MaxAnswer, Secret: w.secret, Body: q},
		func(r io.Reader) (err error) {
			ids, err = DecodeWebhookAnswer(r, q.Limit)
			return err
		})
	return ids, err
}

// DecodeWebhookAnswer reads a WebhookAnswer as a stream (issue 31 item 3):
// at most limit ids are kept and the rest of the answer is not read (the
// page is cut to the limit anyway); an id that is not a string is
// refused. Keys other than "users" are skipped.
func DecodeWebhookAnswer(r io.Reader, limit int) ([]string, error) {
	dec := json.NewDecoder(r)
	b := callout.NewBudget(math.MaxInt, "")
	if ok, err := b.Open(dec, '{', ""); err != nil || !ok {
		if err == nil {
			err = callout.Badf("is null, not an object")
		}
		return nil, err
	}
	ids := []string{}
	for dec.More() {
		k, err := b.Key(dec)
		if err != nil {
			return nil, err
		}
		if k != "users" {
			if err := b.Skip(dec); err != nil {
				return nil, err
			}
			continue
		}
		ok, err := b.Open(dec, '[', "users")
		if err != nil {
			return nil, err
		}
		ids = ids[:0]
		for ok && dec.More() {
			if len(ids) >= limit {
				return ids, nil // cut: the rest is never looked at
			}
			tok, err := dec.Token()
			if err != nil {
				return nil, err
			}
			id, isString := tok.(string)
			if !isString {
				return nil, callout.Badf("has users[%d] that is not a string", len(ids))
			}
			ids = append(ids, id)
		}
		if ok {
			if err := b.Close(dec); err != nil {
				return nil, err
			}
		}
	}
	if err := b.Close(dec); err != nil {
		return nil, err
	}
	return ids, callout.End(dec)
}
