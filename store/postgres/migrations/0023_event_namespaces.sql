-- Event ids belong to their caller, and the stale guard to its source
-- (issues 30 item 5 and 31 item 5), column for column the same as
-- SQLite's 0017.
--
-- 1. An event is recorded by (source, namespace, id): over HTTP the
--    namespace is the calling API key's id, so another key can neither
--    read an event's outcome by sending its id again nor suppress it by
--    sending the id first; a Kafka topic's events keep the namespace ''.
--    request_hash fingerprints the event: the same id with another body
--    is a conflict, not a redelivery ('' for the rows written before).
ALTER TABLE events ADD COLUMN namespace text NOT NULL DEFAULT '';
ALTER TABLE events ADD COLUMN request_hash text NOT NULL DEFAULT '';
ALTER TABLE events DROP CONSTRAINT events_pkey;
ALTER TABLE events ADD PRIMARY KEY (source, namespace, id);

-- 2. A subject's row is its source's: a topic's versions (a product
--    system's epoch milliseconds) and the API's are different clocks, so
--    one must not make the other's events stale. A subject's row moves to
--    each source whose recorded events named it; one no recorded event
--    names (older than the events' retention) starts afresh.
ALTER TABLE event_subjects ADD COLUMN source text NOT NULL DEFAULT '';
ALTER TABLE event_subjects DROP CONSTRAINT event_subjects_pkey;
INSERT INTO event_subjects (source, subject, version, seq, state, updated_at)
SELECT DISTINCT e.source, s.subject, s.version, s.seq, s.state, s.updated_at
FROM event_subjects s JOIN events e ON e.subject = s.subject;
DELETE FROM event_subjects WHERE source = '';
ALTER TABLE event_subjects ALTER COLUMN source DROP DEFAULT;
ALTER TABLE event_subjects ADD PRIMARY KEY (source, subject);

-- 3. A type's counts_toward_cap is true, false or unset; unset caps the
--    notifications rules and campaigns produce (issue 30 item 5). Before,
--    false was what every type that said nothing was stored with, so it
--    becomes unset.
UPDATE notification_types SET config = config - 'counts_toward_cap'
WHERE config -> 'counts_toward_cap' = 'false'::jsonb;
