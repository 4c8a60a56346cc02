-- The types some user chose a digest schedule for, as PostgreSQL's 0045
-- (see there).
CREATE TABLE digest_schedule_types (
	type TEXT PRIMARY KEY
);
INSERT INTO digest_schedule_types (type)
SELECT DISTINCT t.key FROM user_preferences p, json_each(p.prefs, '$.types') t
WHERE json_type(t.value, '$.digest') = 'object';
