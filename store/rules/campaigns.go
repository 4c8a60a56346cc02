package rules

// The campaign writes both stores make (issue 19 item 6, S3.7), each one
// SQL text the stores embed through a Marker (see reminders.go), so what a
// scheduled start advances, what a restart resets and what a batch counts
// cannot drift between them. Tables are named with the store's prefix
// ("{s}." on PostgreSQL).

// CampaignUpdateSQL is the SET list of PutCampaign's upsert when the
// campaign exists: its definition, pause and schedule state are replaced;
// created_at and last_run_id are kept; the version moves on, so a runner
// that read the campaign before the update starts nothing from it.
const CampaignUpdateSQL = `definition = excluded.definition, paused = excluded.paused,
	next_at = excluded.next_at, next_occurrence = excluded.next_occurrence,
	updated_at = excluded.updated_at, version = campaigns.version + 1`

// CampaignAdvanceSQL moves a campaign's schedule on for a scheduled run,
// guarded by the version the runner read: when another runner started
// this due time first, or the campaign was updated, it changes no row and
// the run is not started.
//
// It keeps updated_at, the time of the last PUT: an RRULE's DTSTART.
// last_run_id moves to runID unless it is "" (a due time whose
// occurrences the catch-up policy passed over starts no run).
func CampaignAdvanceSQL(table string, name, runID string, version int64, nextAt, nextOccurrence any, mark Marker) string {
	set := `next_at = ` + mark(nextAt) + `, next_occurrence = ` + mark(nextOccurrence)
	if runID != "" {
		set += `, last_run_id = ` + mark(runID)
	}
	return `UPDATE ` + table + ` SET ` + set + `, version = version + 1 WHERE name = ` + mark(name) + ` AND version = ` + mark(version)
}

// CampaignRunRestartSQL runs a finished run again (a manual re-run): from
// the start of its audience, one more restart. The counts of a try are
// the truth of the last one, never a sum of tries (issue 30 item 6):
// enqueued — the users the run has reached, by any try — is kept; the
// others and the last error start again, so a re-run that recovers ends
// with no error and counts what it found.
func CampaignRunRestartSQL(table, campaign, runID string, now any, mark Marker) string {
	return `UPDATE ` + table + ` SET state = 'running', cursor = '', restarts = restarts + 1, finished_at = NULL,
	recipients = 0, skipped = 0, fetch_failed = 0, render_failed = 0, last_error = '',
	updated_at = ` + mark(now) + `, version = version + 1 WHERE campaign = ` + mark(campaign) + ` AND run_id = ` +
		mark(runID) + ` AND state <> 'running'`
}

// RunAdvance is one batch's values for CampaignRunAdvanceSQL.
type RunAdvance struct {
	Campaign, RunID                       string
	Version                               int64
	Cursor                                string
	Recipients, FetchFailed, RenderFailed int
	LastError                             string
	// Finish is "" (still running), "done" or "failed".
	Finish string
	Now    any
}

// CampaignRunAdvanceSQL is the guarded UPDATE that takes a batch: it
// applies only while the run is running with the version the runner saw,
// so a second runner of the same run (a leadership hand-over) or a
// restart makes it change no row, and the store then writes nothing of
// the batch. The enqueued and skipped counts are added after the
// recipients are recorded (CampaignRunCountSQL), in the same transaction.
func CampaignRunAdvanceSQL(table string, v RunAdvance, mark Marker) string {
	set := `cursor = ` + mark(v.Cursor) + `, recipients = recipients + ` + mark(v.Recipients) +
		`, fetch_failed = fetch_failed + ` + mark(v.FetchFailed) + `, render_failed = render_failed + ` + mark(v.RenderFailed) +
		`, updated_at = ` + mark(v.Now) + `, version = version + 1`
	if v.LastError != "" {
		set += `, last_error = ` + mark(v.LastError)
	}
	if v.Finish != "" {
		set += `, state = ` + mark(v.Finish) + `, finished_at = ` + mark(v.Now)
	}
	return `UPDATE ` + table + ` SET ` + set + ` WHERE campaign = ` + mark(v.Campaign) + ` AND run_id = ` + mark(v.RunID) +
		` AND version = ` + mark(v.Version) + ` AND state = 'running'`
}

// CampaignRunCountSQL adds a batch's enqueued and skipped users to its run.
func CampaignRunCountSQL(table, campaign, runID string, enqueued, skipped int, mark Marker) string {
	return `UPDATE ` + table + ` SET enqueued = enqueued + ` + mark(enqueued) + `, skipped = skipped + ` + mark(skipped) +
		` WHERE campaign = ` + mark(campaign) + ` AND run_id = ` + mark(runID)
}

// CampaignRunPruneSQL deletes up to limit finished runs of table (the
// store's name for campaign_runs) that finished before cutoff, oldest
// first; their recipient rows go with them (ON DELETE CASCADE).
func CampaignRunPruneSQL(table string, cutoff any, limit int, mark Marker) string {
	return `DELETE FROM ` + table + ` WHERE (campaign, run_id) IN (SELECT campaign, run_id FROM ` + table +
		` WHERE state <> 'running' AND finished_at < ` + mark(cutoff) + ` ORDER BY finished_at LIMIT ` + mark(limit) + `)`
}

// AudienceActiveSQL is the condition of "active within" (S3.7): the user
// has a device seen at or after since. users is the users table's name in
// the query; devices the devices table's.
func AudienceActiveSQL(users, devices string, since any, mark Marker) string {
	return `EXISTS (SELECT 1 FROM ` + devices + ` d WHERE d.user_id = ` + users + `.id AND d.last_seen_at >= ` + mark(since) + `)`
}
