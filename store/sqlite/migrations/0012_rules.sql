-- Event rules (issue 20 item 2, S3.2, S3.4), column for column the same as
-- PostgreSQL's 0016: a rule's JSON definition (heraldtype.Rule) beside the
-- columns the engine selects rules by. Times are unix microseconds.
CREATE TABLE rules (
	name       TEXT PRIMARY KEY,
	-- The Kafka topic, or 'http' for POST /v1/events.
	source     TEXT NOT NULL,
	event      TEXT NOT NULL,
	disabled   INTEGER NOT NULL DEFAULT 0,
	definition TEXT NOT NULL,
	created_at INTEGER NOT NULL,
	updated_at INTEGER NOT NULL
);
CREATE INDEX rules_source_event ON rules (source, event);
