-- Named cluster locks (S3.7): leader election is a lock renewed before it
-- runs out, and scheduled jobs take one ShedLock-style (lock-at-most is
-- locked_until at TryLock, lock-at-least is locked_until at Unlock). A
-- lock is free when locked_until <= now; rows are never deleted, so a
-- name's last holder stays visible to operators.
CREATE TABLE cluster_locks (
	name         TEXT PRIMARY KEY,
	owner        TEXT NOT NULL,
	locked_at    INTEGER NOT NULL,
	locked_until INTEGER NOT NULL
) STRICT;

-- Retention (PruneFinished) walks notifications oldest first.
CREATE INDEX notifications_created_at ON notifications (created_at, id);
