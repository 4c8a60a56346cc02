package heraldclient

import (
	"context"
	"iter"
	"net/http"
	"net/url"
	"time"

	"github.com/heraldhq/herald/heraldtype"
)

// TypeConfig declares a notification type (the body of PutType); every
// field is optional and defaults as documented.
type TypeConfig struct {
	// Channels a trigger of this type uses when it names none. Default
	// push.
	Channels []heraldtype.Channel `json:"channels,omitempty"`
	// Priority when a trigger names none. Default NORMAL.
	Priority heraldtype.Priority `json:"priority,omitempty"`
	// DedupeWindow is how long a trigger's dedupe_key blocks another of
	// this type to the same user, as a Go duration ("1h"). Default 1h.
	DedupeWindow string `json:"dedupe_window,omitempty"`
	// QuietHours defers the type's deliveries inside a user's quiet hours.
	// Default true.
	QuietHours *bool `json:"quiet_hours,omitempty"`
	// CountsTowardCap counts the type toward the user's daily cap (true)
	// or never (false); unset, rules' and campaigns' notifications count
	// and triggers' do not.
	CountsTowardCap *bool `json:"counts_toward_cap,omitempty"`
	// Guarantee is at_least_once (default) or at_most_once.
	Guarantee heraldtype.Guarantee `json:"guarantee,omitempty"`
	// Critical notifications bypass the user's opt-outs, quiet hours and
	// daily cap (never de-duplication).
	Critical bool `json:"critical,omitempty"`
	// Transactional e-mails carry no one-click unsubscribe link.
	Transactional bool `json:"transactional,omitempty"`
	// EmailTracking gives the type's HTML e-mails an open pixel and
	// click-tracked links, recorded as opened and clicked receipts.
	// Opt-in; the server needs its tracking secret.
	EmailTracking bool `json:"email_tracking,omitempty"`
	// Digest gathers the type's triggers for one user and key within a
	// window into one notification; nil: none.
	Digest *DigestConfig `json:"digest,omitempty"`
	// Escalate sends the type's notifications again on other channels,
	// step by step, when nobody reacted in time; nil: never.
	Escalate []EscalationStep `json:"escalate,omitempty"`
}

// EscalationStep is one step of a type's escalation: when none of the
// notification's messages so far got the receipt Unless within After of
// its send, it is sent again on Channels.
type EscalationStep struct {
	// After is a Go duration ("10m"), 1s to 7 days, each step's later than
	// the one before. Required.
	After string `json:"after"`
	// Unless is read, opened, delivered or clicked. Required.
	Unless heraldtype.ReceiptEvent `json:"unless"`
	// Channels are the channels the step sends on. Required.
	Channels []heraldtype.Channel `json:"channels"`
}

// DigestConfig is a type's digest: the triggers for one user and one key
// (a template over the trigger's data) within Window become one
// notification rendered from the Title and Body templates, which see
// .Count, .Items, .Key and the first trigger's .Title, .Body and .Data.
type DigestConfig struct {
	// Window is a Go duration ("10m"), 1s to 7 days. Required.
	Window string `json:"window"`
	// Key is a template over the trigger's data ({{.post_id}}).
	Key string `json:"key,omitempty"`
	// MaxItems sends a digest as soon as it holds this many triggers;
	// default the server's max_digest_items.
	MaxItems int `json:"max_items,omitempty"`
	// First is "collect" (default) or "immediate" (the first trigger is
	// sent at once, the rest of the window digested).
	First string `json:"first,omitempty"`
	Title string `json:"title,omitempty"`
	Body  string `json:"body,omitempty"`
}

// Digest is one digest with the triggers it holds (GetDigest).
type Digest struct {
	heraldtype.DigestInfo
	// Entries are the triggers it holds, in order.
	Entries []heraldtype.DigestItem `json:"entries"`
}

// GetDigest reads a digest and its items (GET /v1/digests/{id}); the id
// is the one a trigger of a digest type was answered with
// (EnqueuedNotification.Digest).
func (c *Client) GetDigest(ctx context.Context, id string) (Digest, error) {
	var d Digest
	_, err := c.do(ctx, call{method: http.MethodGet, path: pathf("/v1/digests/%s", id), out: &d})
	return d, err
}

// ListDigests reads one page of digests, newest first (GET /v1/digests):
// by user, type and state (open, closed, sent, failed).
func (c *Client) ListDigests(ctx context.Context, f heraldtype.DigestFilter) (heraldtype.DigestPage, error) {
	q := newQuery().str("user_id", f.UserID).str("type", f.Type).str("state", f.State).str("cursor", f.Cursor).limit(f.Limit)
	var page heraldtype.DigestPage
	_, err := c.do(ctx, call{method: http.MethodGet, path: "/v1/digests", query: url.Values(q), out: &page})
	return page, err
}

// Digests walks every digest f selects, newest first.
func (c *Client) Digests(ctx context.Context, f heraldtype.DigestFilter) iter.Seq2[heraldtype.DigestInfo, error] {
	return walk(ctx, f.Cursor, func(ctx context.Context, cursor string) ([]heraldtype.DigestInfo, string, error) {
		f.Cursor = cursor
		p, err := c.ListDigests(ctx, f)
		return p.Digests, p.NextCursor, err
	})
}

// NotificationType is a type's effective configuration.
type NotificationType struct {
	Name         string               `json:"name"`
	Channels     []heraldtype.Channel `json:"channels"`
	Priority     heraldtype.Priority  `json:"priority"`
	DedupeWindow string               `json:"dedupe_window"`
	QuietHours   bool                 `json:"quiet_hours"`
	// CountsTowardCap is nil when the type does not say.
	CountsTowardCap *bool                `json:"counts_toward_cap"`
	Guarantee       heraldtype.Guarantee `json:"guarantee"`
	Critical        bool                 `json:"critical"`
	Transactional   bool                 `json:"transactional"`
	EmailTracking   bool                 `json:"email_tracking"`
	// Digest is the type's digest with its defaults; nil for none.
	Digest *DigestConfig `json:"digest"`
	// Escalate is the type's escalation; empty for none.
	Escalate []EscalationStep `json:"escalate"`
	// Source is where the configuration comes from: TypeSourceAPI,
	// TypeSourceConfig or TypeSourceDefault.
	Source    string    `json:"source"`
	UpdatedAt time.Time `json:"updated_at,omitzero"`
}

// Where a type's configuration comes from (NotificationType.Source).
const (
	TypeSourceAPI     = "api"     // PutType
	TypeSourceConfig  = "config"  // the server's configuration file
	TypeSourceDefault = "default" // not declared: the defaults
)

// ListTypes lists the declared notification types (GET /v1/types).
func (c *Client) ListTypes(ctx context.Context) ([]NotificationType, error) {
	var out struct {
		Types []NotificationType `json:"types"`
	}
	_, err := c.do(ctx, call{method: http.MethodGet, path: "/v1/types", out: &out})
	return out.Types, err
}

// GetType reads a type's effective configuration (GET /v1/types/{type});
// a type nobody declared answers its defaults (source "default").
func (c *Client) GetType(ctx context.Context, name string) (NotificationType, error) {
	var t NotificationType
	_, err := c.do(ctx, call{method: http.MethodGet, path: pathf("/v1/types/%s", name), out: &t})
	return t, err
}

// PutType declares a notification type (PUT /v1/types/{type}; admin
// scope).
func (c *Client) PutType(ctx context.Context, name string, in TypeConfig) (NotificationType, error) {
	var t NotificationType
	_, err := c.do(ctx, call{method: http.MethodPut, path: pathf("/v1/types/%s", name), body: in, out: &t})
	return t, err
}
