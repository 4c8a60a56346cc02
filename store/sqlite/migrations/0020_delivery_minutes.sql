-- The delivery rollup (issue 34 item 3): how many deliveries each
-- instance's dispatcher sent and failed per minute, channel and error code,
-- added to once per flush from what it counted in memory — never a write
-- per delivery — and read by the console's overview instead of counting
-- the deliveries or their attempts. minute is Unix microseconds, as every
-- time here. Column for column the same as PostgreSQL's 0026.
CREATE TABLE delivery_minutes (
	minute     INTEGER NOT NULL,
	instance   TEXT    NOT NULL,
	channel    TEXT    NOT NULL,
	outcome    TEXT    NOT NULL,
	error_code TEXT    NOT NULL DEFAULT '',
	count      INTEGER NOT NULL,
	PRIMARY KEY (minute, instance, channel, outcome, error_code)
) WITHOUT ROWID;

-- The overview counts the dead events not replayed yet through this
-- index, stopping at its cap, instead of reading the replayed ones too.
CREATE INDEX dead_events_not_replayed ON dead_events (id) WHERE replayed_at IS NULL;
