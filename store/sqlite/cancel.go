package sqlite

import (
	"cmp"
	"context"
	"database/sql"
	"encoding/json"
	"slices"
	"strings"

	"github.com/heraldhq/herald/heraldtype"
	"github.com/heraldhq/herald/store"
	"github.com/heraldhq/herald/store/rules"
)

// CancelNotifications implements store.Store in one write transaction:
// the selected notifications' ids, the attempt rows of their pending
// deliveries, the move of those to cancelled, their webhook messages
// (deliveriesFinished, as an outcome's) and a read of every delivery of
// the selection. The single writer orders it against every claim and
// outcome: a delivery a claim took before is leased here and left alone,
// one claimed after is cancelled already.
func (s *Store) CancelNotifications(ctx context.Context, p store.CancelParams) (store.CancelResult, error) {
	if err := store.CheckCancel(p); err != nil {
		return store.CancelResult{}, err
	}
	var res store.CancelResult
	at := micros(p.Now)
	err := s.inTx(ctx, func(tx *writeTx) error {
		var err error
		if res.DigestItems, err = s.cancelDigestItems(ctx, tx, p); err != nil {
			return err
		}
		ids, err := s.cancelSelection(ctx, tx, p)
		if err != nil || len(ids) == 0 {
			return err
		}
		res.NotificationIDs = ids
		list, err := json.Marshal(ids)
		if err != nil {
			return err
		}
		const pending = `notification_id IN (SELECT value FROM json_each(?)) AND state = 'pending'`
		if _, err := s.exec(ctx, tx, `INSERT INTO delivery_attempts (delivery_id, attempt, at, outcome, error_code, error)
SELECT id, attempt, ?, '`+string(heraldtype.OutcomeCancelled)+`', '`+heraldtype.CodeCancelled+`', ?
FROM deliveries WHERE `+pending+` ORDER BY id`, at, p.Reason, string(list)); err != nil {
			return formatError(err, "attempts")
		}
		rows, err := s.query(ctx, tx, `UPDATE deliveries SET state = 'cancelled', lease_owner = '', lease_until = NULL,
	last_error_code = '`+heraldtype.CodeCancelled+`', last_error = ?, finished_at = ?, updated_at = ?,
	last_replay_result = CASE WHEN replay_count > 0 THEN 'cancelled' ELSE last_replay_result END
WHERE `+pending+` RETURNING id`, p.Reason, at, at, string(list))
		if err != nil {
			return formatError(err, "deliveries")
		}
		var moved []finish
		movedID := map[int64]bool{}
		for rows.Next() {
			f := finish{at: at}
			if err := rows.Scan(&f.id); err != nil {
				rows.Close()
				return formatError(err, "deliveries")
			}
			moved = append(moved, f)
			movedID[f.id] = true
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return formatError(err, "deliveries")
		}
		// The selection's pending escalation steps stop here too (issue
		// 36 item 4): the one writer orders the cancel against every fire.
		if _, err := s.exec(ctx, tx, rules.Unqualified(rules.EscalationCancelSQL(`n.id IN (SELECT value FROM json_each(?))`, "?", "?")),
			at, store.EscalationCancelReason(p.Reason), string(list)); err != nil {
			return formatError(err, "escalations")
		}
		sortFinish(moved)
		if err := s.deliveriesFinished(ctx, tx, moved); err != nil {
			return err
		}
		rows, err = s.query(ctx, tx, `SELECT id, notification_id, channel, state, lease_until FROM deliveries
WHERE notification_id IN (SELECT value FROM json_each(?)) ORDER BY notification_id, id`, string(list))
		if err != nil {
			return formatError(err, "deliveries")
		}
		defer rows.Close()
		for rows.Next() {
			var d store.CancelDelivery
			var until sql.NullInt64
			if err := rows.Scan(&d.ID, &d.NotificationID, &d.Channel, &d.State, &until); err != nil {
				return formatError(err, "deliveries")
			}
			if until.Valid && d.State == heraldtype.StateLeased {
				d.LeaseUntil = fromMicros(until.Int64)
			}
			d.Cancelled = movedID[d.ID]
			res.Deliveries = append(res.Deliveries, d)
		}
		return formatError(rows.Err(), "deliveries")
	})
	if err != nil {
		return store.CancelResult{}, err
	}
	return res, nil
}

// cancelSelection is the ids of the notifications p selects, in id order:
// by id (those that exist), by key for one user, or by key for every user
// (each through its partial index of the notifications with a key, which
// SQLite uses only when the query repeats the index's condition).
func (s *Store) cancelSelection(ctx context.Context, tx *writeTx, p store.CancelParams) ([]string, error) {
	var q string
	var args []any
	switch {
	case len(p.NotificationIDs) > 0:
		list, err := json.Marshal(p.NotificationIDs)
		if err != nil {
			return nil, err
		}
		// With the notifications their fired escalation steps sent (issue
		// 36 item 4; by key they carry the key).
		q, args = `SELECT id FROM notifications WHERE id IN (SELECT value FROM json_each(?))
	OR id IN (SELECT fired_notification_id FROM escalations WHERE notification_id IN (SELECT value FROM json_each(?))
		AND fired_notification_id IS NOT NULL)
ORDER BY id`, []any{string(list), string(list)}
	case p.UserID != "":
		q, args = `SELECT id FROM notifications WHERE user_id = ? AND cancellation_key = ? AND cancellation_key <> ''
ORDER BY id`,
			[]any{p.UserID, p.CancellationKey}
	default:
		q, args = `SELECT id FROM notifications WHERE cancellation_key = ? AND cancellation_key <> '' ORDER BY id`,
			[]any{p.CancellationKey}
	}
	rows, err := s.query(ctx, tx, q, args...)
	if err != nil {
		return nil, formatError(err, "notifications")
	}
	defer rows.Close()
	var ids []string
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			return nil, formatError(err, "notifications")
		}
		ids = append(ids, id)
	}
	return ids, formatError(rows.Err(), "notifications")
}

// cancelDigestItems marks cancelled the digested triggers p selects in
// digests not yet sent (open, or closed and not fired), and counts them on
// their digests, whose fire then refuses a message built before (issue 36
// item 4; store.DigestFire.Cancelled). The single writer orders it against
// every join and fire.
func (s *Store) cancelDigestItems(ctx context.Context, tx *writeTx, p store.CancelParams) ([]store.CancelledDigestItem, error) {
	var cond string
	var args []any
	switch {
	case len(p.NotificationIDs) > 0:
		list, err := json.Marshal(p.NotificationIDs)
		if err != nil {
			return nil, err
		}
		cond, args = `item_id IN (SELECT value FROM json_each(?))`, []any{string(list)}
	case p.UserID != "":
		cond, args = `cancellation_key = ? AND cancellation_key <> '' AND digest_id IN (SELECT id FROM digests WHERE user_id = ?)`,
			[]any{p.CancellationKey, p.UserID}
	default:
		cond, args = `cancellation_key = ? AND cancellation_key <> ''`, []any{p.CancellationKey}
	}
	rows, err := s.query(ctx, tx, `UPDATE digest_items SET cancelled_at = ?
WHERE `+cond+` AND cancelled_at IS NULL AND digest_id IN (SELECT id FROM digests WHERE state IN ('open', 'closed'))
RETURNING digest_id, item_id`, append([]any{micros(p.Now)}, args...)...)
	if err != nil {
		return nil, formatError(err, "digest items")
	}
	var out []store.CancelledDigestItem
	for rows.Next() {
		var it store.CancelledDigestItem
		if err := rows.Scan(&it.DigestID, &it.ItemID); err != nil {
			rows.Close()
			return nil, formatError(err, "digest items")
		}
		out = append(out, it)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, formatError(err, "digest items")
	}
	slices.SortFunc(out, func(a, b store.CancelledDigestItem) int {
		return cmp.Or(strings.Compare(a.DigestID, b.DigestID), strings.Compare(a.ItemID, b.ItemID))
	})
	for i := 0; i < len(out); {
		j := i
		for j < len(out) && out[j].DigestID == out[i].DigestID {
			j++
		}
		if _, err := s.exec(ctx, tx, `UPDATE digests SET cancelled = cancelled + ? WHERE id = ?`, j-i, out[i].DigestID); err != nil {
			return nil, formatError(err, "digests")
		}
		i = j
	}
	return out, nil
}
