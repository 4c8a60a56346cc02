package postgres

import (
	"context"
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
	query := s.q(rules.EngagementSQL(f, rules.EngagementPostgres, marker(&args), f.From.Truncate(time.Hour), f.To))
	rows, err := s.pool.Query(ctx, query, args...)
	if err != nil {
		return nil, formatError(err, "engagement")
	}
	defer rows.Close()
	var out []store.EngagementCount
	for rows.Next() {
		var c store.EngagementCount
		var start *time.Time
		if err := rows.Scan(&start, &c.Type, &c.Channel, &c.Rule, &c.Campaign, &c.Event, &c.N); err != nil {
			return nil, formatError(err, "engagement")
		}
		if start != nil {
			c.Start = start.UTC()
		}
		out = append(out, c)
	}
	return out, formatError(rows.Err(), "engagement")
}

// PruneEngagement implements store.Store.
func (s *Store) PruneEngagement(ctx context.Context, cutoff time.Time) (int, error) {
	tag, err := s.pool.Exec(ctx, s.q(rules.PruneEngagementSQL("$1")), cutoff)
	if err != nil {
		return 0, formatError(err, "engagement")
	}
	return int(tag.RowsAffected()), nil
}
