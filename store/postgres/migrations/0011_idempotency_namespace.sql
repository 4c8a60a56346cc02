-- Idempotency keys belong to their caller (issue 23): a key is unique per
-- namespace (the HTTP API's is the calling API key's id), so one caller
-- can neither learn of, replay nor block another's key. Records written
-- before keep working in the default namespace ''.
ALTER TABLE triggers ADD COLUMN namespace text NOT NULL DEFAULT '';
ALTER TABLE triggers DROP CONSTRAINT triggers_pkey;
ALTER TABLE triggers ADD PRIMARY KEY (namespace, idempotency_key);
