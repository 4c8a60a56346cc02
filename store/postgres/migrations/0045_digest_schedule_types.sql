-- The types some user chose a digest schedule for (issue 36 item 2:
-- preference types.<type>.digest). A trigger of a type listed here reads
-- its recipients' preferences to find their schedules; a trigger of any
-- other type reads nothing. Each preference write adds its scheduled
-- types in its own statement. A type is never removed when its last user
-- drops the schedule: a stale entry only costs its triggers that read,
-- while removing one could race a write adding it back and lose a
-- schedule. Filled from the preferences stored before it.
CREATE TABLE digest_schedule_types (
	type text PRIMARY KEY
);
INSERT INTO digest_schedule_types (type)
SELECT DISTINCT t.key FROM user_preferences p, jsonb_each(p.prefs -> 'types') t
WHERE jsonb_typeof(p.prefs -> 'types') = 'object' AND t.value ? 'digest' AND t.value -> 'digest' <> 'null'::jsonb;
