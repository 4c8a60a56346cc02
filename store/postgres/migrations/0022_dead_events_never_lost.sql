-- A dead letter is never lost (issue 30 items 1 and 4), column for column
-- the same as SQLite's 0016.
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
ALTER TABLE dead_events ALTER COLUMN value DROP NOT NULL;
ALTER TABLE dead_events ADD COLUMN record_timestamp timestamptz;
ALTER TABLE dead_events ADD COLUMN fingerprint text;
UPDATE dead_events SET fingerprint = 'legacy:' || id;
ALTER TABLE dead_events ALTER COLUMN fingerprint SET NOT NULL;
ALTER TABLE dead_events ADD CONSTRAINT dead_events_fingerprint_key UNIQUE (fingerprint);
ALTER TABLE dead_events DROP CONSTRAINT dead_events_topic_partition_offset_key;
CREATE INDEX dead_events_position ON dead_events (topic, partition, "offset");
