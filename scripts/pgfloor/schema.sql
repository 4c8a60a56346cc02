-- The floor under Herald's PostgreSQL throughput (issue 6): the least
-- work a durable queue on PostgreSQL does per delivery. Run by
-- scripts/pgfloor/run; see docs/PERFORMANCE.md, "the floor".
SET client_min_messages = warning;
DROP SCHEMA IF EXISTS herald_floor CASCADE;
CREATE SCHEMA herald_floor;

-- queue.sql: one table, the payload in the row, one partial index to
-- find due jobs.
CREATE TABLE herald_floor.jobs (
	id          bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
	run_at      timestamptz NOT NULL,
	state       text NOT NULL,
	owner       text NOT NULL DEFAULT '',
	attempt     integer NOT NULL DEFAULT 0,
	lease_until timestamptz,
	payload     text NOT NULL
);
CREATE INDEX jobs_pending ON herald_floor.jobs (run_at, id) WHERE state = 'pending';

-- records.sql: what the mission keeps besides the queue: a notification
-- per recipient (the inbox and history, S3.9, S4.5), listed by user; the
-- delivery points at it and the claim reads it back.
CREATE TABLE herald_floor.notifications (
	id         text PRIMARY KEY,
	user_id    text NOT NULL,
	title      text NOT NULL,
	body       text NOT NULL,
	data       jsonb,
	created_at timestamptz NOT NULL
);
CREATE INDEX notifications_user ON herald_floor.notifications (user_id, created_at);
CREATE TABLE herald_floor.deliveries (
	id              bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
	notification_id text NOT NULL,
	token           text NOT NULL,
	run_at          timestamptz NOT NULL,
	state           text NOT NULL,
	owner           text NOT NULL DEFAULT '',
	attempt         integer NOT NULL DEFAULT 0,
	lease_until     timestamptz,
	finished_at     timestamptz
);
CREATE INDEX deliveries_pending ON herald_floor.deliveries (run_at, id) WHERE state = 'pending';
CREATE INDEX deliveries_notification ON herald_floor.deliveries (notification_id);

-- records_hot.sql (issue 39 item 2, weighed in session 14): the same
-- records, the queue apart: a narrow queue row per delivery (leased, then
-- deleted), and the delivery record updated once, at its outcome, with no
-- indexed column changed — a HOT update, given the room on its page
-- (fillfactor 50: at 80 only a third of the updates were HOT).
CREATE TABLE herald_floor.deliveries2 (
	id              bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
	notification_id text NOT NULL,
	token           text NOT NULL,
	state           text NOT NULL,
	attempt         integer NOT NULL DEFAULT 0,
	finished_at     timestamptz
) WITH (fillfactor = 50);
CREATE INDEX deliveries2_notification ON herald_floor.deliveries2 (notification_id);
CREATE TABLE herald_floor.queue2 (
	delivery_id bigint PRIMARY KEY,
	run_at      timestamptz NOT NULL,
	owner       text NOT NULL DEFAULT '',
	lease_until timestamptz
);
CREATE INDEX queue2_pending ON herald_floor.queue2 (run_at, delivery_id) WHERE lease_until IS NULL;

-- records_log.sql (issue 39 item 2, weighed in session 21): the same
-- records with no queue at all. Each delivery carries its shard and its
-- writing transaction's id; a worker leases a shard's cursor row, reads
-- the page past it (only transactions older than every one still running,
-- so nothing can commit behind the cursor), sends, and records the
-- outcomes with the cursor's advance. The record's outcome changes no
-- indexed column (HOT, given room on its page); the claim writes one row
-- per page, not one per delivery.
CREATE TABLE herald_floor.deliveries3 (
	id              bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
	shard           integer NOT NULL,
	txid            xid8 NOT NULL DEFAULT pg_current_xact_id(),
	notification_id text NOT NULL,
	token           text NOT NULL,
	run_at          timestamptz NOT NULL,
	state           text NOT NULL,
	attempt         integer NOT NULL DEFAULT 0,
	finished_at     timestamptz
) WITH (fillfactor = 50);
CREATE INDEX deliveries3_log ON herald_floor.deliveries3 (shard, txid, id);
CREATE INDEX deliveries3_notification ON herald_floor.deliveries3 (notification_id);
CREATE TABLE herald_floor.cursors3 (
	shard       integer PRIMARY KEY,
	txid        xid8 NOT NULL DEFAULT '0',
	id          bigint NOT NULL DEFAULT 0,
	owner       text NOT NULL DEFAULT '',
	lease_until timestamptz
);
INSERT INTO herald_floor.cursors3 (shard) SELECT generate_series(0, 63);

-- records_part.sql (issue 39 item 2, weighed in session 22): records.sql's
-- shape with the history rotated: the notifications partitioned by day,
-- the deliveries by ranges of id, so that retention drops a partition
-- instead of deleting rows and vacuuming after them. The run script makes
-- the partitions (PARTS, default 30: a month of days, the current one open).
CREATE TABLE herald_floor.notifications4 (
	id         text NOT NULL,
	user_id    text NOT NULL,
	title      text NOT NULL,
	body       text NOT NULL,
	data       jsonb,
	created_at timestamptz NOT NULL,
	PRIMARY KEY (id, created_at)
) PARTITION BY RANGE (created_at);
CREATE INDEX notifications4_user ON herald_floor.notifications4 (user_id, created_at);
CREATE SEQUENCE herald_floor.deliveries4_id;
CREATE TABLE herald_floor.deliveries4 (
	id              bigint NOT NULL DEFAULT nextval('herald_floor.deliveries4_id') PRIMARY KEY,
	notification_id text NOT NULL,
	notification_at timestamptz NOT NULL,
	token           text NOT NULL,
	run_at          timestamptz NOT NULL,
	state           text NOT NULL,
	owner           text NOT NULL DEFAULT '',
	attempt         integer NOT NULL DEFAULT 0,
	lease_until     timestamptz,
	finished_at     timestamptz
) PARTITION BY RANGE (id);
CREATE INDEX deliveries4_pending ON herald_floor.deliveries4 (run_at, id) WHERE state = 'pending';
CREATE INDEX deliveries4_notification ON herald_floor.deliveries4 (notification_id);
