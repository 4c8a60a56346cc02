-- Server API keys (security): only the SHA-256 of a key is stored, never
-- the key. id is the public part of the key string (hk_<id>_<secret>), so
-- a key is found by primary key and its hash compared in constant time.
-- Revoked keys stay, with revoked_at, so the list shows what once had
-- access.
CREATE TABLE api_keys (
	id         TEXT PRIMARY KEY,
	name       TEXT NOT NULL,
	hash       TEXT NOT NULL,
	scopes     TEXT NOT NULL,
	created_at INTEGER NOT NULL,
	revoked_at INTEGER
) STRICT;
