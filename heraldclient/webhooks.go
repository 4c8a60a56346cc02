package heraldclient

import (
	"context"
	"iter"
	"net/http"
	"net/url"

	"github.com/heraldhq/herald/heraldtype"
)

// Outbound webhook endpoints: where Herald sends its signed events.

// CreateWebhook registers an endpoint (POST /v1/webhooks). The answer
// holds its signing secret, which is never shown again: keep it.
func (c *Client) CreateWebhook(ctx context.Context, in heraldtype.WebhookEndpointInput) (heraldtype.WebhookEndpointSecret, error) {
	var out heraldtype.WebhookEndpointSecret
	_, err := c.do(ctx, call{method: http.MethodPost, path: "/v1/webhooks", body: in, out: &out})
	return out, err
}

// ListWebhooks reads every endpoint, oldest first (GET /v1/webhooks).
func (c *Client) ListWebhooks(ctx context.Context) ([]heraldtype.WebhookEndpoint, error) {
	var out struct {
		Webhooks []heraldtype.WebhookEndpoint `json:"webhooks"`
	}
	_, err := c.do(ctx, call{method: http.MethodGet, path: "/v1/webhooks", out: &out})
	return out.Webhooks, err
}

// GetWebhook reads an endpoint (GET /v1/webhooks/{id}).
func (c *Client) GetWebhook(ctx context.Context, id string) (heraldtype.WebhookEndpoint, error) {
	var out heraldtype.WebhookEndpoint
	_, err := c.do(ctx, call{method: http.MethodGet, path: pathf("/v1/webhooks/%s", id), out: &out})
	return out, err
}

// UpdateWebhook changes an endpoint's URL, description, events or
// enabled flag; a nil field is left as it is (PATCH /v1/webhooks/{id}).
// It sets what it is given, so it is retried.
func (c *Client) UpdateWebhook(ctx context.Context, id string, u heraldtype.WebhookEndpointUpdate) (heraldtype.WebhookEndpoint, error) {
	var out heraldtype.WebhookEndpoint
	_, err := c.do(ctx, call{method: http.MethodPatch, path: pathf("/v1/webhooks/%s", id), body: u, out: &out, safe: true})
	return out, err
}

// DeleteWebhook deletes an endpoint and its messages (DELETE
// /v1/webhooks/{id}).
func (c *Client) DeleteWebhook(ctx context.Context, id string) error {
	_, err := c.do(ctx, call{method: http.MethodDelete, path: pathf("/v1/webhooks/%s", id)})
	return err
}

// RotateWebhookSecret gives an endpoint a new signing secret, returned
// this once; the previous one keeps signing until PreviousSecretUntil
// (POST /v1/webhooks/{id}/rotate). Not retried: a repeat would rotate
// again.
func (c *Client) RotateWebhookSecret(ctx context.Context, id string) (heraldtype.WebhookEndpointSecret, error) {
	var out heraldtype.WebhookEndpointSecret
	_, err := c.do(ctx, call{method: http.MethodPost, path: pathf("/v1/webhooks/%s/rotate", id), out: &out})
	return out, err
}

// ListWebhookMessages reads one page of an endpoint's messages, newest
// first (GET /v1/webhooks/{id}/messages); State "dead" is its dead letter
// list.
func (c *Client) ListWebhookMessages(ctx context.Context, id string, f heraldtype.WebhookMessageFilter) (heraldtype.WebhookMessagePage, error) {
	q := newQuery().str("state", string(f.State)).str("cursor", f.Cursor).limit(f.Limit)
	var page heraldtype.WebhookMessagePage
	_, err := c.do(ctx, call{method: http.MethodGet, path: pathf("/v1/webhooks/%s/messages", id), query: url.Values(q), out: &page})
	return page, err
}

// WebhookMessages walks every message of an endpoint f selects.
func (c *Client) WebhookMessages(ctx context.Context, id string, f heraldtype.WebhookMessageFilter) iter.Seq2[heraldtype.WebhookMessage, error] {
	return walk(ctx, f.Cursor, func(ctx context.Context, cursor string) ([]heraldtype.WebhookMessage, string, error) {
		f.Cursor = cursor
		p, err := c.ListWebhookMessages(ctx, id, f)
		return p.Messages, p.NextCursor, err
	})
}

// ReplayWebhookMessages sends an endpoint's dead messages again with
// their event ids: those of seqs, or all of them when seqs is empty
// (POST /v1/webhooks/{id}/replay). A repeat finds them no longer dead, so
// it is retried.
func (c *Client) ReplayWebhookMessages(ctx context.Context, id string, seqs []int64) (heraldtype.WebhookReplayResult, error) {
	var out heraldtype.WebhookReplayResult
	body := struct {
		Seqs []int64 `json:"seqs,omitempty"`
	}{seqs}
	_, err := c.do(ctx, call{method: http.MethodPost, path: pathf("/v1/webhooks/%s/replay", id), body: body, out: &out, safe: true})
	return out, err
}

// TestWebhook sends an endpoint a webhook.test event now and returns what
// it answered (POST /v1/webhooks/{id}/test): a failure of the endpoint is
// in the result (OK false, Status, Error), not an error. It is retried
// like a read: a repeat only sends another test event.
func (c *Client) TestWebhook(ctx context.Context, id string) (heraldtype.WebhookTestResult, error) {
	var out heraldtype.WebhookTestResult
	_, err := c.do(ctx, call{method: http.MethodPost, path: pathf("/v1/webhooks/%s/test", id), out: &out, safe: true})
	return out, err
}
