package postgres

import (
	"context"
	"strconv"
	"strings"

	"github.com/heraldhq/herald/heraldtype"
	"github.com/heraldhq/herald/store"
	"github.com/heraldhq/herald/store/rules"
)

// historySQL is the history summary shared with SQLite (the status rule
// is store/rules.StatusRules), its reasons compared in byte order.
var historySQL = strings.ReplaceAll(rules.HistorySQL, rules.ByteOrder, rules.ByteOrderPostgres)

// ListHistory implements store.Store through store.ListHistory, each
// chunk one query (historyChunk).
func (s *Store) ListHistory(ctx context.Context, f heraldtype.HistoryFilter, scan int) ([]heraldtype.HistoryEntry, string, error) {
	out, next, err := store.ListHistory(f, scan, func(g heraldtype.HistoryFilter, n int) ([]heraldtype.HistoryEntry, error) {
		return s.historyChunk(ctx, g, n)
	})
	if err != nil {
		return nil, "", err
	}
	return out, next, s.historyCounts(ctx, out)
}

// historyChunk reads the newest n+1 notifications of f (which has no
// status) past its cursor, each with its status and reason: the
// notifications are taken first (notifications_created_at, or the user's
// or type's index, walked newest first and stopped at n+1) and only their
// deliveries are summed up. Grouping every notification before the limit
// took the page past the request timeout with 10 million notifications.
func (s *Store) historyChunk(ctx context.Context, f heraldtype.HistoryFilter, n int) ([]heraldtype.HistoryEntry, error) {
	var where []string
	var args []any
	arg := func(v any) string {
		args = append(args, v)
		return "$" + strconv.Itoa(len(args))
	}
	if f.UserID != "" {
		where = append(where, "n.user_id = "+arg(f.UserID))
	}
	if f.Type != "" {
		where = append(where, "n.type = "+arg(f.Type))
	}
	if !f.From.IsZero() {
		where = append(where, "n.created_at >= "+arg(f.From))
	}
	if !f.To.IsZero() {
		where = append(where, "n.created_at < "+arg(f.To))
	}
	if f.Cursor != "" {
		at, id, err := store.DecodeHistoryCursor(f.Cursor)
		if err != nil {
			return nil, err
		}
		where = append(where, "(n.created_at, n.id) < ("+arg(at)+"::timestamptz, "+arg(id)+")")
	}
	cond := ""
	if len(where) > 0 {
		cond = " WHERE " + strings.Join(where, " AND ")
	}
	q := strings.Replace(historySQL, "FROM {s}.notifications n LEFT JOIN",
		"FROM (SELECT * FROM {s}.notifications n"+cond+" ORDER BY n.created_at DESC, n.id DESC LIMIT "+arg(n+1)+") n LEFT JOIN", 1)
	// A subquery's id is not its primary key to the planner: the other
	// selected columns are grouped by too.
	q += strings.Replace(rules.HistoryGroupSQL, "GROUP BY n.id", "GROUP BY n.id, n.user_id, n.type, n.title, n.channels, n.created_at, n.source", 1)
	q += ` ORDER BY created_at DESC, id DESC`
	rows, err := s.pool.Query(ctx, s.q(q), args...)
	if err != nil {
		return nil, formatError(err, "history")
	}
	defer rows.Close()
	var out []heraldtype.HistoryEntry
	for rows.Next() {
		var e heraldtype.HistoryEntry
		var channels []string
		var source []byte
		if err := rows.Scan(&e.NotificationID, &e.UserID, &e.Type, &e.Title, &channels, &e.CreatedAt, &source, &e.Status, &e.Reason); err != nil {
			return nil, formatError(err, "history")
		}
		var err error
		if e.Source, err = store.ParseSource(source); err != nil {
			return nil, err
		}
		e.Channels = make([]heraldtype.Channel, len(channels))
		for i, ch := range channels {
			e.Channels[i] = heraldtype.Channel(ch)
		}
		e.CreatedAt = e.CreatedAt.UTC()
		out = append(out, e)
	}
	if err := rows.Err(); err != nil {
		return nil, formatError(err, "history")
	}
	return out, nil
}

// historyCounts fills each entry's delivery counts by state and its
// channel status, in one query for the page.
func (s *Store) historyCounts(ctx context.Context, es []heraldtype.HistoryEntry) error {
	if len(es) == 0 {
		return nil
	}
	ids := make([]string, len(es))
	for i, e := range es {
		ids[i] = e.NotificationID
	}
	rows, err := s.pool.Query(ctx, s.q(rules.HistoryCountsSQL+`notification_id = ANY ($1::text[])`+rules.HistoryCountsGroupSQL), ids)
	if err != nil {
		return formatError(err, "history")
	}
	defer rows.Close()
	return formatError(rules.HistoryCounts(rows, es), "history")
}
