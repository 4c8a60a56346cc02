-- The outbound webhooks' events as an insert-only log read through a
-- cursor per endpoint (issue 35 item 5; docs/ARCHITECTURE.md "Outbound
-- webhooks", "The event log"). Each event is written once, by the
-- statement of the change it reports, and never updated: the endpoint's
-- stream reads the events past its cursor, sends them, and advances the
-- cursor in one statement per batch. Only an event that needs a retry (it
-- failed, or an earlier one of its notification is waiting in a retry) is
-- copied into webhook_messages, now the retry and dead-letter table,
-- keeping its seq.
--
-- txid is the writing transaction's id. The stream reads in (txid, seq)
-- order and only events whose transaction is older than every running one
-- (txid < pg_snapshot_xmin(pg_current_snapshot())): an identity's order is
-- not commit order, so a cursor on seq alone could pass an event whose
-- transaction commits late, and lose it.
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
-- The events' seqs follow the messages' (one space: a message copied from
-- an event keeps its seq).
SELECT setval(pg_get_serial_sequence('webhook_events', 'seq'),
	(SELECT coalesce(max(seq), 0) + 1 FROM webhook_messages), false);
-- A message copied from an event keeps its txid, so both lists merge in
-- one order; the messages written before the log have 0.
ALTER TABLE webhook_messages ADD COLUMN txid xid8 NOT NULL DEFAULT '0';
-- The stream: the position read through, and its lease.
ALTER TABLE webhook_endpoints
	ADD COLUMN cursor_txid xid8 NOT NULL DEFAULT '0',
	ADD COLUMN cursor_seq bigint NOT NULL DEFAULT 0,
	ADD COLUMN stream_owner text NOT NULL DEFAULT '',
	ADD COLUMN stream_until timestamptz;
