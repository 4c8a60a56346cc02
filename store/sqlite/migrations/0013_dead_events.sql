-- Dead events (issue 20 item 5, S3.10), column for column the same as
-- PostgreSQL's 0017: Kafka records Herald gave up on, kept for an operator
-- to read and replay. One record of a topic, partition and offset is kept
-- once. Times are unix microseconds.
CREATE TABLE dead_events (
	id           INTEGER PRIMARY KEY AUTOINCREMENT,
	topic        TEXT NOT NULL,
	partition    INTEGER NOT NULL,
	"offset"     INTEGER NOT NULL,
	kind         TEXT NOT NULL,
	key          BLOB,
	value        BLOB NOT NULL,
	payload      TEXT,
	error        TEXT NOT NULL,
	attempts     INTEGER NOT NULL,
	created_at   INTEGER NOT NULL,
	replayed_at  INTEGER,
	replay_error TEXT NOT NULL DEFAULT '',
	UNIQUE (topic, partition, "offset")
);
