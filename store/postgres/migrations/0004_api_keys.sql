-- Server API keys (security), version for version the same as SQLite's:
-- only the SHA-256 of a key is stored, never the key. id is the public
-- part of the key string (hk_<id>_<secret>), so a key is found by primary
-- key and its hash compared in constant time. Revoked keys stay, with
-- revoked_at, so the list shows what once had access.
CREATE TABLE api_keys (
	id         text PRIMARY KEY,
	name       text NOT NULL,
	hash       text NOT NULL,
	scopes     text NOT NULL,
	created_at timestamptz NOT NULL,
	revoked_at timestamptz
);
