-- The PostgreSQL work of outbound webhooks per event, three shapes (issue
-- 35 item 5; docs/ARCHITECTURE.md "Outbound webhooks", "The cost, and the
-- next step"): messages.sql is the table as built (insert, lease, sent
-- mark), hot.sql the same with a lease that changes no indexed column,
-- log.sql the designed insert-only log read through a cursor.
DROP SCHEMA IF EXISTS whfloor CASCADE;
CREATE SCHEMA whfloor;
SET search_path = whfloor;
CREATE TABLE webhook_messages (
	seq          bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
	endpoint_id  text NOT NULL,
	event_id     text NOT NULL,
	type         text NOT NULL,
	ordering_key text NOT NULL,
	payload      text NOT NULL,
	state        text NOT NULL,
	attempt      integer NOT NULL DEFAULT 0,
	run_at       timestamptz NOT NULL,
	lease_owner  text NOT NULL DEFAULT '',
	lease_until  timestamptz,
	occurred_at  timestamptz NOT NULL,
	first_at     timestamptz NOT NULL,
	last_status  integer NOT NULL DEFAULT 0,
	last_error   text NOT NULL DEFAULT '',
	finished_at  timestamptz
);
CREATE INDEX webhook_messages_due ON webhook_messages (run_at, seq) WHERE state IN ('pending', 'leased');
CREATE INDEX webhook_messages_order ON webhook_messages (endpoint_id, ordering_key, seq) WHERE state IN ('pending', 'leased');
CREATE INDEX webhook_messages_endpoint ON webhook_messages (endpoint_id, state, seq);
CREATE INDEX webhook_messages_finished ON webhook_messages (finished_at) WHERE state IN ('sent', 'dead');
CREATE TABLE webhook_events (
	seq          bigint GENERATED ALWAYS AS IDENTITY,
	txid         xid8 NOT NULL DEFAULT pg_current_xact_id(),
	endpoint_id  text NOT NULL,
	event_id     text NOT NULL,
	type         text NOT NULL,
	ordering_key text NOT NULL,
	payload      text NOT NULL,
	occurred_at  timestamptz NOT NULL
);
CREATE INDEX webhook_events_stream ON webhook_events (endpoint_id, txid, seq);
CREATE TABLE cursors (endpoint_id text PRIMARY KEY, txid xid8 NOT NULL, seq bigint NOT NULL);
INSERT INTO cursors VALUES ('wh', '0', 0);
-- hot: the lease changes no indexed column (state stays, run_at stays),
-- so a claim can be a HOT update; the finish is not.
CREATE TABLE hot (
	seq          bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
	endpoint_id  text NOT NULL,
	event_id     text NOT NULL,
	type         text NOT NULL,
	ordering_key text NOT NULL,
	payload      text NOT NULL,
	state        text NOT NULL,
	attempt      integer NOT NULL DEFAULT 0,
	run_at       timestamptz NOT NULL,
	lease_owner  text NOT NULL DEFAULT '',
	lease_until  timestamptz,
	occurred_at  timestamptz NOT NULL,
	first_at     timestamptz NOT NULL,
	last_status  integer NOT NULL DEFAULT 0,
	last_error   text NOT NULL DEFAULT '',
	finished_at  timestamptz
) WITH (fillfactor = 80);
CREATE INDEX hot_due ON hot (run_at, seq) WHERE finished_at IS NULL;
CREATE INDEX hot_order ON hot (endpoint_id, ordering_key, seq) WHERE finished_at IS NULL;
CREATE INDEX hot_endpoint ON hot (endpoint_id, seq);
