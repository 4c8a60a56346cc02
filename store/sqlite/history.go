package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/heraldhq/herald/heraldtype"
	"github.com/heraldhq/herald/store"
	"github.com/heraldhq/herald/store/rules"
)

// historySQL is the history summary shared with PostgreSQL (the status
// rule is store/rules.StatusRules), on SQLite's tables.
var historySQL = strings.ReplaceAll(rules.Unqualified(rules.HistorySQL), rules.ByteOrder, rules.ByteOrderSQLite)

// historyCountsSQL reads the channel and state counts of a page.
var historyCountsSQL = rules.Unqualified(rules.HistoryCountsSQL)

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
// notifications are taken first (by notifications_created_at, or the
// user's or type's index) and only their deliveries are summed up, as on
// PostgreSQL.
func (s *Store) historyChunk(ctx context.Context, f heraldtype.HistoryFilter, n int) ([]heraldtype.HistoryEntry, error) {
	var where []string
	var args []any
	if f.UserID != "" {
		where, args = append(where, "n.user_id = ?"), append(args, f.UserID)
	}
	if f.Type != "" {
		where, args = append(where, "n.type = ?"), append(args, f.Type)
	}
	if !f.From.IsZero() {
		where, args = append(where, "n.created_at >= ?"), append(args, micros(f.From))
	}
	if !f.To.IsZero() {
		where, args = append(where, "n.created_at < ?"), append(args, micros(f.To))
	}
	if f.Cursor != "" {
		t, id, err := store.DecodeHistoryCursor(f.Cursor)
		if err != nil {
			return nil, err
		}
		at := micros(t)
		where = append(where, "(n.created_at < ? OR (n.created_at = ? AND n.id < ?))")
		args = append(args, at, at, id)
	}
	args = append(args, n+1)
	q := strings.Replace(historySQL, "FROM notifications n LEFT JOIN",
		"FROM (SELECT * FROM notifications n"+whereSQL(where)+" ORDER BY n.created_at DESC, n.id DESC LIMIT ?) n LEFT JOIN", 1) +
		rules.HistoryGroupSQL + ` ORDER BY created_at DESC, id DESC`
	rows, err := s.read.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, formatError(err, "history")
	}
	defer rows.Close()
	var out []heraldtype.HistoryEntry
	for rows.Next() {
		var e heraldtype.HistoryEntry
		var at int64
		var channels string
		var source sql.NullString
		if err := rows.Scan(&e.NotificationID, &e.UserID, &e.Type, &e.Title, &channels, &at, &source, &e.Status, &e.Reason); err != nil {
			return nil, formatError(err, "history")
		}
		var err error
		if e.Source, err = store.ParseSource([]byte(source.String)); err != nil {
			return nil, err
		}
		if err := json.Unmarshal([]byte(channels), &e.Channels); err != nil {
			return nil, fmt.Errorf("sqlite: notification %q: channels: %w", e.NotificationID, err)
		}
		e.CreatedAt = fromMicros(at)
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
	args := make([]any, len(es))
	for i, e := range es {
		args[i] = e.NotificationID
	}
	rows, err := s.read.QueryContext(ctx, historyCountsSQL+`notification_id IN (`+marks(len(args))+`)`+
		rules.HistoryCountsGroupSQL, args...)
	if err != nil {
		return formatError(err, "history")
	}
	defer rows.Close()
	return formatError(rules.HistoryCounts(rows, es), "history")
}
