-- The delivery policy (issue 4: S1.1–S1.3, S3.8, S3.9, S3.11), version for
-- version the same as SQLite's: declared notification types, user
-- preferences, de-duplication locks, daily cap counts, the dedupe key of a
-- notification, and the two final states a policy decision ends a
-- delivery in.

-- A constant default adds the column without rewriting the table.
ALTER TABLE notifications ADD COLUMN dedupe_key text NOT NULL DEFAULT '';

-- Types declared through the API; config is the JSON of the type.
CREATE TABLE notification_types (
	name       text PRIMARY KEY,
	config     jsonb NOT NULL,
	updated_at timestamptz NOT NULL
);

-- One JSON document of preferences per user, deleted with the user.
CREATE TABLE user_preferences (
	user_id    text PRIMARY KEY REFERENCES users (id) ON DELETE CASCADE,
	prefs      jsonb NOT NULL,
	updated_at timestamptz NOT NULL
);

-- First-writer-wins de-duplication locks (S1.2): key is user × type ×
-- dedupe key, owner the notification that took it. Expired rows are free
-- to take over and are pruned by the maintenance leader.
CREATE TABLE policy_dedupe (
	key        text PRIMARY KEY,
	owner      text NOT NULL,
	expires_at timestamptz NOT NULL
);
CREATE INDEX policy_dedupe_expires_at ON policy_dedupe (expires_at);

-- Notifications counted toward a user's local calendar day (S3.8).
CREATE TABLE policy_daily (
	user_id    text NOT NULL,
	day        text NOT NULL,
	owner      text NOT NULL,
	expires_at timestamptz NOT NULL,
	PRIMARY KEY (user_id, day, owner)
);
CREATE INDEX policy_daily_expires_at ON policy_daily (expires_at);

-- History (S3.9) by type and time.
CREATE INDEX notifications_type ON notifications (type, created_at);

-- The two final states of a policy decision. The constraint is replaced
-- rather than rebuilt; validating it scans deliveries once.
ALTER TABLE deliveries DROP CONSTRAINT deliveries_state_check,
	ADD CONSTRAINT deliveries_state_check CHECK (state IN ('pending', 'leased', 'sent', 'dead', 'unknown', 'skipped',
		'opted_out', 'rate_limited'));
