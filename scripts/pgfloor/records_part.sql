-- records.sql's work on the rotated tables (schema.sql, notifications4 and
-- deliveries4): the same enqueue, claim and outcome, through the
-- partitioned parents. The delivery carries its notification's creation
-- time, so the claim's read of the notification names its partition.
\set k random(1, 1000000000)
BEGIN;
INSERT INTO herald_floor.notifications4
	SELECT :k || '-' || g, 'user-' || g, 'Order shipped', 'Your order is on its way', '{"orderId": "42"}', now()
	FROM generate_series(1, 100) g;
INSERT INTO herald_floor.deliveries4 (notification_id, notification_at, token, run_at, state)
	SELECT :k || '-' || g, now(), 'token-' || g || repeat('x', 140), now(), 'pending' FROM generate_series(1, 100) g;
COMMIT;
WITH c AS (
	UPDATE herald_floor.deliveries4 SET state = 'leased', owner = 'w', attempt = attempt + 1,
		lease_until = now() + interval '30 s'
	WHERE id IN (SELECT id FROM herald_floor.deliveries4 WHERE state = 'pending' AND run_at <= now()
		ORDER BY run_at, id LIMIT 100 FOR UPDATE SKIP LOCKED)
	RETURNING id, notification_id, notification_at, token)
SELECT quote_literal(coalesce(array_agg(c.id)::text, '{}')) AS ids
	FROM c JOIN herald_floor.notifications4 n ON n.id = c.notification_id AND n.created_at = c.notification_at \gset
UPDATE herald_floor.deliveries4 SET state = 'sent', owner = '', lease_until = NULL, finished_at = now()
	WHERE id = ANY (:ids::bigint[]) AND state = 'leased' AND owner = 'w';
