package store

import (
	"context"
	"time"

	"github.com/heraldhq/herald/heraldtype"
)

// Campaigns is the part of the store the campaign runner and the campaign
// API need (issue 19 item 6, S3.7). Store embeds it.
//
// A campaign is a row with its schedule state (next_at, a version every
// write bumps); each run is a row keyed by (campaign, run id) with its
// audience cursor and counts; each recipient a run reached is a row
// keyed by (campaign, run id, user) — the run × user idempotency record.
// A batch's notifications, its recipient rows and the run's advanced
// cursor commit in one transaction (AdvanceCampaignRun), so a crash
// mid-run resumes where it stopped and reaches no one twice.
type Campaigns interface {
	// PutCampaign creates the campaign under c.Name or replaces the one
	// that exists (its definition, Paused, NextAt and NextOccurrence), in
	// one transaction. CreatedAt and LastRunID are kept on update;
	// UpdatedAt = now, Version bumped. It returns the stored campaign and
	// whether it was created.
	PutCampaign(ctx context.Context, c heraldtype.Campaign, now time.Time) (heraldtype.Campaign, bool, error)
	// GetCampaign returns the campaign; ENOTFOUND if none.
	GetCampaign(ctx context.Context, name string) (heraldtype.Campaign, error)
	// DeleteCampaign deletes the campaign with its runs and recipient
	// records; ENOTFOUND if none. A run in progress finds its row gone at
	// its next batch and stops.
	DeleteCampaign(ctx context.Context, name string) error
	// ListCampaigns returns a page of campaigns by name and the cursor of
	// the next page ("" at the end).
	ListCampaigns(ctx context.Context, f heraldtype.CampaignFilter) ([]heraldtype.Campaign, string, error)
	// DueCampaigns returns up to limit campaigns not paused whose NextAt
	// is at or before now, earliest first.
	DueCampaigns(ctx context.Context, now time.Time, limit int) ([]heraldtype.Campaign, error)
	// NextCampaignAt returns the earliest NextAt of a campaign not paused,
	// ok false if none.
	NextCampaignAt(ctx context.Context) (time.Time, bool, error)

	// StartCampaignRun starts run p.RunID of p.Campaign in one
	// transaction. With p.Advance (and Advanced in the answer), the campaign's NextAt/NextOccurrence
	// move on first, guarded by the version the runner read: when the
	// campaign moved on (another runner started this due time, an
	// update), nothing is written and Started is false. The run row is
	// then created (state running) if absent; if it exists and p.Restart
	// is set and it is not running, it runs again from the start of its
	// audience (cursor cleared, Restarts+1, Enqueued kept, the other
	// counts and LastError cleared: they are the new try's) — the
	// recipients it already reached are skipped. Started says whether a
	// run is now running because of this call.
	StartCampaignRun(ctx context.Context, p CampaignRunStart) (CampaignRunStarted, error)
	// GetCampaignRun returns one run; ENOTFOUND if none.
	GetCampaignRun(ctx context.Context, campaign, runID string) (heraldtype.CampaignRun, error)
	// ListCampaignRuns returns a page of the campaign's runs, newest
	// started first, and the cursor of the next page.
	ListCampaignRuns(ctx context.Context, f heraldtype.CampaignRunFilter) ([]heraldtype.CampaignRun, string, error)
	// ReachedRecipients returns which of userIDs (at most
	// MaxAudiencePage, one page) the run has reached: those with a recipient record.
	// A re-run asks before it fetches their content, so it fetches only
	// for the users it has not reached (issue 30 item 6).
	ReachedRecipients(ctx context.Context, campaign, runID string, userIDs []string) (map[string]bool, error)
	// RunningCampaignRuns returns up to limit runs in state running, oldest
	// started first: the runs a runner resumes.
	RunningCampaignRuns(ctx context.Context, limit int) ([]heraldtype.CampaignRun, error)
	// AdvanceCampaignRun writes one batch of a run in ONE transaction,
	// guarded by the run's version (it applies only while the run is
	// running with b.Version): the recipient records of b.Enqueue's
	// notifications (one per user; a user this run already reached is
	// left out of the enqueue and counted skipped), the enqueue of the
	// rest, and the run's cursor, counts, last error and, with b.Finish,
	// its final state. Applied is false, and nothing is written, when the
	// run moved on (another runner, a restart, a delete). Any error rolls
	// it all back.
	AdvanceCampaignRun(ctx context.Context, b CampaignBatch) (CampaignBatchResult, error)

	// PruneCampaignRuns deletes, oldest first and at most limit, runs that
	// finished before cutoff, with their recipient records, and returns
	// how many runs it deleted. Running runs are never deleted.
	PruneCampaignRuns(ctx context.Context, cutoff time.Time, limit int) (int, error)

	// AudienceUsers returns up to q.Limit users after q.After in id order
	// (keyset: never the whole audience at once), each with its time zone:
	// every user, or with q.ActiveSince those with a device seen at or
	// after it.
	AudienceUsers(ctx context.Context, q AudienceQuery) ([]AudienceUser, error)
}

// CampaignRunStart parameterises StartCampaignRun.
type CampaignRunStart struct {
	Campaign string
	RunID    string
	// Occurrence is the run's nominal time (the wall time local-time
	// delivery uses).
	Occurrence time.Time
	// Advance, when set, moves the campaign's schedule on in the same
	// transaction, guarded by Version.
	Advance *CampaignAdvance
	// Restart runs an existing run that is not running again. RunID may
	// be "" with Advance: the schedule moves on and no run starts (a due
	// time the catch-up policy passed over).
	Restart bool
	Now     time.Time
}

// CampaignAdvance moves a campaign's schedule on: NextAt and
// NextOccurrence (both zero when the schedule has no more).
type CampaignAdvance struct {
	Version        int64
	NextAt         time.Time
	NextOccurrence time.Time
}

// CampaignRunStarted is what StartCampaignRun did.
type CampaignRunStarted struct {
	Run heraldtype.CampaignRun
	// Started: the run is running because of this call (created, or
	// restarted). False when the campaign had moved on, or the run
	// already existed and was not restarted.
	Started bool
	// Created: the run row is new.
	Created bool
	// Advanced: p.Advance moved the campaign's schedule on.
	Advanced bool
}

// CampaignBatch is one batch of a campaign run.
type CampaignBatch struct {
	Campaign string
	RunID    string
	// Version is the run's version the runner last saw.
	Version int64
	// Cursor is the last user id of the batch (the run's new cursor).
	Cursor string
	// Enqueue holds one notification per user to reach (nil when none has
	// content). The store enqueues those whose user this run has not
	// reached yet.
	Enqueue *EnqueueParams
	// Recipients, FetchFailed and RenderFailed are added to the run's
	// counts (Enqueued and Skipped are the store's). Skipped counts the
	// users the runner left out because the run had reached them
	// (ReachedRecipients): the store adds them to the users of Enqueue it
	// finds reached.
	Recipients   int
	Skipped      int
	FetchFailed  int
	RenderFailed int
	// LastError, when not empty, replaces the run's last error.
	LastError string
	// Finish, when set (done or failed), ends the run with this batch.
	Finish heraldtype.CampaignRunState
	Now    time.Time
}

// CampaignBatchResult is what AdvanceCampaignRun did.
type CampaignBatchResult struct {
	Applied bool
	// Run is the run after the batch (when Applied).
	Run heraldtype.CampaignRun
	// Enqueued counts the notifications written; Skipped the users this
	// run had already reached.
	Enqueued, Skipped int
	// Result is the enqueue's (its inbox items feed the real-time stream).
	Result EnqueueResult
}

// AudienceQuery is one keyset page of an audience.
type AudienceQuery struct {
	After string
	Limit int
	// ActiveSince, when not zero, keeps users with a device whose last
	// seen time is at or after it.
	ActiveSince time.Time
}

// AudienceUser is one user of an audience page.
type AudienceUser struct {
	ID       string
	Timezone string
	Locale   string
}
