-- The version of its type's templates a notification is rendered from
-- (issue 37 item 6): 0 for one sent as its trigger wrote it (every
-- notification before this migration). A constant default: PostgreSQL
-- adds the column without rewriting the table.
ALTER TABLE notifications ADD COLUMN template_version integer NOT NULL DEFAULT 0;
