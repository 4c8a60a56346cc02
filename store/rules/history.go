package rules

import (
	"github.com/heraldhq/herald/heraldtype"
	"github.com/heraldhq/herald/store"
)

// HistorySQL sums each notification's deliveries up into its status and
// reason (S3.9) by the status rule, StatusRules, in its SQL form.
//
// It selects id, user_id, type, title, channels, created_at, source,
// status, reason. The caller appends the WHERE conditions on the notification n
// (its own columns and the page cursor, so the inner query walks an index
// of notifications), then HistoryGroupSQL, then any condition on the
// summary (status) after a WHERE, the order and the limit. Tables carry
// the Schema placeholder, the reasons' max the ByteOrder one. Each channel's status is read for the page
// afterwards (HistoryCountsSQL, HistoryCounts), in one grouped query.
var HistorySQL = `SELECT id, user_id, type, title, channels, created_at, source, status, reason
FROM (SELECT *, ` + statusSQL() + ` AS status,
		` + reasonSQL() + ` AS reason
	FROM (SELECT n.id, n.user_id, n.type, n.title, n.channels, n.created_at, n.source,
		` + tallySQL() + `
	FROM {s}.notifications n LEFT JOIN {s}.deliveries d ON d.notification_id = n.id`

// HistoryGroupSQL closes HistorySQL after the caller's conditions on n.
const HistoryGroupSQL = ` GROUP BY n.id) AS agg) AS h`

// HistoryCountsSQL selects what HistoryCounts reads, from the deliveries
// of a page of notifications: the caller appends the condition on
// notification_id (its dialect's list of the page's ids), then
// HistoryCountsGroupSQL.
const HistoryCountsSQL = `SELECT notification_id, channel, state, last_error_code, count(*) FROM {s}.deliveries WHERE `

// HistoryCountsGroupSQL closes HistoryCountsSQL.
const HistoryCountsGroupSQL = ` GROUP BY notification_id, channel, state, last_error_code`

// HistoryCounts fills each entry's delivery counts per state and its
// channel status (the status rule per channel, Tally) from rows of
// HistoryCountsSQL. Every entry gets both maps; a channel the entry asked
// for and that has no delivery is FAILED.
func HistoryCounts(rows store.Rows, es []heraldtype.HistoryEntry) error {
	index := make(map[string]int, len(es))
	tallies := make([]*Tallies, len(es))
	for i := range es {
		es[i].Deliveries = map[heraldtype.DeliveryState]int{}
		index[es[i].NotificationID] = i
		tallies[i] = NewTallies(es[i].Channels)
	}
	for rows.Next() {
		var id, code string
		var ch heraldtype.Channel
		var st heraldtype.DeliveryState
		var n int
		if err := rows.Scan(&id, &ch, &st, &code, &n); err != nil {
			return err
		}
		if i, ok := index[id]; ok {
			es[i].Deliveries[st] += n
			tallies[i].Add(ch, st, code, n)
		}
	}
	if err := rows.Err(); err != nil {
		return err
	}
	for i := range es {
		es[i].ChannelStatus = tallies[i].ChannelStatus()
	}
	return nil
}
