-- What produced a notification other than a direct trigger — a reminder's
-- occurrence, a campaign's run, a rule's event (issue 19 item 8, S2.7;
-- issue 20, S3.12): heraldtype.Source as JSON text, NULL for a plain
-- trigger. Column for column the same as PostgreSQL's 0014.
ALTER TABLE notifications ADD COLUMN source TEXT;
