package sqlite

import (
	"context"
	"database/sql"
	"slices"
	"time"

	"github.com/heraldhq/herald/heraldtype"
	"github.com/heraldhq/herald/store"
)

// maxClaim bounds one claim batch, so one transaction never holds the
// write lock for long.
const maxClaim = 1000

// Queries of the queue name their partial index (INDEXED BY): without
// statistics the planner prefers the wider (state, id) index and sorts, and
// INDEXED BY also fails loudly if a schema change ever makes the index
// unusable, instead of silently scanning.

// Claim implements store.Store. The UPDATE … RETURNING and the reads of
// the batch's notifications and devices run in one IMMEDIATE transaction:
// the write lock makes concurrent claims (from this process or another)
// take turns, so no delivery is handed out twice, and the devices are read
// as of the claim (S4.2).
func (s *Store) Claim(ctx context.Context, p store.ClaimParams) ([]heraldtype.Job, error) {
	if p.Owner == "" {
		return nil, heraldtype.FieldErrorf("owner", "must not be empty")
	}
	if p.Limit < 1 || p.Limit > maxClaim {
		return nil, heraldtype.FieldErrorf("limit", "must be between 1 and %d", maxClaim)
	}
	if !p.LeaseUntil.After(p.Now) {
		return nil, heraldtype.FieldErrorf("lease_until", "must be after now")
	}
	excluded := slices.Clone(p.ExcludeProviders)
	slices.Sort(excluded)
	excluded = slices.Compact(excluded)
	var jobs []heraldtype.Job
	err := s.inTx(ctx, func(tx *writeTx) error {
		now := micros(p.Now)
		args := []any{p.Owner, micros(p.LeaseUntil), now, now}
		exclude := ""
		if len(excluded) > 0 {
			exclude = ` AND provider NOT IN (` + marks(len(excluded)) + `)`
			for _, e := range excluded {
				args = append(args, e)
			}
		}
		args = append(args, p.Limit)
		rows, err := s.query(ctx, tx, `UPDATE deliveries SET state = 'leased', lease_owner = ?, lease_until = ?,
	attempt = attempt + 1, updated_at = ?
WHERE id IN (SELECT id FROM deliveries INDEXED BY deliveries_pending_run_at
	WHERE state = 'pending' AND run_at <= ?`+exclude+`
	ORDER BY run_at, id LIMIT ?)
RETURNING `+deliveryColumns, args...)
		if err != nil {
			return formatError(err, "claim")
		}
		var ds []heraldtype.Delivery
		for rows.Next() {
			d, err := scanDelivery(rows)
			if err != nil {
				rows.Close()
				return formatError(err, "claim")
			}
			ds = append(ds, d)
		}
		if err := rows.Close(); err != nil {
			return formatError(err, "claim")
		}
		if err := rows.Err(); err != nil {
			return formatError(err, "claim")
		}
		if len(ds) == 0 {
			return nil
		}
		// RETURNING has no order; the contract's is oldest run_at first.
		slices.SortFunc(ds, func(a, b heraldtype.Delivery) int {
			if c := a.RunAt.Compare(b.RunAt); c != 0 {
				return c
			}
			return cmpInt64(a.ID, b.ID)
		})
		jobs, err = s.loadJobs(ctx, tx, ds)
		return err
	})
	return jobs, err
}

func cmpInt64(a, b int64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// loadJobs attaches to each claimed delivery its notification (one value
// shared by all jobs of that notification) and its device as it is now.
// A device that was deleted, or that moved to another user since the
// delivery was created, is reported as nil: the delivery's own device no
// longer exists.
func (s *Store) loadJobs(ctx context.Context, tx *writeTx, ds []heraldtype.Delivery) ([]heraldtype.Job, error) {
	var nids, dids []string
	seenN := make(map[string]bool)
	seenD := make(map[string]bool)
	for _, d := range ds {
		if !seenN[d.NotificationID] {
			seenN[d.NotificationID] = true
			nids = append(nids, d.NotificationID)
		}
		if d.DeviceID != "" && !seenD[d.DeviceID] {
			seenD[d.DeviceID] = true
			dids = append(dids, d.DeviceID)
		}
	}
	notifications := make(map[string]*heraldtype.Notification, len(nids))
	err := inLists(nids, func(args []any) error {
		rows, err := s.query(ctx, tx, `SELECT `+notificationColumns+` FROM notifications WHERE id IN (`+marks(len(args))+`)`, args...)
		if err != nil {
			return formatError(err, "notifications")
		}
		defer rows.Close()
		for rows.Next() {
			n, err := scanNotification(rows)
			if err != nil {
				return formatError(err, "notifications")
			}
			notifications[n.ID] = &n
		}
		return formatError(rows.Err(), "notifications")
	})
	if err != nil {
		return nil, err
	}
	devices := make(map[string]*heraldtype.Device, len(dids))
	err = inLists(dids, func(args []any) error {
		rows, err := s.query(ctx, tx, `SELECT `+deviceColumns+` FROM devices WHERE id IN (`+marks(len(args))+`)`, args...)
		if err != nil {
			return formatError(err, "devices")
		}
		defer rows.Close()
		for rows.Next() {
			d, err := scanDevice(rows)
			if err != nil {
				return formatError(err, "devices")
			}
			devices[d.ID] = &d
		}
		return formatError(rows.Err(), "devices")
	})
	if err != nil {
		return nil, err
	}
	jobs := make([]heraldtype.Job, len(ds))
	for i, d := range ds {
		jobs[i] = heraldtype.Job{Delivery: d, Notification: notifications[d.NotificationID]}
		if dev := devices[d.DeviceID]; dev != nil && dev.UserID == d.UserID {
			jobs[i].Device = dev
		}
	}
	return jobs, nil
}

// ExtendLeases implements store.Store.
func (s *Store) ExtendLeases(ctx context.Context, owner string, ids []int64, until time.Time) ([]int64, error) {
	extended := []int64{}
	if len(ids) == 0 {
		return extended, nil
	}
	err := s.inTx(ctx, func(tx *writeTx) error {
		return inLists(ids, func(args []any) error {
			rows, err := s.query(ctx, tx, `UPDATE deliveries SET lease_until = ?
WHERE state = 'leased' AND lease_owner = ? AND id IN (`+marks(len(args))+`) RETURNING id`,
				append([]any{micros(until), owner}, args...)...)
			if err != nil {
				return formatError(err, "leases")
			}
			defer rows.Close()
			for rows.Next() {
				var id int64
				if err := rows.Scan(&id); err != nil {
					return formatError(err, "leases")
				}
				extended = append(extended, id)
			}
			return formatError(rows.Err(), "leases")
		})
	})
	if err != nil {
		return nil, err
	}
	slices.Sort(extended)
	return extended, nil
}

// ReapExpiredLeases implements store.Store (S1.3). The attempt rows are
// written first, while the leases still say which rows expired; the two
// updates then move at_least_once deliveries back to pending (attempt
// kept, so max_attempts still bounds them) and at_most_once ones to
// unknown, whose webhook messages follow in the transaction.
func (s *Store) ReapExpiredLeases(ctx context.Context, now time.Time) (store.ReapResult, error) {
	var res store.ReapResult
	at := micros(now)
	const expired = `state = 'leased' AND lease_until < ?`
	const leased = `deliveries INDEXED BY deliveries_leased_until`
	const reason = `'lease expired before an outcome was recorded'`
	err := s.inTx(ctx, func(tx *writeTx) error {
		_, err := s.exec(ctx, tx, `INSERT INTO delivery_attempts (delivery_id, attempt, at, outcome, error_code, error)
SELECT id, attempt, ?, CASE guarantee WHEN 'at_most_once' THEN 'unknown' ELSE 'lease_expired' END,
	'lease_expired', `+reason+`
FROM `+leased+` WHERE `+expired+` ORDER BY id`, at, at)
		if err != nil {
			return formatError(err, "attempts")
		}
		r, err := s.exec(ctx, tx, `UPDATE `+leased+` SET state = 'pending', run_at = ?, lease_owner = '',
	lease_until = NULL, last_error_code = 'lease_expired', last_error = `+reason+`, updated_at = ?
WHERE `+expired+` AND guarantee <> 'at_most_once'`, at, at, at)
		if res.Requeued, err = affected(r, err, "deliveries"); err != nil {
			return err
		}
		rows, err := s.query(ctx, tx, `UPDATE `+leased+` SET state = 'unknown', lease_owner = '', lease_until = NULL,
	last_error_code = 'lease_expired', last_error = `+reason+`, finished_at = ?, updated_at = ?,
	last_replay_result = CASE WHEN replay_count > 0 THEN 'unknown' ELSE last_replay_result END
WHERE `+expired+` AND guarantee = 'at_most_once' RETURNING id`, at, at, at)
		if err != nil {
			return formatError(err, "deliveries")
		}
		var unknown []finish
		for rows.Next() {
			f := finish{at: at}
			if err := rows.Scan(&f.id); err != nil {
				rows.Close()
				return formatError(err, "deliveries")
			}
			unknown = append(unknown, f)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return formatError(err, "deliveries")
		}
		res.Unknown = len(unknown)
		// Their webhook messages (issue 35 item 4), in the same
		// transaction.
		sortFinish(unknown)
		return s.deliveriesFinished(ctx, tx, unknown)
	})
	if err != nil {
		return store.ReapResult{}, err
	}
	return res, nil
}

// NextRunAt implements store.Store; the partial pending index answers it.
func (s *Store) NextRunAt(ctx context.Context) (time.Time, bool, error) {
	var v sql.NullInt64
	err := s.read.QueryRowContext(ctx, `SELECT min(run_at) FROM deliveries INDEXED BY deliveries_pending_run_at
WHERE state = 'pending'`).Scan(&v)
	if err != nil {
		return time.Time{}, false, formatError(err, "deliveries")
	}
	if !v.Valid {
		return time.Time{}, false, nil
	}
	return fromMicros(v.Int64), true, nil
}

// QueueStats implements store.Store. Every counted state is present in the
// map, zero when no delivery is in it, so a gauge drops to zero rather than
// keeping its last value. Each count reads the range of its state in
// deliveries_state, never the final states' rows.
func (s *Store) QueueStats(ctx context.Context) (map[heraldtype.DeliveryState]int, error) {
	return s.countStates(ctx, store.QueueDepthStates, `SELECT state, count(*) FROM deliveries
WHERE state IN ('pending', 'leased', 'dead', 'unknown') GROUP BY state`)
}

// CountDeliveries implements store.Store with a scan of the whole table.
func (s *Store) CountDeliveries(ctx context.Context) (map[heraldtype.DeliveryState]int, error) {
	return s.countStates(ctx, store.DeliveryStates, `SELECT state, count(*) FROM deliveries GROUP BY state`)
}

// countStates runs query, which returns (state, count) rows, into a map
// holding every one of states, zero where query returned none.
func (s *Store) countStates(ctx context.Context, states []heraldtype.DeliveryState, query string) (map[heraldtype.DeliveryState]int, error) {
	stats := map[heraldtype.DeliveryState]int{}
	for _, st := range states {
		stats[st] = 0
	}
	rows, err := s.read.QueryContext(ctx, query)
	if err != nil {
		return nil, formatError(err, "deliveries")
	}
	defer rows.Close()
	for rows.Next() {
		var st string
		var n int
		if err := rows.Scan(&st, &n); err != nil {
			return nil, formatError(err, "deliveries")
		}
		stats[heraldtype.DeliveryState(st)] = n
	}
	return stats, formatError(rows.Err(), "deliveries")
}
