-- The outbound webhooks' events as an insert-only log read through a
-- cursor per endpoint (issue 35 item 5; docs/ARCHITECTURE.md "Outbound
-- webhooks", "The event log"): PostgreSQL's migration 0038 says why. The
-- single writer commits in seq order, so the cursor is a seq.
CREATE TABLE webhook_events (
	seq          INTEGER PRIMARY KEY AUTOINCREMENT,
	endpoint_id  TEXT NOT NULL,
	event_id     TEXT NOT NULL,
	type         TEXT NOT NULL,
	ordering_key TEXT NOT NULL,
	payload      TEXT NOT NULL,
	occurred_at  INTEGER NOT NULL
);
CREATE INDEX webhook_events_stream ON webhook_events (endpoint_id, seq);
-- The events' seqs follow the messages' (a message copied from an event
-- keeps its seq).
INSERT INTO sqlite_sequence (name, seq) SELECT 'webhook_events', coalesce(max(seq), 0) FROM webhook_messages;
ALTER TABLE webhook_endpoints ADD COLUMN cursor_seq INTEGER NOT NULL DEFAULT 0;
ALTER TABLE webhook_endpoints ADD COLUMN stream_owner TEXT NOT NULL DEFAULT '';
ALTER TABLE webhook_endpoints ADD COLUMN stream_until INTEGER;
