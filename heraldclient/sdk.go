package heraldclient

import (
	"context"
	"net/http"
)

// SDKIntegrity is the web SDK a server serves: its version and, per file,
// the path that pins the file's bytes and its Subresource Integrity value.
type SDKIntegrity struct {
	Version string    `json:"version"`
	Files   []SDKFile `json:"files"`
}

// SDKFile is one file of the web SDK.
type SDKFile struct {
	// Name is the stable name, such as "herald.js".
	Name string `json:"name"`
	// Path pins the bytes: "/sdk/v1/herald.<hash>.js".
	Path string `json:"path"`
	// Integrity is the Subresource Integrity value, "sha384-…".
	Integrity string `json:"integrity"`
}

// SDKIntegrity returns the web SDK's pinned paths and integrity hashes
// (GET /sdk/integrity, no credential needed): what a page's <script
// integrity="…"> names, or a deployment pipeline checks.
func (c *Client) SDKIntegrity(ctx context.Context) (SDKIntegrity, error) {
	var out SDKIntegrity
	_, err := c.do(ctx, call{method: http.MethodGet, path: "/sdk/integrity", out: &out})
	return out, err
}
