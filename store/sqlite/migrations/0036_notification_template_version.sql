-- The version of its type's templates a notification is rendered from
-- (issue 37 item 6), column for column PostgreSQL's 0044: 0 for one sent
-- as its trigger wrote it (every notification before this migration).
ALTER TABLE notifications ADD COLUMN template_version INTEGER NOT NULL DEFAULT 0;
