-- The rule engine's state (issue 20 items 1 and 4, S3.1, S3.5), column for
-- column the same as PostgreSQL's 0020. Times are unix microseconds.

-- The events the rules acted on, by source (a Kafka topic, or 'http') and
-- id, with what the engine decided: a redelivery finds its row and is
-- answered from it. Pruned after events.retention.
CREATE TABLE events (
	source      TEXT NOT NULL,
	id          TEXT NOT NULL,
	name        TEXT NOT NULL,
	subject     TEXT NOT NULL DEFAULT '',
	user_id     TEXT NOT NULL DEFAULT '',
	version     INTEGER NOT NULL DEFAULT 0,
	outcome     TEXT NOT NULL,
	received_at INTEGER NOT NULL,
	PRIMARY KEY (source, id)
) WITHOUT ROWID;
CREATE INDEX events_received ON events (received_at);

-- One row per subject (product:42): the newest event version applied (the
-- stale guard), each rule's detector state (JSON: rule name → state), and
-- seq, bumped by every write, which guards the engine's read-decide-write.
CREATE TABLE event_subjects (
	subject    TEXT PRIMARY KEY,
	version    INTEGER NOT NULL DEFAULT 0,
	seq        INTEGER NOT NULL,
	state      TEXT NOT NULL,
	updated_at INTEGER NOT NULL
) WITHOUT ROWID;

-- A rule's fan-out of one event: the rendered notification and resolved
-- audience (job, JSON), the audience cursor and counts. Each batch's
-- notifications commit with the advanced cursor.
CREATE TABLE rule_runs (
	rule        TEXT NOT NULL,
	run_id      TEXT NOT NULL,
	source      TEXT NOT NULL,
	event_id    TEXT NOT NULL,
	event       TEXT NOT NULL,
	subject     TEXT NOT NULL DEFAULT '',
	job         TEXT NOT NULL,
	state       TEXT NOT NULL CHECK (state IN ('running', 'done', 'failed')),
	cursor      TEXT NOT NULL DEFAULT '',
	recipients  INTEGER NOT NULL DEFAULT 0,
	enqueued    INTEGER NOT NULL DEFAULT 0,
	last_error  TEXT NOT NULL DEFAULT '',
	version     INTEGER NOT NULL,
	created_at  INTEGER NOT NULL,
	updated_at  INTEGER NOT NULL,
	finished_at INTEGER,
	PRIMARY KEY (rule, run_id)
);
-- Runs to work on (RunningRuleRuns).
CREATE INDEX rule_runs_running ON rule_runs (created_at) WHERE state = 'running';
-- A rule's runs, newest first (ListRuleRuns).
CREATE INDEX rule_runs_created ON rule_runs (rule, created_at, run_id);
-- Pruning (finished runs).
CREATE INDEX rule_runs_finished ON rule_runs (finished_at) WHERE state <> 'running';
