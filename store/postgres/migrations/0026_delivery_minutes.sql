-- The delivery rollup (issue 34 item 3): how many deliveries each
-- instance's dispatcher sent and failed per minute, channel and error code,
-- added to once per flush from what it counted in memory — never a write
-- per delivery — and read, summed over the instances, by the console's
-- overview instead of counting the deliveries or their attempts. The
-- leader prunes rows older than delivery_rollup.retention. Column for
-- column the same as SQLite's 0020.
CREATE TABLE delivery_minutes (
	minute     timestamptz NOT NULL,
	instance   text        NOT NULL,
	channel    text        NOT NULL,
	outcome    text        NOT NULL,
	error_code text        NOT NULL DEFAULT '',
	count      bigint      NOT NULL,
	PRIMARY KEY (minute, instance, channel, outcome, error_code)
);

-- The overview counts the dead events not replayed yet through this
-- index, stopping at its cap, instead of reading the replayed ones too.
CREATE INDEX dead_events_not_replayed ON dead_events (id) WHERE replayed_at IS NULL;
