-- Herald's PostgreSQL schema, version for version the same as SQLite's.
-- It is created in the schema named by postgres.Options.Schema: Migrate
-- runs these files with search_path set to it, and the store qualifies
-- every table with it. Times are timestamptz (microseconds, UTC).

CREATE TABLE users (
	id         text PRIMARY KEY,
	timezone   text NOT NULL,
	locale     text NOT NULL DEFAULT '',
	email      text NOT NULL DEFAULT '',
	phone      text NOT NULL DEFAULT '',
	created_at timestamptz NOT NULL,
	updated_at timestamptz NOT NULL
);

CREATE TABLE devices (
	id             text PRIMARY KEY,
	user_id        text NOT NULL REFERENCES users (id) ON DELETE CASCADE,
	platform       text NOT NULL,
	-- '' once the token moved to another device.
	token          text NOT NULL DEFAULT '',
	app_version    text NOT NULL DEFAULT '',
	push_opt_in    boolean NOT NULL,
	status         text NOT NULL CHECK (status IN ('ACTIVE', 'INVALID')),
	fail_count     integer NOT NULL DEFAULT 0,
	last_seen_at   timestamptz NOT NULL,
	invalidated_at timestamptz,
	invalid_reason text NOT NULL DEFAULT '',
	created_at     timestamptz NOT NULL,
	updated_at     timestamptz NOT NULL
);

-- A token is held by at most one device (S0.1).
CREATE UNIQUE INDEX devices_token ON devices (token) WHERE token <> '';
CREATE INDEX devices_user_id ON devices (user_id, id);
CREATE INDEX devices_last_seen_at ON devices (last_seen_at);

CREATE TABLE notifications (
	id              text PRIMARY KEY,
	user_id         text NOT NULL REFERENCES users (id) ON DELETE CASCADE,
	type            text NOT NULL,
	title           text NOT NULL DEFAULT '',
	body            text NOT NULL DEFAULT '',
	-- A JSON object of strings; NULL when empty.
	data            jsonb,
	channels        text[] NOT NULL,
	priority        text NOT NULL,
	payload_mode    text NOT NULL,
	guarantee       text NOT NULL,
	idempotency_key text NOT NULL DEFAULT '',
	send_at         timestamptz,
	created_at      timestamptz NOT NULL
);

CREATE INDEX notifications_user_id ON notifications (user_id, created_at);

-- The API idempotency record: first writer wins (INSERT … ON CONFLICT DO
-- NOTHING), a replay with the same request hash gets the original
-- notifications back.
CREATE TABLE triggers (
	idempotency_key  text PRIMARY KEY,
	request_hash     text NOT NULL,
	-- Notification ids in trigger order.
	notification_ids text[] NOT NULL,
	created_at       timestamptz NOT NULL
);

CREATE INDEX triggers_created_at ON triggers (created_at);

-- The queue. An identity column never reuses an id: the id is part of
-- data.messageId (S0.5), which apps use to drop duplicates.
CREATE TABLE deliveries (
	id                  bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
	notification_id     text NOT NULL REFERENCES notifications (id) ON DELETE CASCADE,
	user_id             text NOT NULL,
	type                text NOT NULL,
	channel             text NOT NULL,
	provider            text NOT NULL,
	-- No foreign key: a delivery outlives its device.
	device_id           text NOT NULL DEFAULT '',
	state               text NOT NULL CHECK (state IN ('pending', 'leased', 'sent', 'dead', 'unknown', 'skipped')),
	guarantee           text NOT NULL,
	attempt             integer NOT NULL DEFAULT 0,
	max_attempts        integer NOT NULL,
	run_at              timestamptz NOT NULL,
	lease_owner         text NOT NULL DEFAULT '',
	lease_until         timestamptz,
	last_error_code     text NOT NULL DEFAULT '',
	last_error          text NOT NULL DEFAULT '',
	provider_message_id text NOT NULL DEFAULT '',
	replay_count        integer NOT NULL DEFAULT 0,
	last_replay_at      timestamptz,
	last_replay_result  text NOT NULL DEFAULT '',
	created_at          timestamptz NOT NULL,
	updated_at          timestamptz NOT NULL,
	finished_at         timestamptz
);

-- The hot index: only pending rows, in claim order (FOR UPDATE SKIP
-- LOCKED walks it).
CREATE INDEX deliveries_pending_run_at ON deliveries (run_at, id) WHERE state = 'pending';
CREATE INDEX deliveries_leased_until ON deliveries (lease_until) WHERE state = 'leased';
CREATE INDEX deliveries_notification_id ON deliveries (notification_id, id);
-- Dead letter listing. Partial, unlike SQLite's (state, id): every claim
-- and outcome rewrites the row into each index whose predicate holds, so
-- an index over the hot states would cost every delivery twice.
CREATE INDEX deliveries_dead_letters ON deliveries (state, id) WHERE state IN ('dead', 'unknown');
CREATE INDEX deliveries_user_id ON deliveries (user_id, id);

-- The queue churns: every delivery is rewritten at claim and at outcome.
-- Vacuum and analyze it after 2 % of its rows changed rather than 20 %,
-- so dead rows do not pile up and the planner learns of a burst of
-- pending rows quickly (with stale statistics it may sort every due row
-- instead of walking deliveries_pending_run_at).
ALTER TABLE deliveries SET (autovacuum_vacuum_scale_factor = 0.02, autovacuum_analyze_scale_factor = 0.02);

-- A delivery's timeline, oldest first by id.
CREATE TABLE delivery_attempts (
	id                  bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
	delivery_id         bigint NOT NULL REFERENCES deliveries (id) ON DELETE CASCADE,
	attempt             integer NOT NULL,
	at                  timestamptz NOT NULL,
	outcome             text NOT NULL,
	error_code          text NOT NULL DEFAULT '',
	error               text NOT NULL DEFAULT '',
	-- Durations in nanoseconds.
	retry_after         bigint NOT NULL DEFAULT 0,
	provider_message_id text NOT NULL DEFAULT '',
	latency             bigint NOT NULL DEFAULT 0
);

CREATE INDEX delivery_attempts_delivery_id ON delivery_attempts (delivery_id, id);
