-- Idempotency keys belong to their caller (issue 23): a key is unique per
-- namespace (the HTTP API's is the calling API key's id), so one caller
-- can neither learn of, replay nor block another's key. SQLite cannot
-- change a primary key in place, so the table is rebuilt; records
-- written before keep working in the default namespace ''.
CREATE TABLE triggers_new (
	namespace        TEXT NOT NULL DEFAULT '',
	idempotency_key  TEXT NOT NULL,
	request_hash     TEXT NOT NULL,
	-- JSON array of notification ids, in trigger order.
	notification_ids TEXT NOT NULL,
	created_at       INTEGER NOT NULL,
	PRIMARY KEY (namespace, idempotency_key)
) STRICT;

INSERT INTO triggers_new (namespace, idempotency_key, request_hash, notification_ids, created_at)
SELECT '', idempotency_key, request_hash, notification_ids, created_at FROM triggers;

DROP TABLE triggers;
ALTER TABLE triggers_new RENAME TO triggers;
CREATE INDEX triggers_created_at ON triggers (created_at);
