-- Interests (issue 20 item 3, S3.3): which users showed which kind of
-- interest (VIEW, CLICK, ADD_TO_CART, WATCH, …) in which subject, and when
-- last. Column for column the same as SQLite's 0011. No foreign key to
-- users: a behaviour stream may run ahead of registration; the audience
-- query keeps only users that exist.
CREATE TABLE interests (
	-- Byte order, as SQLite's: audiences page by user id.
	subject text COLLATE "C" NOT NULL,
	user_id text COLLATE "C" NOT NULL,
	kind    text COLLATE "C" NOT NULL,
	last_at timestamptz NOT NULL,
	-- A JSON object of strings (a watcher's target price); NULL when empty.
	data    jsonb,
	-- An audience is a range of this key: (subject, user_id > after).
	PRIMARY KEY (subject, user_id, kind)
);
-- A user's interests (GET /v1/users/{id}/interests).
CREATE INDEX interests_user ON interests (user_id, subject, kind);
-- Retention (interest_retention).
CREATE INDEX interests_last_at ON interests (last_at);
