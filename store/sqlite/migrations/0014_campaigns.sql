-- Campaigns (issue 19 item 6, S3.7): a named recurring send to an
-- audience. The campaign row holds its schedule state (next_at, a version
-- every write bumps, which guards a scheduled start); each run is a row
-- keyed by (campaign, run_id) — a due time runs once — with its audience
-- cursor and counts; each user a run reached is a row of
-- campaign_recipients, the run x user idempotency record written in the
-- transaction that enqueues the user's notification. Times are INTEGER
-- unix microseconds in UTC, NULL when unset. The definition (schedule,
-- audience, content, fetch, local_time) is JSON never read by SQL.
CREATE TABLE campaigns (
	name            TEXT PRIMARY KEY,
	definition      TEXT NOT NULL,
	paused          INTEGER NOT NULL DEFAULT 0,
	next_at         INTEGER,
	next_occurrence INTEGER,
	last_run_id     TEXT NOT NULL DEFAULT '',
	version         INTEGER NOT NULL,
	created_at      INTEGER NOT NULL,
	updated_at      INTEGER NOT NULL
) STRICT;

-- The runner's due scan (DueCampaigns, NextCampaignAt).
CREATE INDEX campaigns_due ON campaigns (next_at) WHERE paused = 0 AND next_at IS NOT NULL;

CREATE TABLE campaign_runs (
	campaign      TEXT NOT NULL REFERENCES campaigns (name) ON DELETE CASCADE,
	run_id        TEXT NOT NULL,
	occurrence    INTEGER NOT NULL,
	state         TEXT NOT NULL CHECK (state IN ('running', 'done', 'failed')),
	-- The last user id the run went past ('' before the first batch).
	cursor        TEXT NOT NULL DEFAULT '',
	recipients    INTEGER NOT NULL DEFAULT 0,
	enqueued      INTEGER NOT NULL DEFAULT 0,
	skipped       INTEGER NOT NULL DEFAULT 0,
	fetch_failed  INTEGER NOT NULL DEFAULT 0,
	render_failed INTEGER NOT NULL DEFAULT 0,
	last_error    TEXT NOT NULL DEFAULT '',
	restarts      INTEGER NOT NULL DEFAULT 0,
	version       INTEGER NOT NULL,
	started_at    INTEGER NOT NULL,
	updated_at    INTEGER NOT NULL,
	finished_at   INTEGER,
	PRIMARY KEY (campaign, run_id)
) STRICT;

-- Runs to resume (RunningCampaignRuns).
CREATE INDEX campaign_runs_running ON campaign_runs (started_at) WHERE state = 'running';
-- A campaign's runs, newest first (ListCampaignRuns).
CREATE INDEX campaign_runs_started ON campaign_runs (campaign, started_at, run_id);

CREATE TABLE campaign_recipients (
	campaign        TEXT NOT NULL,
	run_id          TEXT NOT NULL,
	user_id         TEXT NOT NULL,
	notification_id TEXT NOT NULL,
	PRIMARY KEY (campaign, run_id, user_id),
	FOREIGN KEY (campaign, run_id) REFERENCES campaign_runs (campaign, run_id) ON DELETE CASCADE
) STRICT, WITHOUT ROWID;
