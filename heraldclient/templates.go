package heraldclient

import (
	"context"
	"net/http"
	"net/url"
	"strconv"

	"github.com/heraldhq/herald/heraldtype"
)

// PutTemplates saves a type's message templates as its next version (PUT
// /v1/types/{type}/templates; admin scope). A template the server refuses
// is an invalid_argument *Error whose Field names it
// ("templates.locales.ko.sms.text").
func (c *Client) PutTemplates(ctx context.Context, typ string, t heraldtype.MessageTemplates) (heraldtype.TemplateVersion, error) {
	var v heraldtype.TemplateVersion
	_, err := c.do(ctx, call{method: http.MethodPut, path: pathf("/v1/types/%s/templates", typ), body: t, out: &v})
	return v, err
}

// GetTemplates reads a version of a type's templates, the latest for
// version 0 (GET /v1/types/{type}/templates) — a notification's
// TemplateVersion is the one it was rendered from.
func (c *Client) GetTemplates(ctx context.Context, typ string, version int) (heraldtype.TemplateVersion, error) {
	q := url.Values{}
	if version != 0 {
		q.Set("version", strconv.Itoa(version))
	}
	var v heraldtype.TemplateVersion
	_, err := c.do(ctx, call{method: http.MethodGet, path: pathf("/v1/types/%s/templates", typ), query: q, out: &v})
	return v, err
}

// PreviewRequest is what PreviewTemplates renders: a draft (Templates) or
// a saved version (0: the latest), with Data (default: the sample data),
// the locales' dates in TimeZone (default UTC), and, with UserID, that
// user's render.
type PreviewRequest = heraldtype.PreviewRequest

// PreviewTemplates renders a type's templates in every locale, and for a
// named user, with each channel's sizes and SMS segments (POST
// /v1/types/{type}/preview). Nothing is sent.
func (c *Client) PreviewTemplates(ctx context.Context, typ string, in PreviewRequest) (heraldtype.TemplatePreview, error) {
	var p heraldtype.TemplatePreview
	_, err := c.do(ctx, call{method: http.MethodPost, path: pathf("/v1/types/%s/preview", typ), body: in, out: &p})
	return p, err
}

// TestSendRequest names the user a test-send goes to, the data (default:
// the templates' sample data) and the channels (default: the type's).
type TestSendRequest = heraldtype.TestSendRequest

// TestSendResult is what a test-send recorded: the notification, and
// each channel queued or skipped with why.
type TestSendResult struct {
	TriggerResult
	Channels []heraldtype.TestSendChannel `json:"channels"`
}

// TestSendTemplates sends the type's latest templates to one user now
// (POST /v1/types/{type}/test-send): past quiet hours, de-duplication, the
// daily cap and digests, never past the user's opt-outs, which the answer
// reports per channel.
func (c *Client) TestSendTemplates(ctx context.Context, typ string, in TestSendRequest) (TestSendResult, error) {
	var r TestSendResult
	_, err := c.do(ctx, call{method: http.MethodPost, path: pathf("/v1/types/%s/test-send", typ), body: in, out: &r})
	return r, err
}

// ListTemplateVersions lists a type's saved template versions, newest
// first (GET /v1/types/{type}/templates/versions): at most limit (0: the
// server's default of 20, at most 100), those below version before when
// it is not 0.
func (c *Client) ListTemplateVersions(ctx context.Context, typ string, before, limit int) ([]heraldtype.TemplateVersion, error) {
	q := url.Values{}
	if before != 0 {
		q.Set("before", strconv.Itoa(before))
	}
	if limit != 0 {
		q.Set("limit", strconv.Itoa(limit))
	}
	var out struct {
		Versions []heraldtype.TemplateVersion `json:"versions"`
	}
	_, err := c.do(ctx, call{method: http.MethodGet, path: pathf("/v1/types/%s/templates/versions", typ), query: q, out: &out})
	return out.Versions, err
}
