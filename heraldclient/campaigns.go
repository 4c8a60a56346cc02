package heraldclient

import (
	"context"
	"iter"
	"net/http"
	"net/url"

	"github.com/heraldhq/herald/heraldtype"
)

// CampaignRequest is a campaign: a message to an audience on a schedule
// (the body of PutCampaign; its name is the path's).
type CampaignRequest struct {
	// Schedule is a cron expression or an RRULE (or a one-shot at), with
	// an optional time_zone and catch_up policy.
	Schedule heraldtype.Schedule `json:"schedule"`
	// Audience: {All: true} or {ActiveWithin: …}.
	Audience heraldtype.Audience `json:"audience"`
	// The content, as a trigger's; title, body and data values are Go
	// text/template texts.
	Type     string               `json:"type"`
	Title    string               `json:"title,omitempty"`
	Body     string               `json:"body,omitempty"`
	Data     map[string]string    `json:"data,omitempty"`
	Channels []heraldtype.Channel `json:"channels,omitempty"`
	Priority heraldtype.Priority  `json:"priority,omitempty"`
	// Fetch asks an HTTP endpoint for each batch's per-user items.
	Fetch *heraldtype.CampaignFetch `json:"fetch,omitempty"`
	// LocalTime delivers at the schedule's wall time in each user's zone.
	LocalTime bool `json:"local_time,omitempty"`
	// Paused stops the scheduled runs (RunCampaign still runs).
	Paused bool `json:"paused,omitempty"`
}

// CampaignPage is one page of campaigns.
type CampaignPage struct {
	Campaigns  []heraldtype.Campaign `json:"campaigns"`
	NextCursor string                `json:"next_cursor,omitempty"`
}

// CampaignRunPage is one page of a campaign's runs, newest first.
type CampaignRunPage struct {
	Runs       []heraldtype.CampaignRun `json:"runs"`
	NextCursor string                   `json:"next_cursor,omitempty"`
}

// PutCampaign creates the campaign name or replaces it (PUT
// /v1/campaigns/{name}); created says which.
func (c *Client) PutCampaign(ctx context.Context, name string, r CampaignRequest) (camp heraldtype.Campaign, created bool, err error) {
	res, err := c.do(ctx, call{method: http.MethodPut, path: pathf("/v1/campaigns/%s", name), body: r, out: &camp})
	return camp, err == nil && res.status == http.StatusCreated, err
}

// GetCampaign reads a campaign (GET /v1/campaigns/{name}).
func (c *Client) GetCampaign(ctx context.Context, name string) (heraldtype.Campaign, error) {
	var camp heraldtype.Campaign
	_, err := c.do(ctx, call{method: http.MethodGet, path: pathf("/v1/campaigns/%s", name), out: &camp})
	return camp, err
}

// DeleteCampaign deletes a campaign (DELETE /v1/campaigns/{name}).
func (c *Client) DeleteCampaign(ctx context.Context, name string) error {
	_, err := c.do(ctx, call{method: http.MethodDelete, path: pathf("/v1/campaigns/%s", name)})
	return err
}

// ListCampaigns reads one page of campaigns (GET /v1/campaigns).
func (c *Client) ListCampaigns(ctx context.Context, f heraldtype.CampaignFilter) (CampaignPage, error) {
	q := newQuery().str("cursor", f.Cursor).limit(f.Limit)
	var page CampaignPage
	_, err := c.do(ctx, call{method: http.MethodGet, path: "/v1/campaigns", query: url.Values(q), out: &page})
	return page, err
}

// Campaigns walks every campaign.
func (c *Client) Campaigns(ctx context.Context, f heraldtype.CampaignFilter) iter.Seq2[heraldtype.Campaign, error] {
	return walk(ctx, f.Cursor, func(ctx context.Context, cursor string) ([]heraldtype.Campaign, string, error) {
		f.Cursor = cursor
		p, err := c.ListCampaigns(ctx, f)
		return p.Campaigns, p.NextCursor, err
	})
}

// RunCampaign starts a run of the campaign now (POST
// /v1/campaigns/{name}/run), or, with run set to a failed run's id, runs
// that one again from where it stopped. It is not retried: a second call
// is a second run.
func (c *Client) RunCampaign(ctx context.Context, name, run string) (heraldtype.CampaignRun, error) {
	var out heraldtype.CampaignRun
	body := struct {
		Run string `json:"run,omitempty"`
	}{run}
	_, err := c.do(ctx, call{method: http.MethodPost, path: pathf("/v1/campaigns/%s/run", name), body: body, out: &out})
	return out, err
}

// ListCampaignRuns reads one page of a campaign's runs, newest first (GET
// /v1/campaigns/{name}/runs).
func (c *Client) ListCampaignRuns(ctx context.Context, f heraldtype.CampaignRunFilter) (CampaignRunPage, error) {
	q := newQuery().str("cursor", f.Cursor).limit(f.Limit)
	var page CampaignRunPage
	_, err := c.do(ctx, call{method: http.MethodGet, path: pathf("/v1/campaigns/%s/runs", f.Campaign), query: url.Values(q), out: &page})
	return page, err
}

// CampaignRuns walks every run of the campaign f.Campaign.
func (c *Client) CampaignRuns(ctx context.Context, f heraldtype.CampaignRunFilter) iter.Seq2[heraldtype.CampaignRun, error] {
	return walk(ctx, f.Cursor, func(ctx context.Context, cursor string) ([]heraldtype.CampaignRun, string, error) {
		f.Cursor = cursor
		p, err := c.ListCampaignRuns(ctx, f)
		return p.Runs, p.NextCursor, err
	})
}
