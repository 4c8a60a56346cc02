-- A dead letter is never lost (issue 30 items 1 and 4), column for column
-- the same as PostgreSQL's 0022.
--
-- value may be NULL: a tombstone (a record whose value is null) is kept as
-- such; before, it failed the NOT NULL constraint and its partition waited
-- forever.
--
-- A dead event is keyed by its id, not by (topic, partition, offset): a
-- topic recreated, or a broker that lost its log (the dev broker at every
-- start), hands out the same offsets again, and the second record there
-- was dropped. The fingerprint — a hash of the record's position, its
-- timestamp, key and value — tells a record dead-lettered again after a
-- crash before its offset commit (the same fingerprint: kept once) from
-- another record at a reused position (kept too). Rows written before have
-- no record timestamp and a fingerprint of their own.
-- SQLite cannot drop a constraint in place, so the table is rebuilt.
CREATE TABLE dead_events_new (
	id               INTEGER PRIMARY KEY AUTOINCREMENT,
	topic            TEXT NOT NULL,
	partition        INTEGER NOT NULL,
	"offset"         INTEGER NOT NULL,
	kind             TEXT NOT NULL,
	key              BLOB,
	value            BLOB,
	record_timestamp INTEGER,
	fingerprint      TEXT NOT NULL UNIQUE,
	payload          TEXT,
	error            TEXT NOT NULL,
	attempts         INTEGER NOT NULL,
	created_at       INTEGER NOT NULL,
	replayed_at      INTEGER,
	replay_error     TEXT NOT NULL DEFAULT ''
);

INSERT INTO dead_events_new (id, topic, partition, "offset", kind, key, value, fingerprint, payload, error, attempts,
	created_at, replayed_at, replay_error)
SELECT id, topic, partition, "offset", kind, key, value, 'legacy:' || id, payload, error, attempts,
	created_at, replayed_at, replay_error FROM dead_events;

DROP TABLE dead_events;
ALTER TABLE dead_events_new RENAME TO dead_events;
CREATE INDEX dead_events_position ON dead_events (topic, partition, "offset");
