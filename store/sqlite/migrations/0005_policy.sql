-- The delivery policy (issue 4: S1.1–S1.3, S3.8, S3.9, S3.11): declared
-- notification types, user preferences, de-duplication locks, daily cap
-- counts, the dedupe key of a notification, and the two final states a
-- policy decision ends a delivery in.

ALTER TABLE notifications ADD COLUMN dedupe_key TEXT NOT NULL DEFAULT '';

-- Types declared through the API; config is the JSON of the type.
CREATE TABLE notification_types (
	name       TEXT PRIMARY KEY,
	config     TEXT NOT NULL,
	updated_at INTEGER NOT NULL
) STRICT;

-- One JSON document of preferences per user, deleted with the user.
CREATE TABLE user_preferences (
	user_id    TEXT PRIMARY KEY REFERENCES users (id) ON DELETE CASCADE,
	prefs      TEXT NOT NULL,
	updated_at INTEGER NOT NULL
) STRICT;

-- First-writer-wins de-duplication locks (S1.2): key is user × type ×
-- dedupe key, owner the notification that took it. Expired rows are free
-- to take over and are pruned by the maintenance leader.
CREATE TABLE policy_dedupe (
	key        TEXT PRIMARY KEY,
	owner      TEXT NOT NULL,
	expires_at INTEGER NOT NULL
) STRICT;
CREATE INDEX policy_dedupe_expires_at ON policy_dedupe (expires_at);

-- Notifications counted toward a user's local calendar day (S3.8).
CREATE TABLE policy_daily (
	user_id    TEXT NOT NULL,
	day        TEXT NOT NULL,
	owner      TEXT NOT NULL,
	expires_at INTEGER NOT NULL,
	PRIMARY KEY (user_id, day, owner)
) STRICT;
CREATE INDEX policy_daily_expires_at ON policy_daily (expires_at);

-- History (S3.9) by type and time.
CREATE INDEX notifications_type ON notifications (type, created_at);

-- SQLite cannot alter a CHECK constraint, so deliveries is rebuilt with the
-- states opted_out and rate_limited (the documented 12-step procedure, in
-- this migration's transaction). Foreign keys stay on, so dropping the old
-- table cascades to delivery_attempts: the attempts are kept aside and put
-- back in their order. The AUTOINCREMENT high-water mark is carried over,
-- so a delivery id (part of data.messageId, S0.5) is never reused.
CREATE TABLE deliveries_new (
	id                  INTEGER PRIMARY KEY AUTOINCREMENT,
	notification_id     TEXT NOT NULL REFERENCES notifications (id) ON DELETE CASCADE,
	user_id             TEXT NOT NULL,
	type                TEXT NOT NULL,
	channel             TEXT NOT NULL,
	provider            TEXT NOT NULL,
	device_id           TEXT NOT NULL DEFAULT '',
	state               TEXT NOT NULL CHECK (state IN ('pending', 'leased', 'sent', 'dead', 'unknown', 'skipped',
		'opted_out', 'rate_limited')),
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
