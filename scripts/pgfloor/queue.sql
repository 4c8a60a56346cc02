-- One pgbench transaction = 100 jobs through the whole life of a durable
-- queue: enqueued (committed before the trigger is answered, S4.1), leased
-- in a committed claim before the send (S1.2), then completed.
INSERT INTO herald_floor.jobs (run_at, state, payload)
	SELECT now(), 'pending', 'token-' || g || repeat('x', 150) FROM generate_series(1, 100) g;
WITH c AS (
	UPDATE herald_floor.jobs SET state = 'leased', owner = 'w', attempt = attempt + 1,
		lease_until = now() + interval '30 s'
	WHERE id IN (SELECT id FROM herald_floor.jobs WHERE state = 'pending' AND run_at <= now()
		ORDER BY run_at, id LIMIT 100 FOR UPDATE SKIP LOCKED)
	RETURNING id, payload)
SELECT quote_literal(coalesce(array_agg(id)::text, '{}')) AS ids FROM c \gset
UPDATE herald_floor.jobs SET state = 'sent', owner = '', lease_until = NULL
	WHERE id = ANY (:ids::bigint[]) AND state = 'leased' AND owner = 'w';
