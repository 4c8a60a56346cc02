-- Cancellation (issue 36 item 4): a trigger's cancellation_key is kept on
-- its notifications, and a cancel finds them by key for one user
-- (notifications_cancellation_key_user) or for every user
-- (notifications_cancellation_key); both indexes hold only the
-- notifications that have a key. A cancel moves pending deliveries to the
-- new final state cancelled.
ALTER TABLE notifications ADD COLUMN cancellation_key text NOT NULL DEFAULT '';
CREATE INDEX notifications_cancellation_key_user ON notifications (user_id, cancellation_key)
	WHERE cancellation_key <> '';
CREATE INDEX notifications_cancellation_key ON notifications (cancellation_key) WHERE cancellation_key <> '';

ALTER TABLE deliveries DROP CONSTRAINT deliveries_state_check,
	ADD CONSTRAINT deliveries_state_check CHECK (state IN ('pending', 'leased', 'sent', 'dead', 'unknown', 'skipped',
		'opted_out', 'rate_limited', 'cancelled'));
