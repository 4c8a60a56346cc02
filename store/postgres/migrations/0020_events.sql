-- The rule engine's state (issue 20 items 1 and 4, S3.1, S3.5), column for
-- column the same as SQLite's 0015.

-- The events the rules acted on, by source (a Kafka topic, or 'http') and
-- id, with what the engine decided: a redelivery finds its row and is
-- answered from it. Pruned after events.retention.
CREATE TABLE events (
	source      text NOT NULL,
	id          text NOT NULL,
	name        text NOT NULL,
	subject     text NOT NULL DEFAULT '',
	user_id     text NOT NULL DEFAULT '',
	version     bigint NOT NULL DEFAULT 0,
	outcome     jsonb NOT NULL,
	received_at timestamptz NOT NULL,
	PRIMARY KEY (source, id)
);
CREATE INDEX events_received ON events (received_at);

-- One row per subject (product:42): the newest event version applied (the
-- stale guard), each rule's detector state (rule name → state), and seq,
-- bumped by every write, which guards the engine's read-decide-write.
CREATE TABLE event_subjects (
	subject    text PRIMARY KEY,
	version    bigint NOT NULL DEFAULT 0,
	seq        bigint NOT NULL,
	state      jsonb NOT NULL,
	updated_at timestamptz NOT NULL
);

-- A rule's fan-out of one event: the rendered notification and resolved
-- audience (job), the audience cursor and counts. Each batch's
-- notifications commit with the advanced cursor.
CREATE TABLE rule_runs (
	-- Byte order, as SQLite's: the list pages by (created_at, run_id).
	rule        text COLLATE "C" NOT NULL,
	run_id      text COLLATE "C" NOT NULL,
	source      text NOT NULL,
	event_id    text NOT NULL,
	event       text NOT NULL,
	subject     text NOT NULL DEFAULT '',
	job         jsonb NOT NULL,
	state       text NOT NULL CHECK (state IN ('running', 'done', 'failed')),
	-- The last user id the run went past; byte order, as the audience's
	-- keyset.
	cursor      text COLLATE "C" NOT NULL DEFAULT '',
	recipients  integer NOT NULL DEFAULT 0,
	enqueued    integer NOT NULL DEFAULT 0,
	last_error  text NOT NULL DEFAULT '',
	version     bigint NOT NULL,
	created_at  timestamptz NOT NULL,
	updated_at  timestamptz NOT NULL,
	finished_at timestamptz,
	PRIMARY KEY (rule, run_id)
);
-- Runs to work on (RunningRuleRuns).
CREATE INDEX rule_runs_running ON rule_runs (created_at) WHERE state = 'running';
-- A rule's runs, newest first (ListRuleRuns).
CREATE INDEX rule_runs_created ON rule_runs (rule, created_at, run_id);
-- Pruning (finished runs).
CREATE INDEX rule_runs_finished ON rule_runs (finished_at) WHERE state <> 'running';
