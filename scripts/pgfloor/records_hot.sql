-- records.sql's work with the queue apart from the delivery record
-- (schema.sql): the enqueue writes both, the claim leases the narrow queue
-- row and reads the record and its notification back, the outcome deletes
-- the queue row and updates the record (HOT) in one statement.
\set k random(1, 1000000000)
BEGIN;
INSERT INTO herald_floor.notifications
	SELECT :k || '-' || g, 'user-' || g, 'Order shipped', 'Your order is on its way', '{"orderId": "42"}', now()
	FROM generate_series(1, 100) g;
WITH d AS (INSERT INTO herald_floor.deliveries2 (notification_id, token, state)
	SELECT :k || '-' || g, 'token-' || g || repeat('x', 140), 'pending' FROM generate_series(1, 100) g RETURNING id)
INSERT INTO herald_floor.queue2 (delivery_id, run_at) SELECT id, now() FROM d;
COMMIT;
WITH c AS (
	UPDATE herald_floor.queue2 SET owner = 'w', lease_until = now() + interval '30 s'
	WHERE delivery_id IN (SELECT delivery_id FROM herald_floor.queue2 WHERE lease_until IS NULL AND run_at <= now()
		ORDER BY run_at, delivery_id LIMIT 100 FOR UPDATE SKIP LOCKED)
	RETURNING delivery_id)
SELECT quote_literal(coalesce(array_agg(c.delivery_id)::text, '{}')) AS ids
	FROM c JOIN herald_floor.deliveries2 d ON d.id = c.delivery_id JOIN herald_floor.notifications n ON n.id = d.notification_id \gset
WITH q AS (DELETE FROM herald_floor.queue2 WHERE delivery_id = ANY (:ids::bigint[]) AND owner = 'w' RETURNING delivery_id)
UPDATE herald_floor.deliveries2 d SET state = 'sent', attempt = d.attempt + 1, finished_at = now() FROM q WHERE d.id = q.delivery_id;
