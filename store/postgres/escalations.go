package postgres

import (
	"context"
	"errors"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/heraldhq/herald/heraldtype"
	"github.com/heraldhq/herald/store"
	"github.com/heraldhq/herald/store/rules"
)

// insertEscalations writes the pending escalation steps of a trigger's
// notifications (store.EscalationRows) in one INSERT … SELECT FROM
// unnest; nil when the trigger has none.
func (s *Store) insertEscalations(p store.EnqueueParams) (*step, error) {
	rows, err := store.EscalationRows(p)
	if err != nil || len(rows) == 0 {
		return nil, err
	}
	k := len(rows)
	nid, uid, typ, unless, channels := make([]string, k), make([]string, k), make([]string, k), make([]string, k), make([]string, k)
	steps, due := make([]int32, k), make([]time.Time, k)
	for i, r := range rows {
		nid[i], uid[i], typ[i], unless[i], channels[i] = r.NotificationID, r.UserID, r.Type, r.Unless, r.Channels
		steps[i], due[i] = int32(r.Step), r.DueAt
	}
	return &step{what: "escalations", sql: s.q(`INSERT INTO {s}.escalations (notification_id, step, user_id, type, due_at, unless,
	channels, state)
SELECT x.nid, x.step, x.uid, x.typ, x.due, x.unless, x.channels, 'pending'
FROM unnest($1::text[], $2::int[], $3::text[], $4::text[], $5::timestamptz[], $6::text[], $7::text[])
	AS x (nid, step, uid, typ, due, unless, channels)`),
		args: []any{nid, steps, uid, typ, due, unless, channels}}, nil
}

// escalationStop is the CTE that stops, in a receipt's statement, the
// pending steps the receipts of CTE r answer (rules.EscalationStopSQL).
func escalationStop() string {
	return `x AS (` + rules.EscalationStopSQL("r") + `)`
}

const escalationColumns = `notification_id, user_id, type, step, due_at, unless, channels, state, decided_at, reason,
	coalesce(fired_notification_id, '')`

func scanEscalation(row interface{ Scan(...any) error }) (store.ClaimedEscalation, error) {
	var e store.ClaimedEscalation
	var channels string
	var decided *time.Time
	var unless string
	err := row.Scan(&e.NotificationID, &e.UserID, &e.Type, &e.Step, &e.DueAt, &unless, &channels, &e.State, &decided,
		&e.Reason, &e.Escalation.NotificationID)
	if err != nil {
		return e, err
	}
	e.Unless, e.DueAt = heraldtype.ReceiptEvent(unless), e.DueAt.UTC()
	if decided != nil {
		e.DecidedAt = decided.UTC()
	}
	e.Channels, err = store.ParseEscalationChannels([]byte(channels))
	return e, err
}

// ClaimEscalations implements store.Store: one UPDATE over the due rows
// taken FOR UPDATE SKIP LOCKED (a receipt stopping a step holds its row
// lock until it commits, so a claim skips it and then finds it stopped).
func (s *Store) ClaimEscalations(ctx context.Context, p store.EscalationClaimParams) ([]store.ClaimedEscalation, error) {
	var out []store.ClaimedEscalation
	err := s.inTx(ctx, func(tx pgx.Tx) error {
		out = out[:0]
		args := []any{p.Owner, p.LeaseUntil, p.Limit}
		due := rules.EscalationDueSQL(p.Now, marker(&args))
		rows, err := tx.Query(ctx, s.q(`UPDATE {s}.escalations e SET lease_owner = $1, lease_until = $2
FROM (SELECT notification_id, step FROM {s}.escalations WHERE `+due+` ORDER BY due_at LIMIT $3 FOR UPDATE SKIP LOCKED) x
WHERE e.notification_id = x.notification_id AND e.step = x.step
RETURNING e.notification_id, e.user_id, e.type, e.step, e.due_at, e.unless, e.channels, e.state, e.decided_at, e.reason,
	coalesce(e.fired_notification_id, '')`), args...)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			e, err := scanEscalation(rows)
			if err != nil {
				return err
			}
			out = append(out, e)
		}
		return rows.Err()
	})
	if err != nil {
		return nil, formatError(err, "escalations")
	}
	return out, nil
}

// FireEscalation implements store.Store in one transaction: the step's
// row locked under the guard (lease and state), then the receipt looked
// for — a receipt whose transaction stopped the step first makes the lock
// wait and then find it stopped; one that commits after waits on the lock
// and then finds it fired — then the stop or the enqueue.
func (s *Store) FireEscalation(ctx context.Context, f store.EscalationFire) (string, string, store.EnqueueResult, error) {
	if err := f.Check(); err != nil {
		return "", "", store.EnqueueResult{}, err
	}
	var outcome, reason string
	var res store.EnqueueResult
	var w wake
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		outcome, reason, res, w = "", "", store.EnqueueResult{}, wake{}
		var unless string
		err := tx.QueryRow(ctx, s.q(`SELECT unless FROM {s}.escalations
WHERE notification_id = $1 AND step = $2 AND lease_owner = $3 AND state = 'pending' FOR UPDATE`), f.NotificationID, f.Step, f.Owner).
			Scan(&unless)
		if errors.Is(err, pgx.ErrNoRows) {
			return nil
		}
		if err != nil {
			return err
		}
		var args []any
		var receipts int
		if err := tx.QueryRow(ctx, s.q(rules.EscalationReceiptSQL(f.NotificationID, unless, marker(&args))), args...).
			Scan(&receipts); err != nil {
			return err
		}
		outcome, reason = heraldtype.EscalationStopped, store.EscalationReasonReceipt+unless
		fired := ""
		switch {
		case receipts > 0:
		case f.Failure != "":
			reason = f.Failure
		default:
			if res, w, err = s.enqueue(ctx, pgxQuerier{tx}, *f.Enqueue); err != nil {
				return err
			}
			outcome, fired = heraldtype.EscalationFired, res.Notifications[0].ID
			reason = store.EscalationFiredReason(f.Enqueue.Notifications[0].Channels)
		}
		_, err = tx.Exec(ctx, s.q(`UPDATE {s}.escalations SET state = $3, decided_at = $4, reason = $5,
	fired_notification_id = NULLIF($6, ''), lease_owner = '', lease_until = NULL
WHERE notification_id = $1 AND step = $2`), f.NotificationID, f.Step, outcome, f.Now, reason, fired)
		return err
	})
	if err != nil {
		return "", "", store.EnqueueResult{}, formatError(err, "escalation of "+quote(f.NotificationID))
	}
	s.waker.post(w)
	return outcome, reason, res, nil
}

// ListEscalations implements store.Store.
func (s *Store) ListEscalations(ctx context.Context, notificationID string) ([]heraldtype.Escalation, error) {
	rows, err := s.pool.Query(ctx, s.q(`SELECT `+escalationColumns+` FROM {s}.escalations WHERE notification_id = $1 ORDER BY step`),
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
