-- Reminders (issue 19, S2.1-S2.6), column for column the same as SQLite's
-- 0009: a repeating notification about one item of one user, under the
-- caller's item key. The row holds its own schedule state (next_at,
-- sent_count, the lease of the scheduler that claimed it), so a restart
-- neither skips nor repeats an occurrence. The schedule is stored as the
-- JSON the schedule evaluator wrote and is never read by SQL.
CREATE TABLE reminders (
	id                   text PRIMARY KEY,
	-- Byte order, as SQLite's: the lists page by key.
	key                  text COLLATE "C" NOT NULL UNIQUE,
	user_id              text NOT NULL REFERENCES users (id) ON DELETE CASCADE,
	-- The content of each occurrence, as a trigger's.
	type                 text NOT NULL,
	title                text NOT NULL DEFAULT '',
	body                 text NOT NULL DEFAULT '',
	-- A JSON object of strings; NULL when empty.
	data                 jsonb,
	channels             text[] NOT NULL,
	priority             text NOT NULL DEFAULT '',
	data_only            boolean NOT NULL DEFAULT false,
	-- heraldtype.Schedule.
	schedule             jsonb NOT NULL,
	-- The stop conditions; match is a JSON object of strings, NULL when empty.
	max_sends            integer NOT NULL DEFAULT 0,
	expires_at           timestamptz,
	on_event             text NOT NULL DEFAULT '',
	match                jsonb,
	quiet_hours          text NOT NULL DEFAULT '',
	state                text NOT NULL CHECK (state IN ('active', 'stopped')),
	stop_reason          text NOT NULL DEFAULT '',
	stopped_at           timestamptz,
	-- When the schedule last (re)started: the creation or the last update
	-- (S2.3); an RRULE's DTSTART.
	schedule_start       timestamptz NOT NULL,
	-- NULL once stopped. next_occurrence is the nominal time of the next
	-- occurrence; next_at when it is due (later by its spread, or moved
	-- past a collision).
	next_at              timestamptz,
	next_occurrence      timestamptz,
	sent_count           integer NOT NULL DEFAULT 0,
	last_notification_id text NOT NULL DEFAULT '',
	last_sent_at         timestamptz,
	-- The scheduler that claimed the reminder and until when ('' / NULL
	-- when none).
	lease_owner          text NOT NULL DEFAULT '',
	lease_until          timestamptz,
	-- Bumped by every write but the claim: the fire is guarded by it.
	version              bigint NOT NULL,
	created_at           timestamptz NOT NULL,
	updated_at           timestamptz NOT NULL
);

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
