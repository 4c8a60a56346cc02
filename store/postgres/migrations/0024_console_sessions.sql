-- Operator console sessions (issue 34 item 1), column for column the same
-- as SQLite's 0018: only the SHA-256 of a session token is stored, never
-- the token, so a database dump cannot sign anyone in. key_id is the API
-- key the operator signed in with; it is checked again on every use, so
-- revoking the key ends the session. No index beyond the keys: the table
-- holds the sessions of one lifetime (a few per operator), it is pruned
-- at each sign-in, and a touch of last_seen_at should not maintain an
-- index.
CREATE TABLE console_sessions (
	id              text PRIMARY KEY,
	token_hash      text NOT NULL UNIQUE,
	key_id          text NOT NULL,
	key_fingerprint text NOT NULL,
	created_at      timestamptz NOT NULL,
	last_seen_at    timestamptz NOT NULL,
	expires_at      timestamptz NOT NULL
);
