-- Dead events (issue 20 item 5, S3.10), column for column the same as
-- SQLite's 0013: Kafka records Herald gave up on, kept for an operator to
-- read and replay. One record of a topic, partition and offset is kept
-- once.
CREATE TABLE dead_events (
	id           bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
	topic        text NOT NULL,
	partition    integer NOT NULL,
	"offset"     bigint NOT NULL,
	kind         text NOT NULL,
	key          bytea,
	value        bytea NOT NULL,
	-- The decoded record (the call Herald made), NULL when it did not decode.
	payload      jsonb,
	error        text NOT NULL,
	attempts     integer NOT NULL,
	created_at   timestamptz NOT NULL,
	replayed_at  timestamptz,
	replay_error text NOT NULL DEFAULT '',
	UNIQUE (topic, partition, "offset")
);
