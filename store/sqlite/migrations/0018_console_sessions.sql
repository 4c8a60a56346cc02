-- Operator console sessions (issue 34 item 1): only the SHA-256 of a
-- session token is stored, never the token, so a database dump cannot
-- sign anyone in. key_id is the API key the operator signed in with; it
-- is checked again on every use, so revoking the key ends the session.
-- No index beyond the keys: the table holds the sessions of one lifetime
-- (a few per operator), it is pruned at each sign-in, and a touch of
-- last_seen_at should not maintain an index.
CREATE TABLE console_sessions (
	id              TEXT PRIMARY KEY,
	token_hash      TEXT NOT NULL UNIQUE,
	key_id          TEXT NOT NULL,
	key_fingerprint TEXT NOT NULL,
	created_at      INTEGER NOT NULL,
	last_seen_at    INTEGER NOT NULL,
	expires_at      INTEGER NOT NULL
) STRICT;
