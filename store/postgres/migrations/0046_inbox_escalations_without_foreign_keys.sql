-- Inbox items and escalation steps lose their foreign keys to
-- notifications, as the deliveries and attempt rows did in 0007. A
-- foreign key is a trigger per row at both ends: each inbox item written
-- looked its notification up and locked its row (FOR KEY SHARE: a write
-- to the notification's page), and each pruned notification ran two
-- cascade triggers, a lookup each. Without them the pruner spends a median
-- 14 µs per delivery instead of 24, an inbox item's insert 14.5 instead of
-- 18 (docs/PERFORMANCE.md, session 22).
-- Herald writes both rows only from a notification it reads in the same
-- statement or writes in the same transaction, and retention
-- (PruneFinished) deletes them with their notification itself.
ALTER TABLE inbox_items DROP CONSTRAINT inbox_items_notification_id_fkey;
ALTER TABLE escalations DROP CONSTRAINT escalations_notification_id_fkey;

-- A user deleted out of band (0019) took their notifications, and through
-- these foreign keys the notifications' inbox items and escalation steps;
-- the statement trigger now deletes those itself, and the notifications'
-- deliveries and attempt rows, which it had left behind since 0007 (a
-- pending delivery without its notification was leased by a claim, and
-- again after each lease ran out, but never returned as a job).
CREATE OR REPLACE FUNCTION delete_users_notifications() RETURNS trigger LANGUAGE plpgsql
SET search_path FROM CURRENT AS $$
BEGIN
	WITH n AS (
		DELETE FROM notifications n USING deleted_users d WHERE n.user_id = d.id RETURNING n.id
	), i AS (
		DELETE FROM inbox_items i USING n WHERE i.notification_id = n.id
	), e AS (
		DELETE FROM escalations e USING n WHERE e.notification_id = n.id
	), d AS (
		DELETE FROM deliveries d USING n WHERE d.notification_id = n.id RETURNING d.id
	)
	DELETE FROM delivery_attempts a USING d WHERE a.delivery_id = d.id;
	RETURN NULL;
END
$$;
