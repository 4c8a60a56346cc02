-- Event ids belong to their caller, and the stale guard to its source
-- (issues 30 item 5 and 31 item 5), column for column the same as
-- PostgreSQL's 0023.
--
-- 1. An event is recorded by (source, namespace, id): over HTTP the
--    namespace is the calling API key's id, so another key can neither
--    read an event's outcome by sending its id again nor suppress it by
--    sending the id first; a Kafka topic's events keep the namespace ''.
--    request_hash fingerprints the event: the same id with another body
--    is a conflict, not a redelivery ('' for the rows written before).
--    SQLite cannot change a primary key in place: the table is rebuilt.
CREATE TABLE events_new (
	source       TEXT NOT NULL,
	namespace    TEXT NOT NULL DEFAULT '',
	id           TEXT NOT NULL,
	name         TEXT NOT NULL,
	subject      TEXT NOT NULL DEFAULT '',
	user_id      TEXT NOT NULL DEFAULT '',
	version      INTEGER NOT NULL DEFAULT 0,
	request_hash TEXT NOT NULL DEFAULT '',
	outcome      TEXT NOT NULL,
	received_at  INTEGER NOT NULL,
	PRIMARY KEY (source, namespace, id)
) WITHOUT ROWID;
INSERT INTO events_new (source, namespace, id, name, subject, user_id, version, outcome, received_at)
SELECT source, '', id, name, subject, user_id, version, outcome, received_at FROM events;
DROP TABLE events;
ALTER TABLE events_new RENAME TO events;
CREATE INDEX events_received ON events (received_at);

-- 2. A subject's row is its source's: a topic's versions (a product
--    system's epoch milliseconds) and the API's are different clocks, so
--    one must not make the other's events stale. A subject's row moves to
--    each source whose recorded events named it; one no recorded event
--    names (older than the events' retention) starts afresh.
CREATE TABLE event_subjects_new (
	source     TEXT NOT NULL,
	subject    TEXT NOT NULL,
	version    INTEGER NOT NULL DEFAULT 0,
	seq        INTEGER NOT NULL,
	state      TEXT NOT NULL,
	updated_at INTEGER NOT NULL,
	PRIMARY KEY (source, subject)
) WITHOUT ROWID;
INSERT INTO event_subjects_new (source, subject, version, seq, state, updated_at)
SELECT DISTINCT e.source, s.subject, s.version, s.seq, s.state, s.updated_at
FROM event_subjects s JOIN events e ON e.subject = s.subject;
DROP TABLE event_subjects;
ALTER TABLE event_subjects_new RENAME TO event_subjects;

-- 3. A type's counts_toward_cap is true, false or unset; unset caps the
--    notifications rules and campaigns produce (issue 30 item 5). Before,
--    false was what every type that said nothing was stored with, so it
--    becomes unset.
UPDATE notification_types SET config = json_remove(config, '$.counts_toward_cap')
WHERE json_type(config, '$.counts_toward_cap') = 'false';
