-- Cancellation (issue 36 item 4), as PostgreSQL's 0039: a trigger's
-- cancellation_key is kept on its notifications, found by key for one user
-- or for every user through two partial indexes of the notifications that
-- have one; a cancel moves pending deliveries to the new final state
-- cancelled.
ALTER TABLE notifications ADD COLUMN cancellation_key TEXT NOT NULL DEFAULT '';
CREATE INDEX notifications_cancellation_key_user ON notifications (user_id, cancellation_key)
	WHERE cancellation_key <> '';
CREATE INDEX notifications_cancellation_key ON notifications (cancellation_key) WHERE cancellation_key <> '';

-- SQLite cannot alter a CHECK constraint, so deliveries is rebuilt with the
-- state cancelled, as 0005 did (see there): the attempts are kept aside
-- and put back in their order, the AUTOINCREMENT high-water mark is
-- carried over. The engagement trigger on delivery_attempts is dropped
-- first and made again last: putting the attempts back must not count
-- their sends and receipts twice, and the trigger names deliveries, which
-- the rename checks.
DROP TRIGGER delivery_attempts_engagement;

CREATE TABLE deliveries_new (
	id                  INTEGER PRIMARY KEY AUTOINCREMENT,
	notification_id     TEXT NOT NULL REFERENCES notifications (id) ON DELETE CASCADE,
	user_id             TEXT NOT NULL,
	type                TEXT NOT NULL,
	channel             TEXT NOT NULL,
	provider            TEXT NOT NULL,
	device_id           TEXT NOT NULL DEFAULT '',
	state               TEXT NOT NULL CHECK (state IN ('pending', 'leased', 'sent', 'dead', 'unknown', 'skipped',
		'opted_out', 'rate_limited', 'cancelled')),
	guarantee           TEXT NOT NULL,
	attempt             INTEGER NOT NULL DEFAULT 0,
	max_attempts        INTEGER NOT NULL,
	run_at              INTEGER NOT NULL,
	lease_owner         TEXT NOT NULL DEFAULT '',
	lease_until         INTEGER,
	last_error_code     TEXT NOT NULL DEFAULT '',
	last_error          TEXT NOT NULL DEFAULT '',
	provider_message_id TEXT NOT NULL DEFAULT '',
	replay_count        INTEGER NOT NULL DEFAULT 0,
	last_replay_at      INTEGER,
	last_replay_result  TEXT NOT NULL DEFAULT '',
	created_at          INTEGER NOT NULL,
	updated_at          INTEGER NOT NULL,
	finished_at         INTEGER,
	address             TEXT NOT NULL DEFAULT ''
) STRICT;

INSERT INTO deliveries_new (id, notification_id, user_id, type, channel, provider, device_id, state, guarantee,
	attempt, max_attempts, run_at, lease_owner, lease_until, last_error_code, last_error, provider_message_id,
	replay_count, last_replay_at, last_replay_result, created_at, updated_at, finished_at, address)
SELECT id, notification_id, user_id, type, channel, provider, device_id, state, guarantee,
	attempt, max_attempts, run_at, lease_owner, lease_until, last_error_code, last_error, provider_message_id,
	replay_count, last_replay_at, last_replay_result, created_at, updated_at, finished_at, address
FROM deliveries;

DELETE FROM sqlite_sequence WHERE name = 'deliveries_new';
INSERT INTO sqlite_sequence (name, seq) SELECT 'deliveries_new', seq FROM sqlite_sequence WHERE name = 'deliveries';

CREATE TABLE delivery_attempts_keep AS SELECT rowid AS keep_order, * FROM delivery_attempts;

DROP TABLE deliveries;
ALTER TABLE deliveries_new RENAME TO deliveries;

INSERT INTO delivery_attempts (delivery_id, attempt, at, outcome, error_code, error, retry_after,
	provider_message_id, latency)
SELECT delivery_id, attempt, at, outcome, error_code, error, retry_after, provider_message_id, latency
FROM delivery_attempts_keep ORDER BY keep_order;
DROP TABLE delivery_attempts_keep;

CREATE INDEX deliveries_pending_run_at ON deliveries (run_at, id) WHERE state = 'pending';
CREATE INDEX deliveries_leased_until ON deliveries (lease_until) WHERE state = 'leased';
CREATE INDEX deliveries_notification_id ON deliveries (notification_id, id);
CREATE INDEX deliveries_state ON deliveries (state, id);
CREATE INDEX deliveries_user_id ON deliveries (user_id, id);

CREATE TRIGGER delivery_attempts_engagement AFTER INSERT ON delivery_attempts
WHEN NEW.outcome IN ('sent', 'receipt')
BEGIN
	INSERT INTO engagement_counts (bucket, type, channel, source_kind, source_name, event, shard, n)
	SELECT NEW.at - NEW.at % 3600000000, d.type, d.channel,
		coalesce(json_extract(x.source, '$.kind'), ''), coalesce(json_extract(x.source, '$.name'), ''),
		CASE NEW.outcome WHEN 'sent' THEN 'sent' ELSE NEW.error_code END, 0, 1
	FROM deliveries d JOIN notifications x ON x.id = d.notification_id
	WHERE d.id = NEW.delivery_id
	ON CONFLICT (bucket, type, channel, source_kind, source_name, event, shard) DO UPDATE SET n = n + 1;
END;
