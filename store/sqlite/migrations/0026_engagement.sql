-- Engagement counters (issue 35 item 3), column for column the same as
-- PostgreSQL's 0033 (see there): per hour (bucket, in microseconds since
-- the epoch, UTC), type, channel and source, the deliveries sent and the
-- receipts recorded by event. A row trigger on delivery_attempts keeps
-- them in the transaction of every statement that writes a sent or
-- receipt attempt row; one writer at a time needs one shard (0).
CREATE TABLE engagement_counts (
	bucket      INTEGER NOT NULL,
	type        TEXT NOT NULL,
	channel     TEXT NOT NULL,
	source_kind TEXT NOT NULL,
	source_name TEXT NOT NULL,
	event       TEXT NOT NULL,
	shard       INTEGER NOT NULL,
	n           INTEGER NOT NULL,
	PRIMARY KEY (bucket, type, channel, source_kind, source_name, event, shard)
) STRICT, WITHOUT ROWID;

CREATE TRIGGER delivery_attempts_engagement AFTER INSERT ON delivery_attempts
WHEN NEW.outcome IN ('sent', 'receipt')
BEGIN
	INSERT INTO engagement_counts (bucket, type, channel, source_kind, source_name, event, shard, n)
	SELECT NEW.at - NEW.at % 3600000000, d.type, d.channel,
		coalesce(json_extract(x.source, '$.kind'), ''), coalesce(json_extract(x.source, '$.name'), ''),
		CASE NEW.outcome WHEN 'sent' THEN 'sent' ELSE NEW.error_code END, 0, 1
	FROM deliveries d JOIN notifications x ON x.id = d.notification_id
	WHERE d.id = NEW.delivery_id
	ON CONFLICT (bucket, type, channel, source_kind, source_name, event, shard) DO UPDATE SET n = n + 1;
END;
