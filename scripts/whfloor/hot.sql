INSERT INTO whfloor.hot (endpoint_id, event_id, type, ordering_key, payload, state, run_at, occurred_at, first_at)
SELECT 'wh', 'evt_d' || g || 'r0', 'delivery.finished', 'n-' || g || '-' || random(),
  '{"delivery_id":' || g || ',"notification_id":"01JABCDEFGHJKMNPQRSTVWXYZ","user_id":"user-1234","notification_type":"order_shipped","channel":"push","state":"sent","attempt":1,"error_code":""}',
  'pending', now(), now(), now() FROM generate_series(1, 100) g;
WITH c AS (
	SELECT m.seq FROM whfloor.hot m
	WHERE m.finished_at IS NULL AND m.run_at <= now() AND (m.lease_until IS NULL OR m.lease_until < now())
		AND NOT EXISTS (SELECT 1 FROM whfloor.hot p WHERE p.endpoint_id = m.endpoint_id
			AND p.ordering_key = m.ordering_key AND p.seq < m.seq AND p.finished_at IS NULL)
	ORDER BY m.run_at, m.seq LIMIT 100
	FOR UPDATE OF m SKIP LOCKED
), u AS (
UPDATE whfloor.hot m SET lease_owner = 'w1', lease_until = now() + interval '30 s', attempt = m.attempt + 1
FROM c WHERE m.seq = c.seq
RETURNING m.seq, m.payload, m.event_id)
SELECT coalesce(string_agg(seq::text, ','), '0') AS seqs FROM u \gset
UPDATE whfloor.hot w SET state = 'sent', lease_owner = '', lease_until = NULL, last_status = 204,
		last_error = '', finished_at = now()
	WHERE w.seq IN (:seqs) AND w.finished_at IS NULL AND w.lease_owner = 'w1';
