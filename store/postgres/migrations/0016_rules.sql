-- Event rules (issue 20 item 2, S3.2, S3.4), column for column the same as
-- SQLite's 0012: a rule's JSON definition (heraldtype.Rule) beside the
-- columns the engine selects rules by.
CREATE TABLE rules (
	-- Byte order, as SQLite's: the list pages by name.
	name       text COLLATE "C" PRIMARY KEY,
	-- The Kafka topic, or 'http' for POST /v1/events.
	source     text NOT NULL,
	event      text NOT NULL,
	disabled   boolean NOT NULL DEFAULT false,
	definition jsonb NOT NULL,
	created_at timestamptz NOT NULL,
	updated_at timestamptz NOT NULL
);
CREATE INDEX rules_source_event ON rules (source, event);
