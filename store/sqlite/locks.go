package sqlite

import (
	"context"
	"time"

	"github.com/heraldhq/herald/store"
)

// TryLock implements store.Store with one upsert: the row is inserted if
// the name is new, and taken over only if the lock is free or already
// owner's; RETURNING yields a row exactly when owner holds the lock
// afterwards. locked_at is the start of the holding: a renewal by the
// holder keeps it, a takeover (or a holder's re-take after expiry) sets
// it to now.
func (s *Store) TryLock(ctx context.Context, name, owner string, now, until time.Time) (bool, error) {
	if err := store.CheckTryLock(name, owner, now, until); err != nil {
		return false, err
	}
	held := false
	err := s.inTx(ctx, func(tx *writeTx) error {
		rows, err := s.query(ctx, tx, `INSERT INTO cluster_locks (name, owner, locked_at, locked_until)
VALUES (?1, ?2, ?3, ?4)
ON CONFLICT (name) DO UPDATE SET owner = excluded.owner, locked_until = excluded.locked_until,
	locked_at = CASE WHEN cluster_locks.owner = excluded.owner AND cluster_locks.locked_until > ?3
		THEN cluster_locks.locked_at ELSE excluded.locked_at END
WHERE cluster_locks.locked_until <= ?3 OR cluster_locks.owner = ?2
RETURNING 1`, name, owner, micros(now), micros(until))
		if err != nil {
			return formatError(err, "lock "+quote(name))
		}
		defer rows.Close()
		held = rows.Next()
		return formatError(rows.Err(), "lock "+quote(name))
	})
	return held, err
}

// Unlock implements store.Store.
func (s *Store) Unlock(ctx context.Context, name, owner string, until time.Time) error {
	if err := store.CheckUnlock(name, owner); err != nil {
		return err
	}
	return s.inTx(ctx, func(tx *writeTx) error {
		_, err := s.exec(ctx, tx, `UPDATE cluster_locks SET locked_until = ? WHERE name = ? AND owner = ?`,
			micros(until), name, owner)
		return formatError(err, "lock "+quote(name))
	})
}

// PruneFinished implements store.Store. One DELETE picks the oldest
// notifications whose deliveries are all final (none pending or leased;
// a notification without deliveries qualifies) and the foreign keys
// cascade to their deliveries and attempt rows.
func (s *Store) PruneFinished(ctx context.Context, cutoff time.Time, limit int) (int, error) {
	if err := store.CheckPruneFinished(limit); err != nil {
		return 0, err
	}
	var n int
	err := s.inTx(ctx, func(tx *writeTx) error {
		res, err := s.exec(ctx, tx, `DELETE FROM notifications WHERE id IN (
	SELECT id FROM notifications AS n INDEXED BY notifications_created_at WHERE created_at < ?
		AND NOT EXISTS (SELECT 1 FROM deliveries d WHERE d.notification_id = n.id AND d.state IN ('pending', 'leased'))
	ORDER BY created_at, id LIMIT ?)`, micros(cutoff), limit)
		n, err = affected(res, err, "notifications")
		return err
	})
	return n, err
}
