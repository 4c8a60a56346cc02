INSERT INTO whfloor.webhook_events (endpoint_id, event_id, type, ordering_key, payload, occurred_at)
SELECT 'wh', 'evt_d' || g || 'r0', 'delivery.finished', 'n-' || g || '-' || random(),
  '{"delivery_id":' || g || ',"notification_id":"01JABCDEFGHJKMNPQRSTVWXYZ","user_id":"user-1234","notification_type":"order_shipped","channel":"push","state":"sent","attempt":1,"error_code":""}',
  now() FROM generate_series(1, 100) g;
WITH c AS (SELECT txid, seq FROM whfloor.cursors WHERE endpoint_id = 'wh'),
b AS (
	SELECT e.txid, e.seq, e.payload, e.event_id, e.ordering_key FROM whfloor.webhook_events e, c
	WHERE e.endpoint_id = 'wh' AND (e.txid, e.seq) > (c.txid, c.seq) AND e.txid < pg_snapshot_xmin(pg_current_snapshot())
	ORDER BY e.txid, e.seq LIMIT 100
), h AS (
	SELECT count(*) AS held FROM whfloor.webhook_messages m WHERE m.endpoint_id = 'wh'
		AND m.ordering_key IN (SELECT ordering_key FROM b) AND m.state IN ('pending', 'leased')
)
SELECT coalesce((SELECT txid FROM b ORDER BY txid DESC, seq DESC LIMIT 1)::text, '0') AS t,
	coalesce((SELECT seq FROM b ORDER BY txid DESC, seq DESC LIMIT 1), 0) AS s,
	(SELECT held FROM h) AS held, (SELECT sum(length(payload)) FROM b) AS bytes \gset
UPDATE whfloor.cursors SET txid = ':t', seq = :s WHERE endpoint_id = 'wh' AND :s > 0;
