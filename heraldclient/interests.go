package heraldclient

import (
	"context"
	"iter"
	"net/http"
	"net/url"
	"time"

	"github.com/heraldhq/herald/heraldtype"
)

// InterestInput is one interest a user showed in a subject.
type InterestInput struct {
	UserID  string `json:"user_id"`
	Subject string `json:"subject"`
	// Kind is VIEW, CLICK, ADD_TO_CART, WATCH or any name (letters,
	// digits, '_', '.', '-').
	Kind string `json:"kind"`
	// At is when the user showed it; nil means now.
	At *time.Time `json:"at,omitempty"`
	// Data travels with it, e.g. a watcher's {"target_price":"8000"}.
	Data map[string]string `json:"data,omitempty"`
}

// InterestPage is one page of a user's interests.
type InterestPage struct {
	Interests  []heraldtype.Interest `json:"interests"`
	NextCursor string                `json:"next_cursor,omitempty"`
}

// RecordInterests records interests (POST /v1/interests): one, or a batch
// of up to 1000 in one transaction. It returns how many were recorded. It
// is not retried: a repeated interest counts again.
func (c *Client) RecordInterests(ctx context.Context, in ...InterestInput) (int, error) {
	var body any
	switch len(in) {
	case 0:
		return 0, nil
	case 1:
		body = in[0]
	default:
		body = struct {
			Interests []InterestInput `json:"interests"`
		}{in}
	}
	var out struct {
		Recorded int `json:"recorded"`
	}
	_, err := c.do(ctx, call{method: http.MethodPost, path: "/v1/interests", body: body, out: &out})
	return out.Recorded, err
}

// ListInterests reads one page of a user's interests (GET
// /v1/users/{id}/interests), optionally in one subject.
func (c *Client) ListInterests(ctx context.Context, f heraldtype.InterestFilter) (InterestPage, error) {
	q := newQuery().str("subject", f.Subject).str("cursor", f.Cursor).limit(f.Limit)
	var page InterestPage
	_, err := c.do(ctx, call{method: http.MethodGet, path: pathf("/v1/users/%s/interests", f.UserID), query: url.Values(q), out: &page})
	return page, err
}

// Interests walks every interest f selects.
func (c *Client) Interests(ctx context.Context, f heraldtype.InterestFilter) iter.Seq2[heraldtype.Interest, error] {
	return walk(ctx, f.Cursor, func(ctx context.Context, cursor string) ([]heraldtype.Interest, string, error) {
		f.Cursor = cursor
		p, err := c.ListInterests(ctx, f)
		return p.Interests, p.NextCursor, err
	})
}
