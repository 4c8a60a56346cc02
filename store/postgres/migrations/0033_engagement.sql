-- Engagement counters (issue 35 item 3): per hour (UTC), type, channel and
-- source (a rule's or campaign's or reminder's name; '' for a plain
-- trigger), how many deliveries were sent and how many receipts of each
-- event (delivered, opened, clicked, dismissed; the inbox's seen, read,
-- archived) were recorded. Column for column the same as SQLite's 0026.
-- The engagement report (GET /v1/engagement) sums these rows over a time
-- range; it never scans the deliveries, and the counts outlive the
-- deliveries' retention (engagement_retention prunes them).
--
-- The counts are kept by a statement trigger on delivery_attempts, in the
-- transaction of the statement that writes the attempt rows: every path
-- that records a send (the outcome batch, the inbox at enqueue and when
-- due) or a receipt (the receipts route, the inbox read-state, e-mail
-- opens and clicks) counts it, atomically, and a path added later cannot
-- forget to. A receipt counts once: its row is written once
-- (delivery_attempts_receipt), and a repeated one inserts nothing.
--
-- shard spreads one hour's counts of a type over 8 rows by the backend's
-- process id, so the outcome batches of concurrent workers do not queue
-- on one row's lock until each other's COMMIT; rows are upserted in key
-- order, so two transactions cannot deadlock on them.
CREATE TABLE engagement_counts (
	bucket      timestamptz NOT NULL,
	type        text NOT NULL,
	channel     text NOT NULL,
	source_kind text NOT NULL,
	source_name text NOT NULL,
	event       text NOT NULL,
	shard       smallint NOT NULL,
	n           bigint NOT NULL,
	PRIMARY KEY (bucket, type, channel, source_kind, source_name, event, shard)
);

CREATE FUNCTION count_engagement() RETURNS trigger LANGUAGE plpgsql
SET search_path FROM CURRENT AS $$
BEGIN
	INSERT INTO engagement_counts AS c (bucket, type, channel, source_kind, source_name, event, shard, n)
	SELECT date_trunc('hour', a.at AT TIME ZONE 'UTC') AT TIME ZONE 'UTC', d.type, d.channel,
		coalesce(x.source ->> 'kind', ''), coalesce(x.source ->> 'name', ''),
		CASE a.outcome WHEN 'sent' THEN 'sent' ELSE a.error_code END, pg_backend_pid() % 8, count(*)
	FROM new_attempts a
	JOIN deliveries d ON d.id = a.delivery_id
	JOIN notifications x ON x.id = d.notification_id
	WHERE a.outcome IN ('sent', 'receipt')
	GROUP BY 1, 2, 3, 4, 5, 6 ORDER BY 1, 2, 3, 4, 5, 6
	ON CONFLICT (bucket, type, channel, source_kind, source_name, event, shard) DO UPDATE SET n = c.n + excluded.n;
	RETURN NULL;
END
$$;

CREATE TRIGGER delivery_attempts_engagement AFTER INSERT ON delivery_attempts
	REFERENCING NEW TABLE AS new_attempts
	FOR EACH STATEMENT EXECUTE FUNCTION count_engagement();
