package herald

import (
	"context"

	"time"

	"github.com/heraldhq/herald/heraldtype"
	"github.com/heraldhq/herald/internal/audience"
	"github.com/heraldhq/herald/internal/callout"
	"github.com/heraldhq/herald/internal/campaign"
	"github.com/heraldhq/herald/store"
)

// Campaign is a named recurring send to an audience (issue 19 item 6,
// S3.7): GET /v1/campaigns/{name}.
type Campaign = heraldtype.Campaign

// CampaignRun is one run of a campaign: GET /v1/campaigns/{name}/runs.
type CampaignRun = heraldtype.CampaignRun

// CampaignFilter selects a page of campaigns.
type CampaignFilter = heraldtype.CampaignFilter

// CampaignRunFilter selects a page of one campaign's runs.
type CampaignRunFilter = heraldtype.CampaignRunFilter

// CampaignRequest creates or replaces a campaign: the body of
// PUT /v1/campaigns/{name} (the name comes from the path).
type CampaignRequest struct {
	Name string `json:"-"`
	// Schedule is a cron expression or an RRULE (or a one-shot at) with an
	// optional time_zone (default Asia/Seoul) and catch_up policy.
	Schedule heraldtype.Schedule `json:"schedule"`
	// Audience: {"all":true} or {"active_within":"168h"}.
	Audience heraldtype.Audience `json:"audience"`
	// The content, as a trigger's; title, body and data values are Go
	// text/template texts (internal/campaign.Content documents what they
	// see).
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
	// Paused stops the scheduled runs (a manual run still runs).
	Paused bool `json:"paused,omitempty"`
}

// CampaignPage is one page of a campaign listing.
type CampaignPage struct {
	Campaigns  []Campaign `json:"campaigns"`
	NextCursor string     `json:"next_cursor,omitempty"`
}

// CampaignRunPage is one page of a campaign's runs, newest first.
type CampaignRunPage struct {
	Runs       []CampaignRun `json:"runs"`
	NextCursor string        `json:"next_cursor,omitempty"`
}

// CampaignConfig tunes the campaign runner, a leader-only service (S3.7);
// zero values take the defaults documented on each field.
type CampaignConfig struct {
	// BatchSize is how many recipients one batch of a run takes; each
	// batch's notifications, recipient records and cursor commit together
	// (S3.5). Default 500.
	BatchSize int
	// Pause is the wait between two batches of a run (S3.5). Default
	// 50 ms; negative: none.
	Pause time.Duration
	// LockAtMost and LockAtLeast bound the per-campaign cluster lock a run
	// holds, as ShedLock does (S3.7). Defaults 1 h and 5 min; a negative
	// LockAtLeast: none.
	LockAtMost, LockAtLeast time.Duration
	// PollInterval bounds how long an idle runner waits before looking for
	// due campaigns and manual runs written on another instance. Default 1 s.
	PollInterval time.Duration
	// Disabled turns the runner off on this instance.
	Disabled bool
	// FetchMaxAnswer, FetchMaxItems, FetchMaxFields and FetchMaxValues
	// bound what one content-fetch answer may hold: its bytes (default
	// 4 MiB, at most 64 MiB), one user's items and fields (100 each), and
	// the JSON values in all, counted wherever they are nested (100,000).
	// An answer over a bound is refused and its users count fetch_failed.
	FetchMaxAnswer                                int64
	FetchMaxItems, FetchMaxFields, FetchMaxValues int
}

// newCampaignRunner builds the campaign runner, a leader-only service.
func (c *Client) newCampaignRunner() (*campaign.Runner, error) {
	cc := c.cfg.Campaigns
	return campaign.New(campaign.Config{
		Store: c.store, Build: c.buildCampaignMessage, Owner: c.cfg.Owner, DefaultZone: c.cfg.DefaultTimezone,
		Enqueued:  func(typ string, res store.EnqueueResult) { c.enqueued(typ, res, true) },
		BatchSize: cc.BatchSize, Pause: cc.Pause, LockAtMost: cc.LockAtMost, LockAtLeast: cc.LockAtLeast,
		Poll: cc.PollInterval, Now: c.cfg.Now, Metrics: c.metrics, Logger: c.Logger(ComponentCampaign), Templates: c.templateLimits(), Tracer: c.tracer,
		Caller: c.caller, Fetch: campaign.FetchLimits{MaxAnswer: cc.FetchMaxAnswer, MaxItems: cc.FetchMaxItems,
			MaxFields: cc.FetchMaxFields, MaxValues: cc.FetchMaxValues},
	})
}

// buildCampaignMessage makes one recipient's trigger: validated and
// routed like any trigger, with the type's defaults. The run × user
// idempotency is the store's recipient record, not a trigger key.
func (c *Client) buildCampaignMessage(ctx context.Context, m campaign.Message) (store.EnqueueParams, error) {
	req := Request{UserID: m.UserID, Type: m.Campaign.Type, Title: m.Title, Body: m.Body, Data: m.Data,
		Channels: m.Campaign.Channels, Priority: m.Campaign.Priority}
	if !m.SendAt.IsZero() {
		at := m.SendAt
		req.SendAt = &at
	}
	p, err := c.prepare(ctx, &req)
	if err != nil {
		return p, err
	}
	// The timeline names the campaign and the run (issue 19 item 8).
	src := &heraldtype.Source{Kind: heraldtype.SourceCampaign, ID: m.Run.ID, Name: m.Campaign.Name, Occurrence: m.Run.ID}
	for i := range p.Notifications {
		p.Notifications[i].Source = src
	}
	stampTrace(ctx, &p) // the batch's span (internal/campaign/tracing.go)
	return p, nil
}

// PutCampaign creates the campaign under r.Name or replaces it; its
// schedule restarts from now. It reports whether it was created. Each
// refusal names its field: a template that does not parse, a schedule
// with no future time, an unknown type, a bad audience or fetch.
func (c *Client) PutCampaign(ctx context.Context, r CampaignRequest) (Campaign, bool, error) {
	now := c.now().UTC()
	cp, err := c.prepareCampaign(ctx, r, now)
	if err != nil {
		return Campaign{}, false, err
	}
	out, created, err := c.store.PutCampaign(ctx, cp, now)
	if err == nil && c.campaigns != nil && !out.NextAt.After(now) {
		c.campaigns.Wake()
	}
	return out, created, err
}

// campaignCheckUser stands in for the recipient when a campaign's content
// is validated as a trigger's at PUT.
const campaignCheckUser = "campaign-check"

func (c *Client) prepareCampaign(ctx context.Context, r CampaignRequest, now time.Time) (Campaign, error) {
	if err := validCampaignName(r.Name); err != nil {
		return Campaign{}, err
	}
	if err := validTypeName(r.Type); err != nil {
		return Campaign{}, err
	}
	// A campaign runs for months: a type nobody declared (a typo) would
	// silently run on the defaults, so it is refused.
	if _, err := c.types.Declared(ctx, r.Type); heraldtype.ErrorCode(err) == heraldtype.ENOTFOUND {
		return Campaign{}, heraldtype.FieldErrorf("type", "%q is not declared: declare it first (PUT /v1/types/%s or types: in the configuration)", r.Type, r.Type)
	} else if err != nil {
		return Campaign{}, err
	}
	// The content is validated by the trigger's own rules (channels,
	// priority, lengths of the template texts), then parsed as templates.
	trig := Request{UserID: campaignCheckUser, Type: r.Type, Title: r.Title, Body: r.Body, Data: r.Data,
		Channels: r.Channels, Priority: r.Priority}
	if _, err := c.prepare(ctx, &trig); err != nil {
		return Campaign{}, err
	}
	cp := Campaign{Name: r.Name, Schedule: r.Schedule, Audience: r.Audience, Type: trig.Type, Title: r.Title,
		Body: r.Body, Data: r.Data, Channels: trig.Channels, Priority: trig.Priority, Fetch: r.Fetch,
		LocalTime: r.LocalTime, Paused: r.Paused, UpdatedAt: now}
	if _, err := campaign.Parse(cp, c.templateLimits()); err != nil {
		return Campaign{}, err
	}
	if err := audience.Validate(r.Audience); err != nil {
		return Campaign{}, err
	}
	if err := c.validFetch(r.Fetch); err != nil {
		return Campaign{}, err
	}
	switch {
	case r.Schedule.Backoff != nil:
		return Campaign{}, heraldtype.FieldErrorf("schedule.backoff", "a campaign repeats on cron or rrule, not a backoff")
	case r.Schedule.Immediately:
		return Campaign{}, heraldtype.FieldErrorf("schedule.immediately", "is for reminders; start a campaign's run now with POST /v1/campaigns/{name}/run")
	case r.LocalTime && r.Schedule.TimeZone != "":
		return Campaign{}, heraldtype.FieldErrorf("schedule.time_zone", "local_time reads the schedule on each user's own clock; give no time_zone")
	case r.LocalTime && !r.Schedule.At.IsZero():
		return Campaign{}, heraldtype.FieldErrorf("local_time", "needs a cron or rrule schedule (a wall time), not at")
	}
	plan, err := campaign.Plan(cp, c.cfg.DefaultTimezone)
	if err != nil {
		return Campaign{}, err
	}
	first, err := plan.CheckFirst(campaign.Anchor(cp), 0)
	if err != nil {
		return Campaign{}, err
	}
	cp.NextAt, cp.NextOccurrence = first.Due, first.At
	return cp, nil
}

func validCampaignName(name string) error {
	if name == "" {
		return heraldtype.FieldErrorf("name", "is required")
	}
	if len(name) > MaxTypeLength || !typePattern.MatchString(name) {
		return heraldtype.FieldErrorf("name", "must be 1-%d characters of a-z, 0-9, '_', '.', '-', starting with a letter or digit", MaxTypeLength)
	}
	return nil
}

func (c *Client) validFetch(f *heraldtype.CampaignFetch) error {
	if f == nil {
		return nil
	}
	if err := callout.CheckURL(f.URL); err != nil {
		return heraldtype.FieldErrorf("fetch.url", "%v", err)
	}
	if t := f.Timeout.Std(); t != 0 && (t < 100*time.Millisecond || t > campaign.MaxFetchTimeout) {
		return heraldtype.FieldErrorf("fetch.timeout", "must be between 100ms and %v", campaign.MaxFetchTimeout)
	}
	if f.Concurrency < 0 || f.Concurrency > campaign.MaxFetchConcurrency {
		return heraldtype.FieldErrorf("fetch.concurrency", "must be between 1 and %d (0: %d)", campaign.MaxFetchConcurrency, campaign.DefaultFetchConcurrency)
	}
	if f.BatchSize < 0 || f.BatchSize > campaign.MaxFetchBatch {
		return heraldtype.FieldErrorf("fetch.batch_size", "must be between 1 and %d (0: %d)", campaign.MaxFetchBatch, campaign.DefaultFetchBatch)
	}
	return c.checkCallout("fetch", f.URL, f.Secret)
}

// GetCampaign returns the campaign.
func (c *Client) GetCampaign(ctx context.Context, name string) (Campaign, error) {
	if err := validCampaignName(name); err != nil {
		return Campaign{}, err
	}
	return c.store.GetCampaign(ctx, name)
}

// DeleteCampaign deletes the campaign with its runs; a run in progress
// stops at its next batch.
func (c *Client) DeleteCampaign(ctx context.Context, name string) error {
	if err := validCampaignName(name); err != nil {
		return err
	}
	return c.store.DeleteCampaign(ctx, name)
}

// ListCampaigns lists campaigns by name, a page at a time.
func (c *Client) ListCampaigns(ctx context.Context, f CampaignFilter) (CampaignPage, error) {
	cs, next, err := c.store.ListCampaigns(ctx, f)
	if err != nil {
		return CampaignPage{}, err
	}
	if cs == nil {
		cs = []Campaign{}
	}
	return CampaignPage{Campaigns: cs, NextCursor: next}, nil
}

// ListCampaignRuns lists a campaign's runs, newest first.
func (c *Client) ListCampaignRuns(ctx context.Context, f CampaignRunFilter) (CampaignRunPage, error) {
	if err := validCampaignName(f.Campaign); err != nil {
		return CampaignRunPage{}, err
	}
	rs, next, err := c.store.ListCampaignRuns(ctx, f)
	if err != nil {
		return CampaignRunPage{}, err
	}
	if rs == nil {
		rs = []CampaignRun{}
	}
	return CampaignRunPage{Runs: rs, NextCursor: next}, nil
}

// GetCampaignRun returns one run of a campaign.
func (c *Client) GetCampaignRun(ctx context.Context, name, runID string) (CampaignRun, error) {
	if err := validCampaignName(name); err != nil {
		return CampaignRun{}, err
	}
	if err := validID("run", runID); err != nil {
		return CampaignRun{}, err
	}
	return c.store.GetCampaignRun(ctx, name, runID)
}

// RunCampaign asks for a run by hand (POST /v1/campaigns/{name}/run): with
// runID "" a new manual run (id manual-…) to the whole audience now; with
// the id of a finished run, that run again — from the start of its
// audience, fetching content for and reaching only the users it has not
// reached (a recovery after a failed fetch, S3.7), its counts and last
// error then the new try's (issue 30 item 6). A run still running is a
// conflict. The runner
// (on the leader) runs it; the answer is the run as it starts.
func (c *Client) RunCampaign(ctx context.Context, name, runID string) (CampaignRun, error) {
	if err := validCampaignName(name); err != nil {
		return CampaignRun{}, err
	}
	now := c.now().UTC()
	p := store.CampaignRunStart{Campaign: name, RunID: runID, Occurrence: now, Now: now}
	if runID == "" {
		p.RunID = campaign.ManualPrefix + newID(now)
	} else {
		if err := validID("run", runID); err != nil {
			return CampaignRun{}, err
		}
		old, err := c.store.GetCampaignRun(ctx, name, runID)
		if err != nil {
			return CampaignRun{}, err
		}
		p.Occurrence, p.Restart = old.Occurrence, true
	}
	res, err := c.store.StartCampaignRun(ctx, p)
	if err != nil {
		return CampaignRun{}, err
	}
	if !res.Started {
		return CampaignRun{}, heraldtype.Errorf(heraldtype.ECONFLICT, "campaign %q run %q is running", name, p.RunID)
	}
	if c.campaigns != nil {
		c.campaigns.Wake()
	}
	return res.Run, nil
}
