package sqlite

import (
	"context"
	"database/sql"
	"errors"

	"github.com/heraldhq/herald/heraldtype"
	"github.com/heraldhq/herald/store"
	"github.com/heraldhq/herald/store/rules"
)

// insertEscalations writes the pending escalation steps of a trigger's
// notifications (store.EscalationRows) in tx.
func (s *Store) insertEscalations(ctx context.Context, tx *writeTx, p store.EnqueueParams) error {
	rows, err := store.EscalationRows(p)
	if err != nil {
		return err
	}
	for _, r := range rows {
		if _, err := s.exec(ctx, tx, `INSERT INTO escalations (notification_id, step, user_id, type, due_at, unless, channels, state)
VALUES (?, ?, ?, ?, ?, ?, ?, 'pending')`, r.NotificationID, r.Step, r.UserID, r.Type, micros(r.DueAt), r.Unless, r.Channels); err != nil {
			return formatError(err, "escalations")
		}
	}
	return nil
}

// stopEscalations stops the pending steps that the receipts of event just
// written on deliveries answer (rules.EscalationStopSQL), in the
// receipts' transaction.
func (s *Store) stopEscalations(ctx context.Context, tx *writeTx, event heraldtype.ReceiptEvent, deliveries []any) error {
	if len(deliveries) == 0 {
		return nil
	}
	// The receipts just written, as the FROM item the rule reads (three
	// times: SQLite's markers are positional, so each use has its own).
	from := `(SELECT a.delivery_id, a.error_code, a.at FROM delivery_attempts a WHERE a.outcome = '` +
		string(heraldtype.OutcomeReceipt) + `' AND a.error_code = ? AND a.delivery_id IN (` + marks(len(deliveries)) + `))`
	var args []any
	for range 3 {
		args = append(append(args, string(event)), deliveries...)
	}
	_, err := s.exec(ctx, tx, rules.Unqualified(rules.EscalationStopSQL(from)), args...)
	return formatError(err, "escalations")
}

const escalationColumns = `notification_id, user_id, type, step, due_at, unless, channels, state, decided_at, reason,
	coalesce(fired_notification_id, '')`

func scanEscalation(row interface{ Scan(...any) error }) (store.ClaimedEscalation, error) {
	var e store.ClaimedEscalation
	var channels, unless string
	var due int64
	var decided sql.NullInt64
	err := row.Scan(&e.NotificationID, &e.UserID, &e.Type, &e.Step, &due, &unless, &channels, &e.State, &decided,
		&e.Reason, &e.Escalation.NotificationID)
	if err != nil {
		return e, err
	}
	e.Unless, e.DueAt = heraldtype.ReceiptEvent(unless), fromMicros(due)
	if decided.Valid {
		e.DecidedAt = fromMicros(decided.Int64)
	}
	e.Channels, err = store.ParseEscalationChannels([]byte(channels))
	return e, err
}

// ClaimEscalations implements store.Store in one write transaction (one
// writer: no claim runs beside it).
func (s *Store) ClaimEscalations(ctx context.Context, p store.EscalationClaimParams) ([]store.ClaimedEscalation, error) {
	var out []store.ClaimedEscalation
	err := s.inTx(ctx, func(tx *writeTx) error {
		out = out[:0]
		args := []any{p.Owner, micros(p.LeaseUntil)}
		due := rules.EscalationDueSQL(p.Now, mark(&args))
		rows, err := s.query(ctx, tx, `UPDATE escalations SET lease_owner = ?, lease_until = ?
WHERE (notification_id, step) IN (SELECT notification_id, step FROM escalations WHERE `+due+` ORDER BY due_at LIMIT ?)
RETURNING `+escalationColumns, append(args, p.Limit)...)
		if err != nil {
			return formatError(err, "escalations")
		}
		defer rows.Close()
		for rows.Next() {
			e, err := scanEscalation(rows)
			if err != nil {
				return formatError(err, "escalations")
			}
			out = append(out, e)
		}
		return formatError(rows.Err(), "escalations")
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// FireEscalation implements store.Store in one write transaction: the
// guard, the receipt looked for, then the stop or the enqueue. The one
// writer orders it against every receipt and cancel.
func (s *Store) FireEscalation(ctx context.Context, f store.EscalationFire) (string, string, store.EnqueueResult, error) {
	if err := f.Check(); err != nil {
		return "", "", store.EnqueueResult{}, err
	}
	var outcome, reason string
	var res store.EnqueueResult
	err := s.inTx(ctx, func(tx *writeTx) error {
		outcome, reason, res = "", "", store.EnqueueResult{}
		var unless string
		err := tx.QueryRowContext(ctx, `SELECT unless FROM escalations
WHERE notification_id = ? AND step = ? AND lease_owner = ? AND state = 'pending'`, f.NotificationID, f.Step, f.Owner).Scan(&unless)
		if errors.Is(err, sql.ErrNoRows) {
			return nil
		}
		if err != nil {
			return formatError(err, "escalation")
		}
		var args []any
		var receipts int
		if err := tx.QueryRowContext(ctx, rules.Unqualified(rules.EscalationReceiptSQL(f.NotificationID, unless, mark(&args))), args...).
			Scan(&receipts); err != nil {
			return formatError(err, "receipts")
		}
		outcome, reason = heraldtype.EscalationStopped, store.EscalationReasonReceipt+unless
		fired := ""
		switch {
		case receipts > 0:
		case f.Failure != "":
			reason = f.Failure
		default:
			if res, err = s.enqueue(ctx, tx, *f.Enqueue); err != nil {
				return err
			}
			outcome, fired = heraldtype.EscalationFired, res.Notifications[0].ID
			reason = store.EscalationFiredReason(f.Enqueue.Notifications[0].Channels)
		}
		_, err = s.exec(ctx, tx, `UPDATE escalations SET state = ?, decided_at = ?, reason = ?,
	fired_notification_id = NULLIF(?, ''), lease_owner = '', lease_until = NULL
WHERE notification_id = ? AND step = ?`, outcome, micros(f.Now), reason, fired, f.NotificationID, f.Step)
		return formatError(err, "escalation")
	})
	if err != nil {
		return "", "", store.EnqueueResult{}, err
	}
	return outcome, reason, res, nil
}

// ListEscalations implements store.Store.
func (s *Store) ListEscalations(ctx context.Context, notificationID string) ([]heraldtype.Escalation, error) {
	rows, err := s.read.QueryContext(ctx, `SELECT `+escalationColumns+` FROM escalations WHERE notification_id = ? ORDER BY step`,
		notificationID)
	if err != nil {
		return nil, formatError(err, "escalations")
	}
	defer rows.Close()
	var out []heraldtype.Escalation
	for rows.Next() {
		e, err := scanEscalation(rows)
		if err != nil {
			return nil, formatError(err, "escalations")
		}
		out = append(out, e.Escalation)
	}
	return out, formatError(rows.Err(), "escalations")
}
