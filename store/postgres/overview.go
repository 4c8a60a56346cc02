package postgres

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/heraldhq/herald/heraldtype"
	"github.com/heraldhq/herald/store"
)

// Overview implements store.Store: one pipelined round trip under
// indexPlans, so every count walks its partial index (the pending and
// leased indexes, deliveries_dead_letters, dead_events_not_replayed,
// rule_runs_running) and stops at the cap, the two "oldest" read their
// index's first row, and the rollup is read by its primary key's minute.
// Nothing here grows with the history: a page load costs the same with
// ten million sent deliveries as with none (docs/PERFORMANCE.md).
func (s *Store) Overview(ctx context.Context, p store.OverviewParams) (heraldtype.Overview, error) {
	var o heraldtype.Overview
	limit := p.Cap + 1
	capped := func(n int64) heraldtype.CappedCount {
		if n > int64(p.Cap) {
			return heraldtype.CappedCount{Count: int64(p.Cap), Capped: true}
		}
		return heraldtype.CappedCount{Count: n}
	}
	one := func(dst *int64) func(pgx.Rows) error {
		return func(rows pgx.Rows) error {
			for rows.Next() {
				if err := rows.Scan(dst); err != nil {
					return err
				}
			}
			return nil
		}
	}
	first := func(dst *time.Time) func(pgx.Rows) error {
		return func(rows pgx.Rows) error {
			for rows.Next() {
				if err := rows.Scan(dst); err != nil {
					return err
				}
			}
			return nil
		}
	}
	var dead, events, runs int64
	var oldest, due time.Time
	totals := map[heraldtype.DeliveryState]int64{}
	err := s.indexedQueries(ctx, "overview",
		indexed{sql: `SELECT state, channel, count(*) FROM (SELECT state, channel FROM {s}.deliveries
WHERE state = 'pending' LIMIT $1) p GROUP BY state, channel
UNION ALL SELECT state, channel, count(*) FROM (SELECT state, channel FROM {s}.deliveries
WHERE lease_until IS NOT NULL AND state = 'leased' LIMIT $1) l GROUP BY state, channel`, args: []any{limit},
			read: func(rows pgx.Rows) error {
				for rows.Next() {
					var q heraldtype.QueueCount
					if err := rows.Scan(&q.State, &q.Channel, &q.Count); err != nil {
						return err
					}
					totals[q.State] += q.Count
					o.Queue = append(o.Queue, q)
				}
				return nil
			}},
		indexed{sql: `SELECT count(*) FROM (SELECT 1 FROM {s}.deliveries WHERE state IN ('dead', 'unknown') LIMIT $1) d`,
			args: []any{limit}, read: one(&dead)},
		indexed{sql: `SELECT count(*) FROM (SELECT 1 FROM {s}.dead_events WHERE replayed_at IS NULL LIMIT $1) e`,
			args: []any{limit}, read: one(&events)},
		indexed{sql: `SELECT count(*) FROM (SELECT 1 FROM {s}.rule_runs WHERE state = 'running' LIMIT $1) r`,
			args: []any{limit}, read: one(&runs)},
		indexed{sql: `SELECT run_at FROM {s}.deliveries WHERE state = 'pending' AND run_at <= $1 ORDER BY run_at, id LIMIT 1`,
			args: []any{p.Now}, read: first(&oldest)},
		indexed{sql: `SELECT next_at FROM {s}.reminders WHERE state = 'active' AND next_at <= $1 ORDER BY next_at, id LIMIT 1`,
			args: []any{p.Now}, read: first(&due)},
		indexed{sql: `SELECT minute, coalesce(sum(count) FILTER (WHERE outcome = 'sent'), 0)::bigint,
coalesce(sum(count) FILTER (WHERE outcome = 'failed'), 0)::bigint
FROM {s}.delivery_minutes WHERE minute >= $1 GROUP BY minute ORDER BY minute`, args: []any{p.Since},
			read: func(rows pgx.Rows) error {
				for rows.Next() {
					var m heraldtype.MinuteCount
					if err := rows.Scan(&m.Minute, &m.Sent, &m.Failed); err != nil {
						return err
					}
					m.Minute = m.Minute.UTC()
					o.Minutes = append(o.Minutes, m)
				}
				return nil
			}},
		indexed{sql: `SELECT error_code, sum(count)::bigint FROM {s}.delivery_minutes WHERE minute >= $1 AND outcome = 'failed'
GROUP BY error_code ORDER BY 2 DESC, 1 LIMIT $2`, args: []any{p.Since, p.MaxCodes},
			read: func(rows pgx.Rows) error {
				for rows.Next() {
					var c heraldtype.CodeCount
					if err := rows.Scan(&c.Code, &c.Count); err != nil {
						return err
					}
					o.FailuresByCode = append(o.FailuresByCode, c)
				}
				return nil
			}},
	)
	if err != nil {
		return heraldtype.Overview{}, err
	}
	for _, n := range totals {
		o.QueueCapped = o.QueueCapped || n > int64(p.Cap)
	}
	o.DeadLetters, o.DeadEvents, o.RuleRunsRunning = capped(dead), capped(events), capped(runs)
	if !oldest.IsZero() {
		o.OldestPending = oldest.UTC()
	}
	if !due.IsZero() {
		o.ReminderDue = due.UTC()
	}
	return o, nil
}

// AddDeliveryMinutes implements store.Store: one upsert of every row,
// adding to the instance's rows of the same minute.
func (s *Store) AddDeliveryMinutes(ctx context.Context, instance string, rows []store.DeliveryMinute) error {
	rows = store.MergeDeliveryMinutes(rows)
	if len(rows) == 0 {
		return nil
	}
	minutes := make([]time.Time, len(rows))
	channels, outcomes, codes := make([]string, len(rows)), make([]string, len(rows)), make([]string, len(rows))
	counts := make([]int64, len(rows))
	for i, r := range rows {
		minutes[i], channels[i], outcomes[i], codes[i], counts[i] = r.Minute, string(r.Channel), string(r.Outcome), r.ErrorCode, r.Count
	}
	_, err := s.pool.Exec(ctx, s.q(`INSERT INTO {s}.delivery_minutes (minute, instance, channel, outcome, error_code, count)
SELECT m, $1, c, o, e, n FROM unnest($2::timestamptz[], $3::text[], $4::text[], $5::text[], $6::bigint[]) AS t(m, c, o, e, n)
ON CONFLICT (minute, instance, channel, outcome, error_code)
DO UPDATE SET count = delivery_minutes.count + excluded.count`), instance, minutes, channels, outcomes, codes, counts)
	return formatError(err, "delivery_minutes")
}

// PruneDeliveryMinutes implements store.Store.
func (s *Store) PruneDeliveryMinutes(ctx context.Context, cutoff time.Time) (int, error) {
	tag, err := s.pool.Exec(ctx, s.q(`DELETE FROM {s}.delivery_minutes WHERE minute < $1`), cutoff)
	if err != nil {
		return 0, formatError(err, "delivery_minutes")
	}
	return int(tag.RowsAffected()), nil
}

// CountReplayable implements store.Store: the deliveries a bulk replay of
// f would take, counted in a LIMITed subquery so it stops at max+1.
func (s *Store) CountReplayable(ctx context.Context, f heraldtype.DeliveryFilter, max int) (int, error) {
	if err := store.CheckReplayDeliveries(f, max); err != nil {
		return 0, err
	}
	var w where
	w.filter(s, f)
	w.conds = append(w.conds, store.ReplayableSQL)
	limit := w.arg(max + 1)
	var n int
	err := s.pool.QueryRow(ctx, s.q(`SELECT count(*) FROM (SELECT 1 FROM {s}.deliveries`+w.sql()+` LIMIT `+limit+`) r`),
		w.args...).Scan(&n)
	return n, formatError(err, "deliveries")
}
