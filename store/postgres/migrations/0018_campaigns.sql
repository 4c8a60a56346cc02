-- Campaigns (issue 19 item 6, S3.7), column for column the same as
-- SQLite's 0014: a named recurring send to an audience. The campaign row
-- holds its schedule state (next_at, a version every write bumps, which
-- guards a scheduled start); each run is a row keyed by (campaign, run_id)
-- — a due time runs once — with its audience cursor and counts; each user
-- a run reached is a row of campaign_recipients, the run x user
-- idempotency record written in the transaction that enqueues the user's
-- notification. The definition is JSON never read by SQL.
CREATE TABLE campaigns (
	-- Byte order, as SQLite's: the list pages by name.
	name            text COLLATE "C" PRIMARY KEY,
	definition      jsonb NOT NULL,
	paused          boolean NOT NULL DEFAULT false,
	next_at         timestamptz,
	next_occurrence timestamptz,
	last_run_id     text NOT NULL DEFAULT '',
	version         bigint NOT NULL,
	created_at      timestamptz NOT NULL,
	updated_at      timestamptz NOT NULL
);

-- The runner's due scan (DueCampaigns, NextCampaignAt).
CREATE INDEX campaigns_due ON campaigns (next_at) WHERE NOT paused AND next_at IS NOT NULL;

CREATE TABLE campaign_runs (
	campaign      text COLLATE "C" NOT NULL REFERENCES campaigns (name) ON DELETE CASCADE,
	run_id        text COLLATE "C" NOT NULL,
	occurrence    timestamptz NOT NULL,
	state         text NOT NULL CHECK (state IN ('running', 'done', 'failed')),
	-- The last user id the run went past ('' before the first batch);
	-- byte order, as the audience's keyset.
	cursor        text COLLATE "C" NOT NULL DEFAULT '',
	recipients    integer NOT NULL DEFAULT 0,
	enqueued      integer NOT NULL DEFAULT 0,
	skipped       integer NOT NULL DEFAULT 0,
	fetch_failed  integer NOT NULL DEFAULT 0,
	render_failed integer NOT NULL DEFAULT 0,
	last_error    text NOT NULL DEFAULT '',
	restarts      integer NOT NULL DEFAULT 0,
	version       bigint NOT NULL,
	started_at    timestamptz NOT NULL,
	updated_at    timestamptz NOT NULL,
	finished_at   timestamptz,
	PRIMARY KEY (campaign, run_id)
);

-- Runs to resume (RunningCampaignRuns).
CREATE INDEX campaign_runs_running ON campaign_runs (started_at) WHERE state = 'running';
-- A campaign's runs, newest first (ListCampaignRuns).
CREATE INDEX campaign_runs_started ON campaign_runs (campaign, started_at, run_id);

CREATE TABLE campaign_recipients (
	campaign        text COLLATE "C" NOT NULL,
	run_id          text COLLATE "C" NOT NULL,
	user_id         text NOT NULL,
	notification_id text NOT NULL,
	PRIMARY KEY (campaign, run_id, user_id),
	FOREIGN KEY (campaign, run_id) REFERENCES campaign_runs (campaign, run_id) ON DELETE CASCADE
);
