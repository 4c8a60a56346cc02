package sqlite

import (
	"cmp"
	"context"
	"database/sql"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/heraldhq/herald/store"
	"github.com/heraldhq/herald/store/rules"
)

// leasedBy is the guard of every outcome write (S4.4): the delivery is
// still leased, by this owner, for this attempt. ?1 is the delivery id,
// ?2 the owner, ?3 the attempt.
const leasedBy = `id = ?1 AND state = 'leased' AND lease_owner = ?2 AND attempt = ?3`

// Complete implements store.Store. The whole batch is one transaction.
// For each outcome the device change (if any) runs first, guarded by the
// same lease condition through a subquery, then the delivery update; the
// attempt rows of the applied outcomes are inserted together at the end.
//
// Choices the contract leaves open:
//   - A sent outcome resets the device's fail_count to 0: the count is of
//     consecutive failures, and a send the provider accepted proves the
//     token works.
//   - last_error_code and last_error are what OutcomeRow.SetError says:
//     replaced by a failed outcome's, cleared by a sent one (the delivery's
//     own fields describe its current state; the attempt rows keep every
//     earlier error), kept by a plain release.
//   - A device invalidation (store.Dead.InvalidReason) changes the device
//     only if it was not updated after the claim (devices.updated_at <=
//     the delivery's claim time), so a dead-token answer for the token
//     read at claim time never invalidates a token the app registered
//     since.
func (s *Store) Complete(ctx context.Context, outcomes []store.Outcome) (int, error) {
	for i := range outcomes {
		if err := store.CheckOutcome(&outcomes[i]); err != nil {
			return 0, err
		}
	}
	applied := 0
	err := s.inTx(ctx, func(tx *writeTx) error {
		applied = 0
		var attempts []attemptRow
		var finished []finish
		for i := range outcomes {
			o := &outcomes[i]
			r := o.Row()
			ok, err := s.completeOne(ctx, tx, o, &r)
			if err != nil {
				return err
			}
			if ok {
				applied++
				if r.Timeline != "" {
					attempts = append(attempts, attemptRow{o, r})
				}
				if r.State.Final() {
					finished = append(finished, finish{o.DeliveryID, micros(o.At)})
				}
			}
		}
		if err := s.deliveriesFinished(ctx, tx, finished); err != nil {
			return err
		}
		return insertBatches(attempts, func(as []attemptRow) error {
			args := make([]any, 0, len(as)*9)
			for _, a := range as {
				o, r := a.o, &a.r
				args = append(args, o.DeliveryID, o.Attempt, micros(o.At), string(r.Timeline), r.ErrorCode,
					r.Error, int64(r.RetryAfter), r.ProviderMessageID, int64(r.Latency))
			}
			_, err := s.exec(ctx, tx, `INSERT INTO delivery_attempts (delivery_id, attempt, at, outcome, error_code,
	error, retry_after, provider_message_id, latency) VALUES `+rowMarks(len(as), 9), args...)
			return formatError(err, "attempts")
		})
	})
	if err != nil {
		return 0, err
	}
	return applied, nil
}

// webhookDialect is SQLite's side of the webhook statements.
var webhookDialect = rules.WebhookSQLite

// outcomeEventsSQL is rules.OutcomeEventsSQL over k deliveries of one
// notification, each given by three parameters: its id, the time of its
// move (micros) and the order of the move. outcomeEventsOne is the
// statement of the usual case, one delivery, built once.
func outcomeEventsSQL(k int) string {
	rows := make([]string, k)
	for i := range rows {
		rows[i] = fmt.Sprintf("(?%d, ?%d, ?%d)", 3*i+1, 3*i+2, 3*i+3)
	}
	return rules.Unqualified(rules.OutcomeEventsSQL(webhookDialect, rules.OutcomeEvents{
		Moved: `(SELECT d.id, d.notification_id, d.user_id, d.type AS ntype, d.channel, d.state, d.attempt,
	d.last_error_code AS last_code, d.last_error AS last_err, d.replay_count, o.column2 AS at, o.column3 AS ord
	FROM (VALUES ` + strings.Join(rows, ", ") + `) o JOIN deliveries d ON d.id = o.column1) x`,
		Current: "deliveries"}))
}

var outcomeEventsOne = outcomeEventsSQL(1)

// finish is a delivery moved to a final state at the time at (micros).
type finish struct {
	id, at int64
}

// sortFinish puts fs in id order, the order of their messages.
func sortFinish(fs []finish) {
	slices.SortFunc(fs, func(a, b finish) int { return cmp.Compare(a.id, b.id) })
}

// deliveriesFinished writes the webhook messages (issue 35 item 4) of the
// deliveries fs that the transaction moved to a final state —
// delivery.finished, dead_letter.created, and notification.status_changed
// for a notification they made final (rules.OutcomeEventsSQL) — in the
// transaction of the moves, after them, so they commit together or not at
// all and the status is read from the deliveries as the moves left them.
// One probe of the tiny webhook_endpoints table first: without an enabled
// endpoint there is nothing to write, and the moves cost no more. Then
// one statement per notification, which sees all of its deliveries the
// transaction finished, so it reports the notification once.
func (s *Store) deliveriesFinished(ctx context.Context, tx *writeTx, fs []finish) error {
	if len(fs) == 0 {
		return nil
	}
	var some bool
	if err := tx.QueryRowContext(ctx, `SELECT EXISTS (SELECT 1 FROM webhook_endpoints WHERE enabled)`).Scan(&some); err != nil || !some {
		return formatError(err, "webhook endpoints")
	}
	notificationOf := make(map[int64]string, len(fs))
	err := inLists(fs, func(args []any) error {
		ids := make([]any, len(args))
		for i, a := range args {
			ids[i] = a.(finish).id
		}
		rows, err := s.query(ctx, tx, `SELECT id, notification_id FROM deliveries WHERE id IN (`+marks(len(ids))+`)`, ids...)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var id int64
			var n string
			if err := rows.Scan(&id, &n); err != nil {
				return err
			}
			notificationOf[id] = n
		}
		return rows.Err()
	})
	if err != nil {
		return formatError(err, "deliveries")
	}
	var order []string
	byNotification := map[string][]finish{}
	for _, f := range fs {
		n := notificationOf[f.id]
		if byNotification[n] == nil {
			order = append(order, n)
		}
		byNotification[n] = append(byNotification[n], f)
	}
	for _, n := range order {
		moved := byNotification[n]
		args := make([]any, 0, 3*len(moved))
		for i, f := range moved {
			args = append(args, f.id, f.at, i)
		}
		q := outcomeEventsOne
		if len(moved) > 1 {
			q = outcomeEventsSQL(len(moved))
		}
		if _, err := s.exec(ctx, tx, q, args...); err != nil {
			return formatError(err, "webhook messages")
		}
	}
	return nil
}

// attemptRow is an applied outcome whose attempt row is still to insert.
type attemptRow struct {
	o *store.Outcome
	r store.OutcomeRow
}

// completeOne applies one outcome and reports whether the guard matched.
func (s *Store) completeOne(ctx context.Context, tx *writeTx, o *store.Outcome, r *store.OutcomeRow) (bool, error) {
	guard := []any{o.DeliveryID, o.Owner, o.Attempt}
	at := micros(o.At)
	if err := s.deviceChange(ctx, tx, o, r, guard); err != nil {
		return false, err
	}
	if r.Suppress {
		if err := s.suppress(ctx, tx, o, r.SuppressReason, guard); err != nil {
			return false, err
		}
	}
	if r.Release {
		// A policy release (deferred, policy_error) says why in the last
		// error, which the history reads (DEFERRED); a plain one keeps it.
		policy := r.Timeline != ""
		res, err := s.exec(ctx, tx, `UPDATE deliveries SET state = 'pending', attempt = attempt - 1, run_at = ?4,
	lease_owner = '', lease_until = NULL, updated_at = ?5,
	last_error_code = CASE WHEN ?6 THEN ?7 ELSE last_error_code END,
	last_error = CASE WHEN ?6 THEN ?8 ELSE last_error END
WHERE `+leasedBy, append(guard, micros(r.RunAt), at, policy, r.ErrorCode, r.Error)...)
		n, err := affected(res, err, "delivery")
		return n == 1, err
	}
	final := r.State.Final()
	var runAt, finished sql.NullInt64
	if final {
		finished = sql.NullInt64{Int64: at, Valid: true}
	} else {
		runAt = sql.NullInt64{Int64: micros(r.RunAt), Valid: true}
	}
	res, err := s.exec(ctx, tx, `UPDATE deliveries SET state = ?4, run_at = coalesce(?5, run_at),
	lease_owner = '', lease_until = NULL,
	last_error_code = CASE WHEN ?6 THEN ?7 ELSE last_error_code END,
	last_error = CASE WHEN ?6 THEN ?8 ELSE last_error END,
	provider_message_id = CASE WHEN ?9 <> '' THEN ?9 ELSE provider_message_id END,
	finished_at = ?10, updated_at = ?11,
	last_replay_result = CASE WHEN ?12 AND replay_count > 0 THEN ?4 ELSE last_replay_result END
WHERE `+leasedBy, append(guard, string(r.State), runAt, r.SetError, r.ErrorCode, r.Error, r.ProviderMessageID,
		finished, at, final)...)
	n, err := affected(res, err, "delivery")
	if err != nil || n != 1 || !r.Inbox {
		return n == 1, err
	}
	return true, s.writeInboxItem(ctx, tx, o, r)
}

// writeInboxItem writes the inbox item of an in-app delivery the outcome
// o just moved to sent (store.InboxSent; only an applied outcome gets
// here, so the item is written once) and makes its id the delivery's and
// the attempt row's provider message id.
func (s *Store) writeInboxItem(ctx context.Context, tx *writeTx, o *store.Outcome, r *store.OutcomeRow) error {
	var id int64
	err := tx.QueryRowContext(ctx, `INSERT INTO inbox_items (`+rules.InboxItemColumns+`)
SELECT `+rules.InboxItemSQL("?1")+` FROM deliveries d JOIN notifications x ON x.id = d.notification_id WHERE d.id = ?2
RETURNING id, user_id`, micros(o.At), o.DeliveryID).Scan(&id, new(string))
	if err != nil {
		return formatError(err, "inbox item")
	}
	r.ProviderMessageID = strconv.FormatInt(id, 10)
	_, err = s.exec(ctx, tx, `UPDATE deliveries SET provider_message_id = ? WHERE id = ?`, r.ProviderMessageID, o.DeliveryID)
	return formatError(err, "delivery")
}

// deviceChange applies the outcome's effect on the delivery's device,
// only while the delivery is still leased by the outcome's owner (so a
// duplicate outcome does not count a failure twice).
func (s *Store) deviceChange(ctx context.Context, tx *writeTx, o *store.Outcome, r *store.OutcomeRow, guard []any) error {
	const device = `id = (SELECT device_id FROM deliveries WHERE ` + leasedBy + `)`
	// updated_at of a leased delivery is its claim time: only Claim sets it
	// while it is leased.
	const notChangedSinceClaim = ` AND updated_at <= (SELECT updated_at FROM deliveries WHERE id = ?1)`
	var err error
	switch {
	case r.InvalidReason != "":
		var n int
		n, err = s.execN(ctx, tx, "device", `UPDATE devices SET status = 'INVALID', invalidated_at = ?4, invalid_reason = ?5,
	fail_count = fail_count + 1, updated_at = ?4
WHERE `+device+notChangedSinceClaim, append(guard, micros(o.At), r.InvalidReason)...)
		if err == nil && n == 1 {
			// The device it changed is reported in this transaction
			// (device.invalidated, issue 35 item 4).
			_, err = s.exec(ctx, tx, deviceInvalidatedSQL, o.DeliveryID)
		}
	case r.ResetFailCount:
		_, err = s.exec(ctx, tx, `UPDATE devices SET fail_count = 0 WHERE fail_count <> 0 AND `+device, guard...)
	}
	return formatError(err, "device")
}
