-- Reminders (issue 19, S2.1-S2.6): a repeating notification about one
-- item of one user, under the caller's item key. The row holds its own
-- schedule state (next_at, sent_count, the lease of the scheduler that
-- claimed it), so a restart neither skips nor repeats an occurrence.
-- Times are INTEGER unix microseconds in UTC, NULL when unset; JSON is
-- TEXT, '' when empty. The schedule is stored as the JSON the schedule
-- evaluator wrote and is never read by SQL.
CREATE TABLE reminders (
	id                   TEXT PRIMARY KEY,
	key                  TEXT NOT NULL UNIQUE,
	user_id              TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
	-- The content of each occurrence, as a trigger's.
	type                 TEXT NOT NULL,
	title                TEXT NOT NULL DEFAULT '',
	body                 TEXT NOT NULL DEFAULT '',
	-- JSON object of strings, '' when empty.
	data                 TEXT NOT NULL DEFAULT '',
	-- JSON array of channel names.
	channels             TEXT NOT NULL,
	priority             TEXT NOT NULL DEFAULT '',
	data_only            INTEGER NOT NULL DEFAULT 0,
	-- JSON (heraldtype.Schedule).
	schedule             TEXT NOT NULL,
	-- The stop conditions; match is a JSON object of strings, '' when empty.
	max_sends            INTEGER NOT NULL DEFAULT 0,
	expires_at           INTEGER,
	on_event             TEXT NOT NULL DEFAULT '',
	match                TEXT NOT NULL DEFAULT '',
	quiet_hours          TEXT NOT NULL DEFAULT '',
	state                TEXT NOT NULL CHECK (state IN ('active', 'stopped')),
	stop_reason          TEXT NOT NULL DEFAULT '',
	stopped_at           INTEGER,
	-- When the schedule last (re)started: the creation or the last update
	-- (S2.3); an RRULE's DTSTART.
	schedule_start       INTEGER NOT NULL,
	-- NULL once stopped. next_occurrence is the nominal time of the next
	-- occurrence; next_at when it is due (later by its spread, or moved
	-- past a collision).
	next_at              INTEGER,
	next_occurrence      INTEGER,
	sent_count           INTEGER NOT NULL DEFAULT 0,
	last_notification_id TEXT NOT NULL DEFAULT '',
	last_sent_at         INTEGER,
	-- The scheduler that claimed the reminder and until when ('' / NULL
	-- when none).
	lease_owner          TEXT NOT NULL DEFAULT '',
	lease_until          INTEGER,
	-- Bumped by every write but the claim: the fire is guarded by it.
	version              INTEGER NOT NULL,
	created_at           INTEGER NOT NULL,
	updated_at           INTEGER NOT NULL
) STRICT;

-- The claim: active reminders in due order (ClaimReminders, NextReminderAt).
CREATE INDEX reminders_due ON reminders (next_at, id) WHERE state = 'active';
-- Leased reminders by the end of their lease (NextReminderAt: a rescue).
CREATE INDEX reminders_leased ON reminders (lease_until) WHERE state = 'active' AND lease_until IS NOT NULL;
-- A user's reminders by key (GET /v1/users/{id}/reminders, bulk cancel).
CREATE INDEX reminders_user_id ON reminders (user_id, key);
-- A type's reminders by key (the list filter, bulk cancel by type).
CREATE INDEX reminders_type ON reminders (type, key);
-- The event stop: the active reminders waiting for an event, by user.
CREATE INDEX reminders_on_event ON reminders (on_event, user_id) WHERE state = 'active' AND on_event <> '';
-- The collision gap (S2.5): the user's latest send.
CREATE INDEX reminders_user_last_sent ON reminders (user_id, last_sent_at) WHERE last_sent_at IS NOT NULL;
-- Retention: stopped reminders by when they stopped.
CREATE INDEX reminders_stopped_at ON reminders (stopped_at) WHERE state = 'stopped';
