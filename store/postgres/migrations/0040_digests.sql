-- Digests (issue 36 item 1): a digest type's triggers for one user and
-- key within the window gather here, one item each, and the digest
-- worker sends them as one notification. The partial unique index is the
-- rule "one open digest per (user, type, key)": concurrent triggers on
-- several instances find or create the same row (INSERT … ON CONFLICT),
-- and keys cannot mix. The due index serves the claim.
CREATE TABLE digests (
	id              TEXT PRIMARY KEY,
	user_id         TEXT NOT NULL,
	type            TEXT NOT NULL,
	key             TEXT NOT NULL,
	state           TEXT NOT NULL CHECK (state IN ('open', 'closed', 'sent', 'failed')),
	opened_at       TIMESTAMPTZ NOT NULL,
	close_at        TIMESTAMPTZ NOT NULL,
	items           INTEGER NOT NULL,
	max_items       INTEGER NOT NULL,
	lease_owner     TEXT NOT NULL DEFAULT '',
	lease_until     TIMESTAMPTZ,
	notification_id TEXT,
	sent_at         TIMESTAMPTZ,
	last_error      TEXT NOT NULL DEFAULT ''
);
CREATE UNIQUE INDEX digests_open ON digests (user_id, type, key) WHERE state = 'open';
CREATE INDEX digests_due ON digests (close_at) WHERE state IN ('open', 'closed');
CREATE INDEX digests_user ON digests (user_id, opened_at);

CREATE TABLE digest_items (
	digest_id  TEXT NOT NULL REFERENCES digests (id) ON DELETE CASCADE,
	seq        INTEGER NOT NULL,
	item_id    TEXT NOT NULL,
	content    JSONB NOT NULL,
	created_at TIMESTAMPTZ NOT NULL,
	PRIMARY KEY (digest_id, seq)
);
-- A replayed idempotency key finds its digested triggers by their ids.
CREATE INDEX digest_items_item ON digest_items (item_id);
