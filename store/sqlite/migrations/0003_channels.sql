-- Channels beyond push (S3.6, S4.5): Web Push subscription keys on
-- devices, the address of sms / email deliveries, the in-app inbox and
-- the suppression list.

-- A browser subscription's keys (RFC 8291); '' for other devices.
ALTER TABLE devices ADD COLUMN webpush_p256dh TEXT NOT NULL DEFAULT '';
ALTER TABLE devices ADD COLUMN webpush_auth TEXT NOT NULL DEFAULT '';

-- The phone number or e-mail address of an sms / email delivery, captured
-- at enqueue ('' for push and in-app). device_id stays '' for them.
ALTER TABLE deliveries ADD COLUMN address TEXT NOT NULL DEFAULT '';

-- The in-app inbox (S4.5): written in the trigger's own transaction and
-- deleted with its notification. AUTOINCREMENT so ids only grow: a
-- real-time stream resumes after the last id it delivered.
CREATE TABLE inbox_items (
	id              INTEGER PRIMARY KEY AUTOINCREMENT,
	user_id         TEXT NOT NULL,
	notification_id TEXT NOT NULL REFERENCES notifications (id) ON DELETE CASCADE,
	type            TEXT NOT NULL,
	title           TEXT NOT NULL DEFAULT '',
	body            TEXT NOT NULL DEFAULT '',
	-- JSON object of strings, '' when empty.
	data            TEXT NOT NULL DEFAULT '',
	created_at      INTEGER NOT NULL,
	read_at         INTEGER,
	archived_at     INTEGER
) STRICT;

-- Listing newest first (walked backwards) and InboxSince.
CREATE INDEX inbox_items_user_id ON inbox_items (user_id, id);
-- The unread count and the unread listing touch unread rows only.
CREATE INDEX inbox_items_unread ON inbox_items (user_id, id) WHERE read_at IS NULL AND archived_at IS NULL;
-- The cascade from notifications (retention) finds its items.
CREATE INDEX inbox_items_notification_id ON inbox_items (notification_id);

-- Addresses that must not be contacted on a channel (Twilio 21610 STOP, a
-- mailbox that does not exist) until they opt in again.
CREATE TABLE suppressions (
	channel    TEXT NOT NULL,
	address    TEXT NOT NULL,
	reason     TEXT NOT NULL DEFAULT '',
	created_at INTEGER NOT NULL,
	PRIMARY KEY (channel, address)
) STRICT;

CREATE INDEX suppressions_created_at ON suppressions (created_at);
