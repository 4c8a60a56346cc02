-- Digests (issue 36 item 1), column for column PostgreSQL's 0040 (see
-- there); times in microseconds since the epoch, UTC.
CREATE TABLE digests (
	id              TEXT PRIMARY KEY,
	user_id         TEXT NOT NULL,
	type            TEXT NOT NULL,
	key             TEXT NOT NULL,
	state           TEXT NOT NULL CHECK (state IN ('open', 'closed', 'sent', 'failed')),
	opened_at       INTEGER NOT NULL,
	close_at        INTEGER NOT NULL,
	items           INTEGER NOT NULL,
	max_items       INTEGER NOT NULL,
	lease_owner     TEXT NOT NULL DEFAULT '',
	lease_until     INTEGER,
	notification_id TEXT,
	sent_at         INTEGER,
	last_error      TEXT NOT NULL DEFAULT ''
) STRICT;
CREATE UNIQUE INDEX digests_open ON digests (user_id, type, key) WHERE state = 'open';
CREATE INDEX digests_due ON digests (close_at) WHERE state IN ('open', 'closed');
CREATE INDEX digests_user ON digests (user_id, opened_at);

CREATE TABLE digest_items (
	digest_id  TEXT NOT NULL REFERENCES digests (id) ON DELETE CASCADE,
	seq        INTEGER NOT NULL,
	item_id    TEXT NOT NULL,
	content    TEXT NOT NULL,
	created_at INTEGER NOT NULL,
	PRIMARY KEY (digest_id, seq)
) STRICT, WITHOUT ROWID;
CREATE INDEX digest_items_item ON digest_items (item_id);
