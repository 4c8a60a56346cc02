package postgres

import (
	"context"
	"time"

	"github.com/heraldhq/herald/store"
	"github.com/jackc/pgx/v5"
)

// TryLock implements store.Store with one upsert: the row is inserted if
// the name is new, and taken over only if the lock is free or already
// owner's; RETURNING yields a row exactly when owner holds the lock
// afterwards. Concurrent callers are ordered by the primary key: the
// losers of the insert race find the winner's row and its locked_until.
// locked_at is the start of the holding: a renewal keeps it, a takeover
// sets it to now.
func (s *Store) TryLock(ctx context.Context, name, owner string, now, until time.Time) (bool, error) {
	if err := store.CheckTryLock(name, owner, now, until); err != nil {
		return false, err
	}
	rows, err := s.pool.Query(ctx, s.q(`INSERT INTO {s}.cluster_locks AS l (name, owner, locked_at, locked_until)
VALUES ($1, $2, $3, $4)
ON CONFLICT (name) DO UPDATE SET owner = excluded.owner, locked_until = excluded.locked_until,
	locked_at = CASE WHEN l.owner = excluded.owner AND l.locked_until > $3 THEN l.locked_at ELSE excluded.locked_at END
WHERE l.locked_until <= $3 OR l.owner = $2
RETURNING 1`), name, owner, now, until)
	if err != nil {
		return false, formatError(err, "lock "+quote(name))
	}
	got, err := pgx.CollectRows(rows, pgx.RowTo[int32])
	if err != nil {
		return false, formatError(err, "lock "+quote(name))
	}
	return len(got) == 1, nil
}

// Unlock implements store.Store.
func (s *Store) Unlock(ctx context.Context, name, owner string, until time.Time) error {
	if err := store.CheckUnlock(name, owner); err != nil {
		return err
	}
	_, err := s.pool.Exec(ctx, s.q(`UPDATE {s}.cluster_locks SET locked_until = $1 WHERE name = $2 AND owner = $3`),
		until, name, owner)
	return formatError(err, "lock "+quote(name))
}

// PruneFinished implements store.Store. One statement picks the oldest
// notifications whose deliveries are all final (none pending or leased;
// a notification without deliveries qualifies) and deletes them with
// their deliveries, attempt rows, inbox items and escalation steps (none
// has a foreign key to cascade from: migrations 0007 and 0046). SKIP LOCKED
// leaves a notification whose deliveries a concurrent statement is
// changing for the next round. It runs under indexPlans: each step is
// driven by at most limit rows, so an index probe per row is always
// right, and on statistics that had not caught up with the attempt rows
// PostgreSQL merge-joined them instead, sorting the whole attempts table
// for every batch (a median 269 µs of CPU per pruned delivery against 24;
// docs/PERFORMANCE.md, session 22; issue 39).
func (s *Store) PruneFinished(ctx context.Context, cutoff time.Time, limit int) (int, error) {
	if err := store.CheckPruneFinished(limit); err != nil {
		return 0, err
	}
	var n int
	err := s.indexedQuery(ctx, "notifications", pruneFinishedSQL, func(rows pgx.Rows) (err error) {
		n, err = pgx.CollectExactlyOneRow(rows, pgx.RowTo[int])
		return err
	}, cutoff, limit)
	return n, err
}

// pruneFinishedSQL is PruneFinished's statement: $1 the cutoff, $2 the
// batch's size.
const pruneFinishedSQL = `WITH n AS (
	DELETE FROM {s}.notifications WHERE id IN (
		SELECT n.id FROM {s}.notifications n WHERE n.created_at < $1
			AND NOT EXISTS (SELECT 1 FROM {s}.deliveries d WHERE d.notification_id = n.id AND d.state IN ('pending', 'leased'))
		ORDER BY n.created_at, n.id LIMIT $2 FOR UPDATE SKIP LOCKED)
	RETURNING id
), d AS (
	DELETE FROM {s}.deliveries d USING n WHERE d.notification_id = n.id RETURNING d.id
), a AS (
	DELETE FROM {s}.delivery_attempts a USING d WHERE a.delivery_id = d.id
), i AS (
	DELETE FROM {s}.inbox_items i USING n WHERE i.notification_id = n.id
), e AS (
	DELETE FROM {s}.escalations e USING n WHERE e.notification_id = n.id
)
SELECT count(*) FROM n`
