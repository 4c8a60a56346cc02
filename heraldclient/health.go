package heraldclient

import (
	"context"
	"encoding/json"
	"net/http"
)

// Health asks whether the server process is alive (GET /healthz, no
// credential needed).
func (c *Client) Health(ctx context.Context) error {
	_, err := c.do(ctx, call{method: http.MethodGet, path: "/healthz"})
	return err
}

// Ready asks whether the server can serve: its store answers and its
// intake is not stuck (GET /readyz, no credential needed). A server that
// is not ready answers an *Error with code unavailable and the reason.
// Ready is tried once, never retried: a probe wants the state now.
func (c *Client) Ready(ctx context.Context) error {
	_, err := c.do(ctx, call{method: http.MethodGet, path: "/readyz", noRetry: true})
	return err
}

// VAPIDPublicKey returns the server's Web Push public key (GET
// /v1/webpush/vapid-public-key, no credential needed), which a web page
// passes to pushManager.subscribe as applicationServerKey.
func (c *Client) VAPIDPublicKey(ctx context.Context) (string, error) {
	var out struct {
		PublicKey string `json:"public_key"`
	}
	_, err := c.do(ctx, call{method: http.MethodGet, path: "/v1/webpush/vapid-public-key", out: &out})
	return out.PublicKey, err
}

// OpenAPI returns the server's API contract, its OpenAPI document as JSON
// (GET /openapi.json, no credential needed): what a generator of a client
// in another language, or a linter, reads.
func (c *Client) OpenAPI(ctx context.Context) (json.RawMessage, error) {
	var doc json.RawMessage
	_, err := c.do(ctx, call{method: http.MethodGet, path: "/openapi.json", out: &doc})
	return doc, err
}
