-- Cancelling digested triggers, and listing digests (issue 36 items 2
-- and 4). A digested trigger keeps its cancellation key on its item; a
-- cancel by key (or by the item's id) marks the items of digests not yet
-- sent cancelled_at, so the digest's message never shows them, and counts
-- them on the digest (cancelled), which the digest's fire checks against
-- the count it claimed: a cancel after the worker read the items refuses
-- the fire, and the digest is built again. The partial index serves the
-- cancel by key; (user_id, id) the list of a user's digests, newest first.
ALTER TABLE digest_items ADD COLUMN cancellation_key TEXT NOT NULL DEFAULT '';
ALTER TABLE digest_items ADD COLUMN cancelled_at TIMESTAMPTZ;
ALTER TABLE digests ADD COLUMN cancelled INTEGER NOT NULL DEFAULT 0;
CREATE INDEX digest_items_cancellation ON digest_items (cancellation_key) WHERE cancellation_key <> '';
CREATE INDEX digests_user_id ON digests (user_id, id);
