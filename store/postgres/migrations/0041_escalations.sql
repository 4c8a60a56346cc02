-- Escalations (issue 36 item 3): one row per notification and step of
-- its type's escalation, written in the trigger's transaction. The
-- escalation worker claims the due pending rows and fires each (it sends
-- the notification again on the step's channels) unless a receipt of
-- the step's unless exists; a receipt, an inbox mark or a cancel stops
-- the pending rows in its own transaction. The row's lock decides which
-- commits first. The due index serves the claim; the fired index finds
-- the step that sent a notification (a receipt on it answers the
-- escalated notification's later steps).
CREATE TABLE escalations (
	notification_id       TEXT NOT NULL REFERENCES notifications (id) ON DELETE CASCADE,
	step                  INTEGER NOT NULL,
	user_id               TEXT NOT NULL,
	type                  TEXT NOT NULL,
	due_at                TIMESTAMPTZ NOT NULL,
	unless                TEXT NOT NULL,
	channels              TEXT NOT NULL,
	state                 TEXT NOT NULL CHECK (state IN ('pending', 'fired', 'stopped')),
	lease_owner           TEXT NOT NULL DEFAULT '',
	lease_until           TIMESTAMPTZ,
	decided_at            TIMESTAMPTZ,
	reason                TEXT NOT NULL DEFAULT '',
	fired_notification_id TEXT,
	PRIMARY KEY (notification_id, step)
);
CREATE INDEX escalations_due ON escalations (due_at) WHERE state = 'pending';
CREATE INDEX escalations_fired ON escalations (fired_notification_id) WHERE fired_notification_id IS NOT NULL;
