package heraldclient

import (
	"context"
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
