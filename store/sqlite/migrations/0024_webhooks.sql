-- Outbound webhooks (issue 35 item 4; docs/ARCHITECTURE.md, "Outbound
-- webhooks"). An endpoint's events are space-separated type names (empty:
-- every type), as API key scopes are. Its secrets are kept as given: they
-- sign (HMAC), so they cannot be hashed. Times are Unix microseconds.
CREATE TABLE webhook_endpoints (
	id              TEXT PRIMARY KEY,
	url             TEXT NOT NULL,
	description     TEXT NOT NULL DEFAULT '',
	events          TEXT NOT NULL DEFAULT '',
	enabled         INTEGER NOT NULL DEFAULT 1,
	disabled_reason TEXT NOT NULL DEFAULT '',
	failing_since   INTEGER,
	secret          TEXT NOT NULL,
	previous_secret TEXT NOT NULL DEFAULT '',
	previous_until  INTEGER,
	created_at      INTEGER NOT NULL,
	updated_at      INTEGER NOT NULL
);

-- One row per event and endpoint, written in the transaction of the change
-- it reports (store/rules/webhooks.go). A leased message's run_at is its
-- lease's end, so one index finds both the due and the abandoned ones.
CREATE TABLE webhook_messages (
	seq          INTEGER PRIMARY KEY AUTOINCREMENT,
	endpoint_id  TEXT NOT NULL REFERENCES webhook_endpoints (id) ON DELETE CASCADE,
	event_id     TEXT NOT NULL,
	type         TEXT NOT NULL,
	ordering_key TEXT NOT NULL,
	payload      TEXT NOT NULL,
	state        TEXT NOT NULL CHECK (state IN ('pending', 'leased', 'sent', 'dead')),
	attempt      INTEGER NOT NULL DEFAULT 0,
	run_at       INTEGER NOT NULL,
	lease_owner  TEXT NOT NULL DEFAULT '',
	lease_until  INTEGER,
	occurred_at  INTEGER NOT NULL,
	first_at     INTEGER NOT NULL,
	last_status  INTEGER NOT NULL DEFAULT 0,
	last_error   TEXT NOT NULL DEFAULT '',
	finished_at  INTEGER
);
CREATE INDEX webhook_messages_due ON webhook_messages (run_at, seq) WHERE state IN ('pending', 'leased');
CREATE INDEX webhook_messages_order ON webhook_messages (endpoint_id, ordering_key, seq) WHERE state IN ('pending', 'leased');
CREATE INDEX webhook_messages_endpoint ON webhook_messages (endpoint_id, state, seq);
-- The finished messages by when they finished, for retention's pruning.
CREATE INDEX webhook_messages_finished ON webhook_messages (finished_at) WHERE state IN ('sent', 'dead');
