package heraldtype

import "time"

// Campaign is a named recurring send to an audience (issue 19 item 6,
// S3.7): on its schedule (cron or RRULE, in its time zone, default
// Asia/Seoul) every user of Audience gets one notification whose title,
// body and data values are Go text/template texts rendered for that user,
// with the items Fetch returned for them when it is set (the seed's daily
// recommendations).
type Campaign struct {
	Name     string   `json:"name"`
	Schedule Schedule `json:"schedule"`
	Audience Audience `json:"audience"`
	// The content of each recipient's notification, as a trigger's; Title,
	// Body and the values of Data are templates (package internal/campaign
	// documents what they see).
	Type     string            `json:"type"`
	Title    string            `json:"title,omitempty"`
	Body     string            `json:"body,omitempty"`
	Data     map[string]string `json:"data,omitempty"`
	Channels []Channel         `json:"channels,omitempty"`
	Priority Priority          `json:"priority,omitempty"`
	// Fetch, when set, asks an HTTP endpoint for each batch's per-user
	// items before rendering.
	Fetch *CampaignFetch `json:"fetch,omitempty"`
	// LocalTime delivers at the schedule's wall time in each user's own
	// time zone ("09:00 wherever they are"): the schedule names no zone,
	// a run starts when the earliest zone on earth reaches the time, and
	// each notification's send_at is that wall time in its user's zone.
	LocalTime bool `json:"local_time,omitempty"`
	// Paused campaigns are not run on their schedule (a manual run still
	// runs).
	Paused bool `json:"paused,omitempty"`

	// NextAt is when the next scheduled run is due; NextOccurrence its
	// nominal time (the run's id). Zero when the schedule has no more.
	NextAt         time.Time `json:"next_at,omitzero"`
	NextOccurrence time.Time `json:"next_occurrence,omitzero"`
	// LastRunID is the latest run started (scheduled or manual).
	LastRunID string    `json:"last_run_id,omitempty"`
	CreatedAt time.Time `json:"created_at"`
	UpdatedAt time.Time `json:"updated_at"`
	// Version changes with every write of the campaign's row: advancing
	// NextAt is guarded by it, so two runners start one due time once.
	Version int64 `json:"-"`
}

// Audience says who a campaign reaches (S3.3). Exactly one form is set.
// Issue 20 adds interest, topic, user list and webhook forms beside these.
type Audience struct {
	// All: every user.
	All bool `json:"all,omitempty"`
	// ActiveWithin: users with a device seen (registered or heartbeat)
	// within this long before the run started.
	ActiveWithin Duration `json:"active_within,omitzero"`
}

// CampaignFetch names the HTTP endpoint a campaign asks for per-user
// content (the seed's recommendation API). Herald POSTs
// {"campaign","run","user_ids":[…]} for each batch of recipients and
// expects {"users":{"<id>":{"items":[…],"fields":{…}}}}; a user absent from
// the answer gets no notification from that run and is counted fetch_failed.
type CampaignFetch struct {
	URL string `json:"url"`
	// Timeout bounds one call (default 5 s).
	Timeout Duration `json:"timeout,omitzero"`
	// Concurrency bounds the calls in flight at once (default 4).
	Concurrency int `json:"concurrency,omitempty"`
	// BatchSize is how many user ids one call carries (default 100).
	BatchSize int `json:"batch_size,omitempty"`
}

// CampaignRunState is where a campaign run is.
type CampaignRunState string

const (
	// RunRunning: the run is sending; Cursor says how far it got.
	RunRunning CampaignRunState = "running"
	// RunDone: every recipient was considered.
	RunDone CampaignRunState = "done"
	// RunFailed: the run ended without reaching anyone it considered
	// (every recipient failed to fetch or render), or could not go on.
	RunFailed CampaignRunState = "failed"
)

// CampaignRun is one run of a campaign: a scheduled occurrence (ID = the
// occurrence's nominal instant, 20261207T000000Z) or a manual run
// (manual-…). One row per (campaign, ID): a due time runs once, and a
// re-run of a run reaches only whom it has not reached.
type CampaignRun struct {
	Campaign string `json:"campaign"`
	ID       string `json:"id"`
	// Occurrence is the nominal time of a scheduled run (for a manual one,
	// when it was asked for): the wall time local-time delivery uses.
	Occurrence time.Time        `json:"occurrence"`
	State      CampaignRunState `json:"state"`
	// Cursor is the last user id the run went past (keyset order).
	Cursor string `json:"cursor,omitempty"`
	// Enqueued counts the users the run reached, by any try. The other
	// counts and LastError are the last try's (a re-run starts them
	// afresh, so they are never a sum of tries): Recipients the audience's
	// users it considered; Skipped those it found reached by an earlier
	// try (their content is not fetched again); FetchFailed and
	// RenderFailed those left out because their content could not be
	// fetched or rendered.
	Recipients   int    `json:"recipients"`
	Enqueued     int    `json:"enqueued"`
	Skipped      int    `json:"skipped"`
	FetchFailed  int    `json:"fetch_failed"`
	RenderFailed int    `json:"render_failed"`
	LastError    string `json:"last_error,omitempty"`
	// Restarts counts manual re-runs of this run.
	Restarts   int       `json:"restarts"`
	StartedAt  time.Time `json:"started_at"`
	UpdatedAt  time.Time `json:"updated_at"`
	FinishedAt time.Time `json:"finished_at,omitzero"`
	// Version changes with every write of the run: each batch's advance
	// is guarded by it.
	Version int64 `json:"-"`
}

// CampaignFilter selects a page of campaigns, by name.
type CampaignFilter struct {
	Cursor string
	// Limit defaults to 50 and is capped at 200.
	Limit int
}

// CampaignRunFilter selects a page of one campaign's runs, newest first.
type CampaignRunFilter struct {
	Campaign string
	Cursor   string
	// Limit defaults to 50 and is capped at 200.
	Limit int
}
