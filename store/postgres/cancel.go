package postgres

import (
	"context"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/heraldhq/herald/heraldtype"
	"github.com/heraldhq/herald/store"
	"github.com/heraldhq/herald/store/rules"
)

// cancelSelection is the condition on notification n that p selects, and
// its arguments ($1, $2): by id — with the notifications their fired
// escalation steps sent (issue 36 item 4; by key they carry the key) —
// by key for one user (the index
// notifications_cancellation_key_user), or by key for every user (the
// index notifications_cancellation_key). Both indexes are partial (WHERE
// cancellation_key <> ”), and a generic plan cannot prove that of $2:
// the condition says it, so either plan may use them.
func cancelSelection(p store.CancelParams) (string, []any) {
	switch {
	case len(p.NotificationIDs) > 0:
		return `(n.id = ANY ($1::text[]) OR n.id IN (SELECT e.fired_notification_id FROM {s}.escalations e
	WHERE e.notification_id = ANY ($1::text[]) AND e.fired_notification_id IS NOT NULL))`, []any{p.NotificationIDs}
	case p.UserID != "":
		return `n.user_id = $1 AND n.cancellation_key = $2 AND n.cancellation_key <> ''`, []any{p.UserID, p.CancellationKey}
	default:
		return `n.cancellation_key = $1 AND n.cancellation_key <> ''`, []any{p.CancellationKey}
	}
}

// CancelNotifications implements store.Store in one transaction of one
// round trip: lockFinishing (for the status events), then one statement
// that moves the pending deliveries of the selection to cancelled and
// writes their attempt rows and webhook messages (outcomeEvents), then a
// read of every delivery of the selection. Each statement takes its own
// snapshot (READ COMMITTED): a claim that held a pending row when the
// UPDATE reached it made the UPDATE wait and then skip the row, now
// leased, and the read after it sees the row leased — so no delivery is
// neither cancelled nor reported in flight. A claim after the UPDATE
// finds the row cancelled (its FOR UPDATE SKIP LOCKED skips it while the
// cancel holds it, and reads it cancelled after).
func (s *Store) CancelNotifications(ctx context.Context, p store.CancelParams) (store.CancelResult, error) {
	if err := store.CheckCancel(p); err != nil {
		return store.CancelResult{}, err
	}
	sel, args := cancelSelection(p)
	k := len(args)
	pending := `d.notification_id IN (SELECT n.id FROM {s}.notifications n WHERE ` + sel + `) AND d.state = 'pending'`
	moved := map[int64]bool{}
	var res store.CancelResult
	lock := indexed{sql: lockFinishing(pending), args: args, read: func(pgx.Rows) error { return nil }}
	reason, now := strconv.Itoa(k+1), strconv.Itoa(k+2)
	move := indexed{sql: `WITH u AS (
	UPDATE {s}.deliveries d SET state = 'cancelled', lease_owner = '', lease_until = NULL,
		last_error_code = '` + heraldtype.CodeCancelled + `', last_error = $` + reason + `,
		finished_at = $` + now + `, updated_at = $` + now + `,
		last_replay_result = CASE WHEN d.replay_count > 0 THEN 'cancelled' ELSE d.last_replay_result END
	WHERE ` + pending + `
	RETURNING d.id, d.notification_id, d.user_id, d.type AS ntype, d.channel, d.state, d.attempt, d.replay_count,
		d.last_error_code AS last_code, d.last_error AS last_err, $` + now + `::timestamptz AS at, d.id AS ord
), ` + outcomeEvents + `, a AS (
	INSERT INTO {s}.delivery_attempts (delivery_id, attempt, at, outcome, error_code, error)
	SELECT u.id, u.attempt, u.at, '` + string(heraldtype.OutcomeCancelled) + `', u.last_code, u.last_err FROM u ORDER BY u.id
)
SELECT id FROM u`, args: append(append([]any{}, args...), p.Reason, p.Now), read: func(rows pgx.Rows) error {
		for rows.Next() {
			var id int64
			if err := rows.Scan(&id); err != nil {
				return err
			}
			moved[id] = true
		}
		return rows.Err()
	}}
	read := indexed{sql: `SELECT n.id, d.id, d.channel, d.state, d.lease_until
FROM {s}.notifications n LEFT JOIN {s}.deliveries d ON d.notification_id = n.id
WHERE ` + sel + ` ORDER BY n.id, d.id`, args: args, read: func(rows pgx.Rows) error {
		for rows.Next() {
			var n string
			var id *int64
			var channel, state *string
			var until *time.Time
			if err := rows.Scan(&n, &id, &channel, &state, &until); err != nil {
				return err
			}
			if len(res.NotificationIDs) == 0 || res.NotificationIDs[len(res.NotificationIDs)-1] != n {
				res.NotificationIDs = append(res.NotificationIDs, n)
			}
			if id == nil {
				continue
			}
			d := store.CancelDelivery{ID: *id, NotificationID: n, Channel: heraldtype.Channel(*channel),
				State: heraldtype.DeliveryState(*state)}
			if until != nil && d.State == heraldtype.StateLeased {
				d.LeaseUntil = until.UTC()
			}
			res.Deliveries = append(res.Deliveries, d)
		}
		return rows.Err()
	}}
	// The pending escalation steps of the selection stop in the same
	// transaction (issue 36 item 4), first: a step's fire locks its row,
	// so the cancel waits for a fire in progress and then finds the step
	// fired — and the statements after it, each with a snapshot of its
	// own, see the notification the fire committed and cancel it too — or
	// the fire finds the step stopped.
	stop := indexed{sql: rules.EscalationCancelSQL(sel, "$"+strconv.Itoa(k+1)+"::timestamptz", "$"+strconv.Itoa(k+2)),
		args: append(append([]any{}, args...), p.Now, store.EscalationCancelReason(p.Reason)),
		read: func(pgx.Rows) error { return nil }}
	digested := cancelDigestItems(p, &res)
	// A deadlock aborts the whole transaction, which then changed
	// nothing: run it again, as Complete does.
	for try := 1; ; try++ {
		clear(moved)
		res = store.CancelResult{}
		err := s.indexedQueries(ctx, "deliveries", stop, lock, move, read, digested)
		if err == nil {
			break
		}
		if try == completeRetries || !retryable(err) {
			return store.CancelResult{}, err
		}
	}
	for i := range res.Deliveries {
		res.Deliveries[i].Cancelled = moved[res.Deliveries[i].ID]
	}
	return res, nil
}

// cancelDigestItems is the statement of CancelNotifications that marks
// cancelled the digested triggers p selects in digests not yet sent, and
// counts them on their digests (issue 36 item 4). It locks those digests
// first (FOR UPDATE, in id order): a fire committed meanwhile made the
// digest sent, which the lock's recheck skips; a fire after it waits for
// the cancel and finds the count changed (store.DigestFire.Cancelled).
func cancelDigestItems(p store.CancelParams, res *store.CancelResult) indexed {
	var item, user string
	var args []any
	switch {
	case len(p.NotificationIDs) > 0:
		item, args = `i.item_id = ANY ($1::text[])`, []any{p.NotificationIDs}
	case p.UserID != "":
		item, user, args = `i.cancellation_key = $2 AND i.cancellation_key <> ''`, ` AND g.user_id = $1`,
			[]any{p.UserID, p.CancellationKey}
	default:
		item, args = `i.cancellation_key = $1 AND i.cancellation_key <> ''`, []any{p.CancellationKey}
	}
	now := "$" + strconv.Itoa(len(args)+1)
	return indexed{sql: `WITH g AS (
	SELECT g.id FROM {s}.digests g
	WHERE g.state IN ('open', 'closed')` + user + ` AND g.id IN (SELECT i.digest_id FROM {s}.digest_items i
		WHERE ` + item + ` AND i.cancelled_at IS NULL)
	ORDER BY g.id FOR UPDATE
), x AS (
	UPDATE {s}.digest_items i SET cancelled_at = ` + now + `::timestamptz FROM g
	WHERE i.digest_id = g.id AND ` + item + ` AND i.cancelled_at IS NULL
	RETURNING i.digest_id, i.item_id
), c AS (
	UPDATE {s}.digests d SET cancelled = d.cancelled + n.n
	FROM (SELECT digest_id, count(*)::int AS n FROM x GROUP BY digest_id) n WHERE d.id = n.digest_id
)
SELECT digest_id, item_id FROM x ORDER BY digest_id, item_id`, args: append(args, p.Now), read: func(rows pgx.Rows) error {
		for rows.Next() {
			var it store.CancelledDigestItem
			if err := rows.Scan(&it.DigestID, &it.ItemID); err != nil {
				return err
			}
			res.DigestItems = append(res.DigestItems, it)
		}
		return rows.Err()
	}}
}
