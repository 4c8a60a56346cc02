-- Channels beyond push (S3.6, S4.5), version for version the same as
-- SQLite's: Web Push subscription keys on devices, the address of sms /
-- email deliveries, the in-app inbox and the suppression list.

-- A browser subscription's keys (RFC 8291); '' for other devices.
ALTER TABLE devices ADD COLUMN webpush_p256dh text NOT NULL DEFAULT '',
	ADD COLUMN webpush_auth text NOT NULL DEFAULT '';

-- The phone number or e-mail address of an sms / email delivery, captured
-- at enqueue ('' for push and in-app). device_id stays '' for them. A
-- constant default adds the column without rewriting the table.
ALTER TABLE deliveries ADD COLUMN address text NOT NULL DEFAULT '';

-- The in-app inbox (S4.5): written in the trigger's own transaction and
-- deleted with its notification. An identity column only grows: a
-- real-time stream resumes after the last id it delivered.
CREATE TABLE inbox_items (
	id              bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
	user_id         text NOT NULL,
	notification_id text NOT NULL REFERENCES notifications (id) ON DELETE CASCADE,
	type            text NOT NULL,
	title           text NOT NULL DEFAULT '',
	body            text NOT NULL DEFAULT '',
	-- A JSON object of strings; NULL when empty.
	data            jsonb,
	created_at      timestamptz NOT NULL,
	read_at         timestamptz,
	archived_at     timestamptz
);

-- Listing newest first and InboxSince.
CREATE INDEX inbox_items_user_id ON inbox_items (user_id, id DESC);
-- The unread count and the unread listing touch unread rows only.
CREATE INDEX inbox_items_unread ON inbox_items (user_id, id DESC) WHERE read_at IS NULL AND archived_at IS NULL;
-- The cascade from notifications (retention) finds its items.
CREATE INDEX inbox_items_notification_id ON inbox_items (notification_id);

-- Addresses that must not be contacted on a channel (Twilio 21610 STOP, a
-- mailbox that does not exist) until they opt in again.
CREATE TABLE suppressions (
	channel    text NOT NULL,
	address    text NOT NULL,
	reason     text NOT NULL DEFAULT '',
	created_at timestamptz NOT NULL,
	PRIMARY KEY (channel, address)
);

CREATE INDEX suppressions_created_at ON suppressions (created_at);
