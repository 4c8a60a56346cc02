-- Escalations (issue 36 item 3), column for column PostgreSQL's 0041 (see
-- there); times in microseconds since the epoch, UTC.
CREATE TABLE escalations (
	notification_id       TEXT NOT NULL REFERENCES notifications (id) ON DELETE CASCADE,
	step                  INTEGER NOT NULL,
	user_id               TEXT NOT NULL,
	type                  TEXT NOT NULL,
	due_at                INTEGER NOT NULL,
	unless                TEXT NOT NULL,
	channels              TEXT NOT NULL,
	state                 TEXT NOT NULL CHECK (state IN ('pending', 'fired', 'stopped')),
	lease_owner           TEXT NOT NULL DEFAULT '',
	lease_until           INTEGER,
	decided_at            INTEGER,
	reason                TEXT NOT NULL DEFAULT '',
	fired_notification_id TEXT,
	PRIMARY KEY (notification_id, step)
) STRICT, WITHOUT ROWID;
CREATE INDEX escalations_due ON escalations (due_at) WHERE state = 'pending';
CREATE INDEX escalations_fired ON escalations (fired_notification_id) WHERE fired_notification_id IS NOT NULL;
