-- records.sql's work with no queue (schema.sql, deliveries3): the enqueue
-- writes the records into the client's shard; the claim leases the
-- shard's cursor and reads the page past it with each delivery's
-- notification; the outcome updates the records (HOT) and advances the
-- cursor in one statement. One shard per client: schema.sql makes 64, so
-- run it with at most 64 clients (a client past them would find no cursor
-- and send nothing).
\set k random(1, 1000000000)
\set shard :client_id
BEGIN;
INSERT INTO herald_floor.notifications
	SELECT :k || '-' || g, 'user-' || g, 'Order shipped', 'Your order is on its way', '{"orderId": "42"}', now()
	FROM generate_series(1, 100) g;
INSERT INTO herald_floor.deliveries3 (shard, notification_id, token, run_at, state)
	SELECT :shard, :k || '-' || g, 'token-' || g || repeat('x', 140), now(), 'pending' FROM generate_series(1, 100) g;
COMMIT;
WITH l AS (
	UPDATE herald_floor.cursors3 SET owner = 'w', lease_until = now() + interval '30 s'
	WHERE shard = :shard RETURNING txid, id
), p AS (
	SELECT d.* FROM l, LATERAL (
		SELECT d.txid, d.id, d.notification_id, d.token FROM herald_floor.deliveries3 d
		WHERE d.shard = :shard AND (d.txid, d.id) > (l.txid, l.id) AND d.txid < pg_snapshot_xmin(pg_current_snapshot())
		ORDER BY d.txid, d.id LIMIT 100) d
), r AS (
	SELECT p.txid, p.id FROM p JOIN herald_floor.notifications n ON n.id = p.notification_id
)
SELECT quote_literal(coalesce(array_agg(r.id)::text, '{}')) AS ids,
	coalesce((SELECT txid FROM p ORDER BY txid DESC, id DESC LIMIT 1)::text, '0') AS t,
	coalesce((SELECT id FROM p ORDER BY txid DESC, id DESC LIMIT 1), 0) AS s FROM r \gset
WITH o AS (
	UPDATE herald_floor.deliveries3 SET state = 'sent', attempt = attempt + 1, finished_at = now()
	WHERE id = ANY (:ids::bigint[]) AND state = 'pending' RETURNING id
)
UPDATE herald_floor.cursors3 SET txid = CASE WHEN :s > 0 THEN ':t'::xid8 ELSE txid END,
	id = CASE WHEN :s > 0 THEN :s ELSE id END, owner = '', lease_until = NULL
	WHERE shard = :shard AND owner = 'w';
