-- Cancelling digested triggers, and listing digests (issue 36 items 2
-- and 4), column for column PostgreSQL's 0042 (see there); times in
-- microseconds since the epoch, UTC.
ALTER TABLE digest_items ADD COLUMN cancellation_key TEXT NOT NULL DEFAULT '';
ALTER TABLE digest_items ADD COLUMN cancelled_at INTEGER;
ALTER TABLE digests ADD COLUMN cancelled INTEGER NOT NULL DEFAULT 0;
CREATE INDEX digest_items_cancellation ON digest_items (cancellation_key) WHERE cancellation_key <> '';
CREATE INDEX digests_user_id ON digests (user_id, id);
