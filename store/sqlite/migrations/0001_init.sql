-- Herald's SQLite schema. Times are INTEGER unix microseconds in UTC, so
-- comparisons are integer comparisons; optional times are NULL when unset.
-- Tables are STRICT so a wrong type is an error, not a silent coercion.

CREATE TABLE users (
	id         TEXT PRIMARY KEY,
	timezone   TEXT NOT NULL,
	locale     TEXT NOT NULL DEFAULT '',
	email      TEXT NOT NULL DEFAULT '',
	phone      TEXT NOT NULL DEFAULT '',
	created_at INTEGER NOT NULL,
	updated_at INTEGER NOT NULL
) STRICT;

CREATE TABLE devices (
	id             TEXT PRIMARY KEY,
	user_id        TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
	platform       TEXT NOT NULL,
	-- '' once the token moved to another device.
	token          TEXT NOT NULL DEFAULT '',
	app_version    TEXT NOT NULL DEFAULT '',
	push_opt_in    INTEGER NOT NULL,
	status         TEXT NOT NULL CHECK (status IN ('ACTIVE', 'INVALID')),
	fail_count     INTEGER NOT NULL DEFAULT 0,
	last_seen_at   INTEGER NOT NULL,
	invalidated_at INTEGER,
	invalid_reason TEXT NOT NULL DEFAULT '',
	created_at     INTEGER NOT NULL,
	updated_at     INTEGER NOT NULL
) STRICT;

-- A token is held by at most one device (S0.1); UpsertDevice detaches the
-- previous holder before the new one takes it.
CREATE UNIQUE INDEX devices_token ON devices (token) WHERE token <> '';
CREATE INDEX devices_user_id ON devices (user_id, id);
CREATE INDEX devices_last_seen_at ON devices (last_seen_at);

CREATE TABLE notifications (
	id              TEXT PRIMARY KEY,
	user_id         TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
	type            TEXT NOT NULL,
	title           TEXT NOT NULL DEFAULT '',
	body            TEXT NOT NULL DEFAULT '',
	-- JSON object of strings, '' when empty.
	data            TEXT NOT NULL DEFAULT '',
	-- JSON array of channel names.
	channels        TEXT NOT NULL,
	priority        TEXT NOT NULL,
	payload_mode    TEXT NOT NULL,
	guarantee       TEXT NOT NULL,
	idempotency_key TEXT NOT NULL DEFAULT '',
	send_at         INTEGER,
	created_at      INTEGER NOT NULL
) STRICT;

CREATE INDEX notifications_user_id ON notifications (user_id, created_at);

-- The API idempotency record: first writer wins, a replay with the same
-- request hash gets the original notifications back.
CREATE TABLE triggers (
	idempotency_key  TEXT PRIMARY KEY,
	request_hash     TEXT NOT NULL,
	-- JSON array of notification ids, in trigger order.
	notification_ids TEXT NOT NULL,
	created_at       INTEGER NOT NULL
) STRICT;

CREATE INDEX triggers_created_at ON triggers (created_at);

-- The queue. AUTOINCREMENT so that an id is never reused after a delete:
-- the id is part of data.messageId (S0.5), which apps use to drop
-- duplicates.
CREATE TABLE deliveries (
	id                  INTEGER PRIMARY KEY AUTOINCREMENT,
	notification_id     TEXT NOT NULL REFERENCES notifications (id) ON DELETE CASCADE,
	-- user_id and type are copied from the notification for the dead
	-- letter filters, so listing never joins.
	user_id             TEXT NOT NULL,
	type                TEXT NOT NULL,
	channel             TEXT NOT NULL,
	provider            TEXT NOT NULL,
	-- No foreign key: a delivery outlives its device, and Claim reports a
	-- deleted device as a missing one.
	device_id           TEXT NOT NULL DEFAULT '',
	state               TEXT NOT NULL CHECK (state IN ('pending', 'leased', 'sent', 'dead', 'unknown', 'skipped')),
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
	finished_at         INTEGER
) STRICT;

-- The hot index: only pending rows, in claim order.
CREATE INDEX deliveries_pending_run_at ON deliveries (run_at, id) WHERE state = 'pending';
-- Lease reaping and extension look at leased rows only.
CREATE INDEX deliveries_leased_until ON deliveries (lease_until) WHERE state = 'leased';
CREATE INDEX deliveries_notification_id ON deliveries (notification_id, id);
-- Dead letter listing: by state, newest first; also the per-state counts
-- of QueueStats.
CREATE INDEX deliveries_state ON deliveries (state, id);
CREATE INDEX deliveries_user_id ON deliveries (user_id, id);

-- A delivery's timeline, oldest first by rowid.
CREATE TABLE delivery_attempts (
	delivery_id         INTEGER NOT NULL REFERENCES deliveries (id) ON DELETE CASCADE,
	attempt             INTEGER NOT NULL,
	at                  INTEGER NOT NULL,
	outcome             TEXT NOT NULL,
	error_code          TEXT NOT NULL DEFAULT '',
	error               TEXT NOT NULL DEFAULT '',
	-- Durations in nanoseconds.
	retry_after         INTEGER NOT NULL DEFAULT 0,
	provider_message_id TEXT NOT NULL DEFAULT '',
	latency             INTEGER NOT NULL DEFAULT 0
) STRICT;

CREATE INDEX delivery_attempts_delivery_id ON delivery_attempts (delivery_id);
