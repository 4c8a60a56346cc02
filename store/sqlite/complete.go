package sqlite

import (
	"context"
	"database/sql"
	"strconv"

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
		var finished []*store.Outcome
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
					finished = append(finished, o)
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

// finishedDelivery is the delivery columns rules.DeliveryFinishedSQL
// reads, of the delivery ?1.
const finishedDelivery = `(SELECT id, notification_id, user_id, type AS ntype, channel, state, attempt,
	last_error_code AS last_code, replay_count FROM deliveries WHERE id = ?1) x`

// deliveriesFinished writes the delivery.finished messages (issue 35 item
// 4) of the deliveries the applied outcomes os moved to a final state, in
// the transaction of the moves, so they commit together or not at all.
// One probe of the tiny webhook_endpoints table first: without an enabled
// endpoint there is nothing to write, and the outcomes cost no more.
func (s *Store) deliveriesFinished(ctx context.Context, tx *writeTx, os []*store.Outcome) error {
	if len(os) == 0 {
		return nil
	}
	var some bool
	if err := tx.QueryRowContext(ctx, `SELECT EXISTS (SELECT 1 FROM webhook_endpoints WHERE enabled)`).Scan(&some); err != nil || !some {
		return formatError(err, "webhook endpoints")
	}
	for _, o := range os {
		if _, err := s.exec(ctx, tx, rules.Unqualified(rules.DeliveryFinishedSQL("json_object", finishedDelivery, "?2"))+` ORDER BY e.id`,
			o.DeliveryID, micros(o.At)); err != nil {
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
