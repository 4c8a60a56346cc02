package sqlite

import (
	"context"
	"database/sql"
	"time"

	"github.com/heraldhq/herald/heraldtype"
	"github.com/heraldhq/herald/store"
)

// Overview implements store.Store with the statements PostgreSQL's runs:
// each count walks its partial index and stops at the cap, the two
// "oldest" read their index's first row, and the rollup is read by its
// primary key's minute.
func (s *Store) Overview(ctx context.Context, p store.OverviewParams) (heraldtype.Overview, error) {
	var o heraldtype.Overview
	limit := p.Cap + 1
	rows, err := s.read.QueryContext(ctx, `SELECT state, channel, count(*) FROM (SELECT state, channel FROM deliveries
WHERE state = 'pending' LIMIT ?1) GROUP BY state, channel
UNION ALL SELECT state, channel, count(*) FROM (SELECT state, channel FROM deliveries
WHERE state = 'leased' LIMIT ?1) GROUP BY state, channel`, limit)
	if err != nil {
		return o, formatError(err, "deliveries")
	}
	totals := map[heraldtype.DeliveryState]int64{}
	for rows.Next() {
		var q heraldtype.QueueCount
		if err := rows.Scan(&q.State, &q.Channel, &q.Count); err != nil {
			rows.Close()
			return o, formatError(err, "deliveries")
		}
		totals[q.State] += q.Count
		o.Queue = append(o.Queue, q)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return o, formatError(err, "deliveries")
	}
	for _, n := range totals {
		o.QueueCapped = o.QueueCapped || n > int64(p.Cap)
	}
	for _, c := range []struct {
		dst  *heraldtype.CappedCount
		what string
		sql  string
	}{
		{&o.DeadLetters, "deliveries", `SELECT count(*) FROM (SELECT 1 FROM deliveries WHERE state IN ('dead', 'unknown') LIMIT ?)`},
		{&o.DeadEvents, "dead_events", `SELECT count(*) FROM (SELECT 1 FROM dead_events WHERE replayed_at IS NULL LIMIT ?)`},
		{&o.RuleRunsRunning, "rule_runs", `SELECT count(*) FROM (SELECT 1 FROM rule_runs WHERE state = 'running' LIMIT ?)`},
	} {
		var n int64
		if err := s.read.QueryRowContext(ctx, c.sql, limit).Scan(&n); err != nil {
			return o, formatError(err, c.what)
		}
		*c.dst = heraldtype.CappedCount{Count: min(n, int64(p.Cap)), Capped: n > int64(p.Cap)}
	}
	var oldest, due sql.NullInt64
	if err := s.read.QueryRowContext(ctx, `SELECT min(run_at) FROM deliveries INDEXED BY deliveries_pending_run_at
WHERE state = 'pending' AND run_at <= ?`, micros(p.Now)).Scan(&oldest); err != nil {
		return o, formatError(err, "deliveries")
	}
	if err := s.read.QueryRowContext(ctx, `SELECT min(next_at) FROM reminders INDEXED BY reminders_due
WHERE state = 'active' AND next_at <= ?`, micros(p.Now)).Scan(&due); err != nil {
		return o, formatError(err, "reminders")
	}
	if oldest.Valid {
		o.OldestPending = fromMicros(oldest.Int64)
	}
	if due.Valid {
		o.ReminderDue = fromMicros(due.Int64)
	}
	if o.Minutes, err = s.rollupMinutes(ctx, p); err != nil {
		return o, err
	}
	o.FailuresByCode, err = s.rollupCodes(ctx, p)
	return o, err
}

func (s *Store) rollupMinutes(ctx context.Context, p store.OverviewParams) ([]heraldtype.MinuteCount, error) {
	rows, err := s.read.QueryContext(ctx, `SELECT minute, sum(CASE WHEN outcome = 'sent' THEN count ELSE 0 END),
sum(CASE WHEN outcome = 'failed' THEN count ELSE 0 END)
FROM delivery_minutes WHERE minute >= ? GROUP BY minute ORDER BY minute`, micros(p.Since))
	if err != nil {
		return nil, formatError(err, "delivery_minutes")
	}
	defer rows.Close()
	var out []heraldtype.MinuteCount
	for rows.Next() {
		var m heraldtype.MinuteCount
		var at int64
		if err := rows.Scan(&at, &m.Sent, &m.Failed); err != nil {
			return nil, formatError(err, "delivery_minutes")
		}
		m.Minute = fromMicros(at)
		out = append(out, m)
	}
	return out, formatError(rows.Err(), "delivery_minutes")
}

func (s *Store) rollupCodes(ctx context.Context, p store.OverviewParams) ([]heraldtype.CodeCount, error) {
	rows, err := s.read.QueryContext(ctx, `SELECT error_code, sum(count) FROM delivery_minutes
WHERE minute >= ? AND outcome = 'failed' GROUP BY error_code ORDER BY 2 DESC, 1 LIMIT ?`, micros(p.Since), p.MaxCodes)
	if err != nil {
		return nil, formatError(err, "delivery_minutes")
	}
	defer rows.Close()
	var out []heraldtype.CodeCount
	for rows.Next() {
		var c heraldtype.CodeCount
		if err := rows.Scan(&c.Code, &c.Count); err != nil {
			return nil, formatError(err, "delivery_minutes")
		}
		out = append(out, c)
	}
	return out, formatError(rows.Err(), "delivery_minutes")
}

// AddDeliveryMinutes implements store.Store: one upsert per row in one
// transaction, adding to the instance's rows of the same minute.
func (s *Store) AddDeliveryMinutes(ctx context.Context, instance string, rows []store.DeliveryMinute) error {
	rows = store.MergeDeliveryMinutes(rows)
	if len(rows) == 0 {
		return nil
	}
	return s.inTx(ctx, func(tx *writeTx) error {
		for _, r := range rows {
			_, err := s.exec(ctx, tx, `INSERT INTO delivery_minutes (minute, instance, channel, outcome, error_code, count)
VALUES (?, ?, ?, ?, ?, ?)
ON CONFLICT (minute, instance, channel, outcome, error_code) DO UPDATE SET count = count + excluded.count`,
				micros(r.Minute), instance, string(r.Channel), string(r.Outcome), r.ErrorCode, r.Count)
			if err != nil {
				return formatError(err, "delivery_minutes")
			}
		}
		return nil
	})
}

// PruneDeliveryMinutes implements store.Store.
func (s *Store) PruneDeliveryMinutes(ctx context.Context, cutoff time.Time) (int, error) {
	var n int
	err := s.inTx(ctx, func(tx *writeTx) error {
		res, err := s.exec(ctx, tx, `DELETE FROM delivery_minutes WHERE minute < ?`, micros(cutoff))
		n, err = affected(res, err, "delivery_minutes")
		return err
	})
	return n, err
}

// CountReplayable implements store.Store: the deliveries a bulk replay of
// f would take, counted in a LIMITed subquery so it stops at max+1.
func (s *Store) CountReplayable(ctx context.Context, f heraldtype.DeliveryFilter, max int) (int, error) {
	if err := store.CheckReplayDeliveries(f, max); err != nil {
		return 0, err
	}
	where, args := filterSQL(f)
	where = append(where, store.ReplayableSQL)
	args = append(args, max+1)
	var n int
	err := s.read.QueryRowContext(ctx, `SELECT count(*) FROM (SELECT 1 FROM deliveries`+whereSQL(where)+` LIMIT ?)`, args...).Scan(&n)
	return n, formatError(err, "deliveries")
}
