-- The console's dead letters by filter (issue 34 item 3,
-- docs/PERFORMANCE.md "The console on 10 million notifications"). With
-- only deliveries_dead_letters (state, id), a filter on an error code,
-- channel or type walked every dead letter newest first and read each
-- one's row to test it: a code no dead letter has read all of them (7 s
-- for 330,000 dead letters on our machine); a time range read every dead
-- letter newer than its end.
--
-- One index per filter column, each carrying the other filter columns,
-- so that ListDeliveries' id query (store/postgres/deliveries.go) is an
-- index-only scan whatever the filter combination: its first matching
-- ids without reading a row. Like deliveries_dead_letters they hold only
-- dead and unknown deliveries, so a claim or a sent outcome — the hot
-- path — never writes them; a delivery writes them once, when it dies,
-- and once more if a replay fails it again.
CREATE INDEX deliveries_dead_letters_code ON deliveries (state, last_error_code, id)
	INCLUDE (channel, type, created_at) WHERE state IN ('dead', 'unknown');
CREATE INDEX deliveries_dead_letters_channel ON deliveries (state, channel, id)
	INCLUDE (last_error_code, type, created_at) WHERE state IN ('dead', 'unknown');
CREATE INDEX deliveries_dead_letters_type ON deliveries (state, type, id)
	INCLUDE (last_error_code, channel, created_at) WHERE state IN ('dead', 'unknown');
CREATE INDEX deliveries_dead_letters_created ON deliveries (state, created_at)
	INCLUDE (id, last_error_code, channel, type) WHERE state IN ('dead', 'unknown');
