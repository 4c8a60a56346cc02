-- Outbound webhooks (issue 35 item 4; docs/ARCHITECTURE.md, "Outbound
-- webhooks"). An endpoint's events are space-separated type names (empty:
-- every type), as API key scopes are. Its secrets are kept as given: they
-- sign (HMAC), so they cannot be hashed.
CREATE TABLE webhook_endpoints (
	id              text PRIMARY KEY,
	url             text NOT NULL,
	description     text NOT NULL DEFAULT '',
	events          text NOT NULL DEFAULT '',
	enabled         boolean NOT NULL DEFAULT true,
	disabled_reason text NOT NULL DEFAULT '',
	failing_since   timestamptz,
	secret          text NOT NULL,
	previous_secret text NOT NULL DEFAULT '',
	previous_until  timestamptz,
	created_at      timestamptz NOT NULL,
	updated_at      timestamptz NOT NULL
);

-- One row per event and endpoint, written in the transaction of the change
-- it reports (store/rules/webhooks.go). A leased message's run_at is its
-- lease's end, so one index finds both the due and the abandoned ones.
CREATE TABLE webhook_messages (
	seq          bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
	endpoint_id  text NOT NULL REFERENCES webhook_endpoints (id) ON DELETE CASCADE,
	event_id     text NOT NULL,
	type         text NOT NULL,
	ordering_key text NOT NULL,
	payload      text NOT NULL,
	state        text NOT NULL CHECK (state IN ('pending', 'leased', 'sent', 'dead')),
	attempt      integer NOT NULL DEFAULT 0,
	run_at       timestamptz NOT NULL,
	lease_owner  text NOT NULL DEFAULT '',
	lease_until  timestamptz,
	occurred_at  timestamptz NOT NULL,
	first_at     timestamptz NOT NULL,
	last_status  integer NOT NULL DEFAULT 0,
	last_error   text NOT NULL DEFAULT '',
	finished_at  timestamptz
);
-- The claim walks the due messages in run_at order ...
CREATE INDEX webhook_messages_due ON webhook_messages (run_at, seq) WHERE state IN ('pending', 'leased');
-- ... and skips one with an earlier unfinished message of its endpoint and
-- ordering key (in order per notification).
CREATE INDEX webhook_messages_order ON webhook_messages (endpoint_id, ordering_key, seq) WHERE state IN ('pending', 'leased');
-- An endpoint's messages by state, newest first (the dead letter list).
CREATE INDEX webhook_messages_endpoint ON webhook_messages (endpoint_id, state, seq);
-- The finished messages by when they finished, for retention's pruning.
CREATE INDEX webhook_messages_finished ON webhook_messages (finished_at) WHERE state IN ('sent', 'dead');
