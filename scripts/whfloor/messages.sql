INSERT INTO whfloor.webhook_messages (endpoint_id, event_id, type, ordering_key, payload, state, run_at, occurred_at, first_at)
SELECT 'wh', 'evt_d' || g || 'r0', 'delivery.finished', 'n-' || g || '-' || random(),
  '{"delivery_id":' || g || ',"notification_id":"01JABCDEFGHJKMNPQRSTVWXYZ","user_id":"user-1234","notification_type":"order_shipped","channel":"push","state":"sent","attempt":1,"error_code":""}',
  'pending', now(), now(), now() FROM generate_series(1, 100) g;
WITH c AS (
	SELECT m.seq FROM whfloor.webhook_messages m
	WHERE m.state IN ('pending', 'leased') AND m.run_at <= now()
		AND NOT EXISTS (SELECT 1 FROM whfloor.webhook_messages p WHERE p.endpoint_id = m.endpoint_id
			AND p.ordering_key = m.ordering_key AND p.seq < m.seq AND p.state IN ('pending', 'leased'))
	ORDER BY m.run_at, m.seq LIMIT 100
	FOR UPDATE OF m SKIP LOCKED
), u AS (
UPDATE whfloor.webhook_messages m SET state = 'leased', lease_owner = 'w1', lease_until = now() + interval '30 s', run_at = now() + interval '30 s',
	attempt = m.attempt + 1
FROM c WHERE m.seq = c.seq
RETURNING m.seq, m.payload, m.event_id)
SELECT coalesce(string_agg(seq::text, ','), '0') AS seqs FROM u \gset
UPDATE whfloor.webhook_messages w SET state = 'sent', lease_owner = '', lease_until = NULL, last_status = 204,
		last_error = '', finished_at = now()
	WHERE w.seq IN (:seqs) AND w.state = 'leased' AND w.lease_owner = 'w1';
