-- Interests (issue 20 item 3, S3.3): which users showed which kind of
-- interest (VIEW, CLICK, ADD_TO_CART, WATCH, …) in which subject, and when
-- last. Column for column the same as PostgreSQL's 0015. No foreign key to
-- users: a behaviour stream may run ahead of registration; the audience
-- query keeps only users that exist. Times are unix microseconds.
CREATE TABLE interests (
	subject TEXT NOT NULL,
	user_id TEXT NOT NULL,
	kind    TEXT NOT NULL,
	last_at INTEGER NOT NULL,
	-- A JSON object of strings (a watcher's target price); NULL when empty.
	data    TEXT,
	-- An audience is a range of this key: (subject, user_id > after).
	PRIMARY KEY (subject, user_id, kind)
) WITHOUT ROWID;
CREATE INDEX interests_user ON interests (user_id, subject, kind);
CREATE INDEX interests_last_at ON interests (last_at);
