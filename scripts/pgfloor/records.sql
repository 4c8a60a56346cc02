-- queue.sql plus the records the mission keeps: 100 recipients' notifications
-- and their deliveries in one enqueue transaction, a claim that reads each
-- delivery's notification back, and an outcome with its finish time.
\set k random(1, 1000000000)
BEGIN;
INSERT INTO herald_floor.notifications
	SELECT :k || '-' || g, 'user-' || g, 'Order shipped', 'Your order is on its way', '{"orderId": "42"}', now()
	FROM generate_series(1, 100) g;
INSERT INTO herald_floor.deliveries (notification_id, token, run_at, state)
	SELECT :k || '-' || g, 'token-' || g || repeat('x', 140), now(), 'pending' FROM generate_series(1, 100) g;
COMMIT;
WITH c AS (
	UPDATE herald_floor.deliveries SET state = 'leased', owner = 'w', attempt = attempt + 1,
		lease_until = now() + interval '30 s'
	WHERE id IN (SELECT id FROM herald_floor.deliveries WHERE state = 'pending' AND run_at <= now()
		ORDER BY run_at, id LIMIT 100 FOR UPDATE SKIP LOCKED)
	RETURNING id, notification_id, token)
SELECT quote_literal(coalesce(array_agg(c.id)::text, '{}')) AS ids
	FROM c JOIN herald_floor.notifications n ON n.id = c.notification_id \gset
UPDATE herald_floor.deliveries SET state = 'sent', owner = '', lease_until = NULL, finished_at = now()
	WHERE id = ANY (:ids::bigint[]) AND state = 'leased' AND owner = 'w';
