package herald

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/heraldhq/herald/heraldtype"
	"github.com/heraldhq/herald/internal/webhook"
	"github.com/heraldhq/herald/store"
)

// The outbound webhook endpoints as the Client manages them (issue 35
// item 4): registration with the URL checked by the guard, changes,
// rotation, the messages and their replay. The HTTP API's /v1/webhooks
// calls these.

// webhookURLMax bounds an endpoint's URL, webhookDescriptionMax its
// description; webhookPageDefault is a page of messages without a limit.
const (
	webhookURLMax         = 2048
	webhookDescriptionMax = 500
	webhookPageDefault    = 50
)

// checkWebhookURL checks an endpoint's URL when it is registered: an
// absolute http or https URL without credentials or fragment, whose host
// the guard does not refuse outright (localhost, an internal address
// outside callout.allow). What a name resolves to is checked at each dial.
func (c *Client) checkWebhookURL(raw string) error {
	if raw == "" {
		return heraldtype.FieldErrorf("url", "is required")
	}
	if len(raw) > webhookURLMax {
		return heraldtype.FieldErrorf("url", "is %d bytes; the limit is %d", len(raw), webhookURLMax)
	}
	u, err := url.Parse(raw)
	if err != nil || !u.IsAbs() || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
		return heraldtype.FieldErrorf("url", "must be an absolute http or https URL")
	}
	if u.User != nil {
		return heraldtype.FieldErrorf("url", "must not carry credentials")
	}
	if u.Fragment != "" {
		return heraldtype.FieldErrorf("url", "must not have a fragment")
	}
	if err := c.webhookOut.CheckURL(u); err != nil {
		return heraldtype.FieldErrorf("url", "%s: %v", u.Hostname(), err)
	}
	return nil
}

// checkWebhookEvents checks an endpoint's event types: known ones, each
// once (empty: every type).
func checkWebhookEvents(events []string) error {
	for i, e := range events {
		if !slices.Contains(heraldtype.WebhookEventTypes, e) {
			return heraldtype.FieldErrorf(fmt.Sprintf("events[%d]", i), "%q is not an event type (known: %v)", e, heraldtype.WebhookEventTypes)
		}
		if slices.Index(events, e) != i {
			return heraldtype.FieldErrorf(fmt.Sprintf("events[%d]", i), "%q is listed twice", e)
		}
	}
	return nil
}

// CreateWebhook registers an endpoint, enabled, with a new signing
// secret, which the answer holds: it is never shown again.
func (c *Client) CreateWebhook(ctx context.Context, in heraldtype.WebhookEndpointInput) (heraldtype.WebhookEndpointSecret, error) {
	if err := c.checkWebhookURL(in.URL); err != nil {
		return heraldtype.WebhookEndpointSecret{}, err
	}
	if err := validText("description", in.Description, webhookDescriptionMax); err != nil {
		return heraldtype.WebhookEndpointSecret{}, err
	}
	if err := checkWebhookEvents(in.Events); err != nil {
		return heraldtype.WebhookEndpointSecret{}, err
	}
	secret, err := webhook.NewSecret()
	if err != nil {
		return heraldtype.WebhookEndpointSecret{}, err
	}
	now := c.now().UTC()
	e := store.WebhookEndpoint{WebhookEndpoint: heraldtype.WebhookEndpoint{ID: "wh_" + newID(now), URL: in.URL,
		Description: in.Description, Events: slices.Clone(in.Events), Enabled: true, CreatedAt: now, UpdatedAt: now},
		Secret: secret}
	if e.Events == nil {
		e.Events = []string{}
	}
	if err := c.store.CreateWebhookEndpoint(ctx, e); err != nil {
		return heraldtype.WebhookEndpointSecret{}, err
	}
	return heraldtype.WebhookEndpointSecret{WebhookEndpoint: e.WebhookEndpoint, Secret: secret}, nil
}

// ListWebhooks returns every endpoint, oldest first.
func (c *Client) ListWebhooks(ctx context.Context) ([]heraldtype.WebhookEndpoint, error) {
	es, err := c.store.ListWebhookEndpoints(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]heraldtype.WebhookEndpoint, len(es))
	for i, e := range es {
		out[i] = shown(e)
	}
	return out, nil
}

// shown is what the API shows of an endpoint: no secret, and the
// rotation's end only while it lasts.
func shown(e store.WebhookEndpoint) heraldtype.WebhookEndpoint {
	w := e.WebhookEndpoint
	if e.PreviousSecret == "" {
		w.PreviousSecretUntil = nil
	}
	if w.Events == nil {
		w.Events = []string{}
	}
	return w
}

// GetWebhook returns an endpoint; not_found if there is none.
func (c *Client) GetWebhook(ctx context.Context, id string) (heraldtype.WebhookEndpoint, error) {
	e, err := c.store.GetWebhookEndpoint(ctx, id)
	if err != nil {
		return heraldtype.WebhookEndpoint{}, err
	}
	return shown(e), nil
}

// UpdateWebhook changes an endpoint's URL, description, events or
// enabled flag.
func (c *Client) UpdateWebhook(ctx context.Context, id string, u heraldtype.WebhookEndpointUpdate) (heraldtype.WebhookEndpoint, error) {
	if u.URL != nil {
		if err := c.checkWebhookURL(*u.URL); err != nil {
			return heraldtype.WebhookEndpoint{}, err
		}
	}
	if u.Description != nil {
		if err := validText("description", *u.Description, webhookDescriptionMax); err != nil {
			return heraldtype.WebhookEndpoint{}, err
		}
	}
	if u.Events != nil {
		if err := checkWebhookEvents(*u.Events); err != nil {
			return heraldtype.WebhookEndpoint{}, err
		}
	}
	e, err := c.store.UpdateWebhookEndpoint(ctx, id, store.WebhookEndpointUpdate(u), c.now().UTC())
	if err != nil {
		return heraldtype.WebhookEndpoint{}, err
	}
	if u.Enabled != nil && *u.Enabled {
		c.notifyWebhooks() // its held messages are due
	}
	return shown(e), nil
}

// DeleteWebhook removes an endpoint and its messages.
func (c *Client) DeleteWebhook(ctx context.Context, id string) error {
	return c.store.DeleteWebhookEndpoint(ctx, id)
}

// RotateWebhookSecret gives an endpoint a new signing secret, which the
// answer holds; the one it replaces keeps signing beside it for
// Webhooks.RotationOverlap, so the receiver can switch in that time.
func (c *Client) RotateWebhookSecret(ctx context.Context, id string) (heraldtype.WebhookEndpointSecret, error) {
	secret, err := webhook.NewSecret()
	if err != nil {
		return heraldtype.WebhookEndpointSecret{}, err
	}
	now := c.now().UTC()
	e, err := c.store.RotateWebhookSecret(ctx, id, secret, now.Add(c.cfg.Webhooks.RotationOverlap), now)
	if err != nil {
		return heraldtype.WebhookEndpointSecret{}, err
	}
	return heraldtype.WebhookEndpointSecret{WebhookEndpoint: shown(e), Secret: secret}, nil
}

// ListWebhookMessages returns a page of an endpoint's messages, newest
// first (with State "dead": its dead letter list).
func (c *Client) ListWebhookMessages(ctx context.Context, id string, f heraldtype.WebhookMessageFilter) (heraldtype.WebhookMessagePage, error) {
	if f.State != "" && !f.State.Valid() {
		return heraldtype.WebhookMessagePage{}, heraldtype.FieldErrorf("state", "must be one of pending, leased, sent, dead")
	}
	limit := f.Limit
	if limit == 0 {
		limit = webhookPageDefault
	}
	if limit < 1 {
		return heraldtype.WebhookMessagePage{}, heraldtype.FieldErrorf("limit", "must be a positive integer")
	}
	limit = min(limit, store.MaxWebhookMessagePage)
	var (
		before     int64
		beforeTxid uint64
	)
	if f.Cursor != "" {
		// "<seq>", or "<txid>.<seq>" where the store orders by transaction.
		txid, seq, hasTxid := strings.Cut(f.Cursor, ".")
		if !hasTxid {
			txid, seq = "0", txid
		}
		t, terr := strconv.ParseUint(txid, 10, 64)
		v, err := strconv.ParseInt(seq, 10, 64)
		if terr != nil || err != nil || v < 1 {
			return heraldtype.WebhookMessagePage{}, heraldtype.FieldErrorf("cursor", "is not a cursor of this list")
		}
		before, beforeTxid = v, t
	}
	ms, err := c.store.ListWebhookMessages(ctx, store.WebhookMessageFilter{EndpointID: id, State: f.State, Before: before,
		BeforeTxid: beforeTxid, Limit: limit})
	if err != nil {
		return heraldtype.WebhookMessagePage{}, err
	}
	page := heraldtype.WebhookMessagePage{Messages: ms}
	if len(ms) == limit {
		last := ms[len(ms)-1]
		page.NextCursor = strconv.FormatInt(last.Seq, 10)
		if last.Txid > 0 {
			page.NextCursor = strconv.FormatUint(last.Txid, 10) + "." + page.NextCursor
		}
	}
	return page, nil
}

// maxWebhookReplay bounds the messages one replay names.
const maxWebhookReplay = 1000

// ReplayWebhookMessages sends an endpoint's dead messages again with
// their event ids: those of seqs, or every dead one when seqs is empty.
func (c *Client) ReplayWebhookMessages(ctx context.Context, id string, seqs []int64) (heraldtype.WebhookReplayResult, error) {
	if len(seqs) > maxWebhookReplay {
		return heraldtype.WebhookReplayResult{}, heraldtype.FieldErrorf("seqs", "names %d messages; the limit is %d", len(seqs), maxWebhookReplay)
	}
	for i, s := range seqs {
		if s < 1 {
			return heraldtype.WebhookReplayResult{}, heraldtype.FieldErrorf(fmt.Sprintf("seqs[%d]", i), "must be a positive integer")
		}
	}
	n, err := c.store.ReplayWebhookMessages(ctx, id, seqs, c.now().UTC())
	if err != nil {
		return heraldtype.WebhookReplayResult{}, err
	}
	if n > 0 {
		c.notifyWebhooks()
	}
	return heraldtype.WebhookReplayResult{Replayed: n}, nil
}

// TestWebhook sends the endpoint a webhook.test event now, signed like
// every message and through the same guard, and returns what it
// answered. It is a probe: it is not queued, not retried, not filtered by
// the endpoint's events, it is sent to a disabled endpoint too, and its
// outcome changes nothing (the endpoint's failing_since and enabled stay
// as they are). The send is bounded by Webhooks.Timeout.
func (c *Client) TestWebhook(ctx context.Context, id string) (heraldtype.WebhookTestResult, error) {
	sctx, cancel := context.WithTimeout(ctx, cmp.Or(c.cfg.Worker.StoreTimeout, c.cfg.Worker.LeaseDuration, webhook.DefaultStoreTimeout))
	e, err := c.store.GetWebhookEndpoint(sctx, id)
	cancel()
	if err != nil {
		return heraldtype.WebhookTestResult{}, err
	}
	now := c.now().UTC()
	t := webhook.Target{URL: e.URL, Secrets: []string{e.Secret}}
	if e.PreviousSecret != "" && e.PreviousSecretUntil != nil && e.PreviousSecretUntil.After(now) {
		t.Secrets = append(t.Secrets, e.PreviousSecret)
	}
	data, err := json.Marshal(struct {
		EndpointID string `json:"endpoint_id"`
	}{e.ID})
	if err != nil {
		return heraldtype.WebhookTestResult{}, err
	}
	m := heraldtype.WebhookMessage{EndpointID: e.ID, EventID: "evt_test_" + newID(now), Type: heraldtype.WebhookTest,
		OrderingKey: e.ID, Data: data, OccurredAt: now}
	start := time.Now()
	a := webhook.Send(ctx, c.webhookOut, t, m, c.now, cmp.Or(c.cfg.Webhooks.Timeout, webhook.DefaultTimeout))
	res := heraldtype.WebhookTestResult{EventID: m.EventID, Type: m.Type, OK: a.Err == nil, Status: a.Status,
		DurationMS: time.Since(start).Milliseconds()}
	if a.Err != nil {
		res.Error = a.Err.Error()
	}
	return res, nil
}
