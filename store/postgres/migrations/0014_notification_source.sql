-- What produced a notification other than a direct trigger — a reminder's
-- occurrence, a campaign's run, a rule's event (issue 19 item 8, S2.7;
-- issue 20, S3.12): heraldtype.Source as JSON, NULL for a plain trigger.
-- Adding a nullable column without a default rewrites nothing.
ALTER TABLE notifications ADD COLUMN source jsonb;
