-- Notification types' message templates (issue 37 item 6), column for
-- column PostgreSQL's 0043: every saved version is a row, never updated, so
-- a notification's recorded version still shows what rendered it. The
-- type need not be declared through the API (a type of the configuration
-- file, or an undeclared one, may carry templates), so no foreign key.
-- created_at in microseconds since the epoch, UTC.
CREATE TABLE type_templates (
	type       TEXT NOT NULL,
	version    INTEGER NOT NULL,
	templates  TEXT NOT NULL,
	created_at INTEGER NOT NULL,
	PRIMARY KEY (type, version)
);
