package sqlite

import (
	"context"
	"database/sql"
	"time"

	"github.com/heraldhq/herald/store"
	"github.com/heraldhq/herald/store/rules"
)

// Engagement implements store.Store with rules.EngagementSQL: a range of
// the counters' primary key, summed.
func (s *Store) Engagement(ctx context.Context, f store.EngagementFilter) ([]store.EngagementCount, error) {
	if err := store.CheckEngagementFilter(f); err != nil {
		return nil, err
	}
	var args []any
	query := rules.Unqualified(rules.EngagementSQL(f, rules.EngagementSQLite, mark(&args), f.From.Truncate(time.Hour), f.To))
	rows, err := s.read.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, formatError(err, "engagement")
	}
	defer rows.Close()
	var out []store.EngagementCount
	for rows.Next() {
		var c store.EngagementCount
		var start sql.NullInt64
		if err := rows.Scan(&start, &c.Type, &c.Channel, &c.Rule, &c.Campaign, &c.Event, &c.N); err != nil {
			return nil, formatError(err, "engagement")
		}
		if start.Valid {
			c.Start = fromMicros(start.Int64)
		}
		out = append(out, c)
	}
	return out, formatError(rows.Err(), "engagement")
}

// PruneEngagement implements store.Store.
func (s *Store) PruneEngagement(ctx context.Context, cutoff time.Time) (int, error) {
	var n int
	err := s.inTx(ctx, func(tx *writeTx) error {
		res, err := s.exec(ctx, tx, rules.Unqualified(rules.PruneEngagementSQL("?")), micros(cutoff))
		n, err = affected(res, err, "engagement")
		return err
	})
	return n, err
}
