package rules

import (
	"strings"

	"github.com/heraldhq/herald/heraldtype"
)

// The outbound webhook rules (issue 35 item 4, docs/ARCHITECTURE.md
// "Outbound webhooks"), written once for both stores: which endpoints get
// an event (WebhookSubscribed), and which changes emit which types with
// what data — so far an outcome's moves emit delivery.finished,
// dead_letter.created and notification.status_changed
// (OutcomeEventsSQL). Each is written by the statement or transaction
// that makes the change, so a crash can delay a message but never lose
// one, and the join on webhook_endpoints is the subscription check in
// that statement's own snapshot: no cache, and with no endpoint the cost
// is one probe of a tiny table.

// WebhookEventColumns are the columns a new event of the log
// (webhook_events) sets; the statements below give their values in this
// order. The log is insert-only: an endpoint's stream reads it past its
// cursor (docs/ARCHITECTURE.md, "The event log").
const WebhookEventColumns = `endpoint_id, event_id, type, ordering_key, payload, occurred_at`

// WebhookSubscribed is the condition that endpoint alias e receives
// events of the type the SQL expression eventType gives: it is enabled,
// and its events (space-separated, as API key scopes are) are empty —
// every type — or name it. LIKE's '_' matches itself among the others,
// and no type's name holds another's between spaces.
func WebhookSubscribed(e, eventType string) string {
	return e + `.enabled AND (` + e + `.events = '' OR (' ' || ` + e + `.events || ' ') LIKE '% ' || ` + eventType + ` || ' %')`
}

// finalStates is the SQL list of the delivery states a delivery ends in,
// deadStates of the ones that make it a dead letter (the states of
// ClassBroken: dead, unknown).
var (
	finalStates = stateList(heraldtype.StateSent, heraldtype.StateDead, heraldtype.StateUnknown,
		heraldtype.StateSkipped, heraldtype.StateOptedOut, heraldtype.StateRateLimited, heraldtype.StateCancelled)
	deadStates = stateList(classes[ClassBroken].states...)
)

// FinalStatesSQL is the SQL list of the final delivery states, for a
// store's IN (…).
func FinalStatesSQL() string { return finalStates }

func stateList(states ...heraldtype.DeliveryState) string {
	var b strings.Builder
	for _, s := range states {
		if b.Len() > 0 {
			b.WriteString(", ")
		}
		b.WriteString(quoteSQL(string(s)))
	}
	return b.String()
}

// WebhookDialect is what the webhook statements (OutcomeEventsSQL and the
// builders of webhookevents.go) need of a store's SQL dialect; the two
// stores' are WebhookPostgres and WebhookSQLite.
type WebhookDialect struct {
	// JSONObject builds a JSON object of key, value pairs:
	// json_build_object (PostgreSQL), json_object (SQLite).
	JSONObject string
	// JSONObjectAgg aggregates key, value pairs into one object:
	// json_object_agg, json_group_object.
	JSONObjectAgg string
	// Nested is the function that makes a JSON text read from a derived
	// table a JSON value again, so JSONObject embeds it as an object and
	// not as a string: "" in PostgreSQL, whose json type survives, "json"
	// in SQLite, whose JSON subtype does not.
	Nested string
	// Channels is the FROM item of the channels notification n asked for,
	// aliased ch, and Channel its column: unnest(n.channels) in
	// PostgreSQL (a text[]), json_each(n.channels) in SQLite (a JSON
	// array).
	Channels, Channel string
	// ByteOrder is the store's ByteOrderPostgres or ByteOrderSQLite.
	ByteOrder string
	// Time renders the time expression col as RFC 3339 text in UTC with
	// six fractional digits, the same text on both stores.
	Time func(col string) string
	// Hex renders the text expression col's UTF-8 bytes in lower-case
	// hexadecimal.
	Hex func(col string) string
}

// OutcomeEvents names the FROM items OutcomeEventsSQL reads.
type OutcomeEvents struct {
	// Moved is the deliveries an outcome statement just moved, after the
	// move: a FROM item aliased x with the columns id, notification_id,
	// user_id, ntype (the notification type), channel, state, attempt,
	// last_code, last_err (last_error_code and last_error), replay_count,
	// at (the time of the move) and ord (the order of the moves).
	Moved string
	// Current is every delivery of the notifications of the moved ones as
	// it is after the moves (a table or a CTE, unaliased), with the
	// columns id, notification_id, channel, state, last_error_code and
	// replay_count: the deliveries table when the statement runs after
	// the moves (SQLite's transaction, PostgreSQL's Complete with
	// StatusApart), a CTE of the snapshot's siblings and the moved rows
	// when it runs in the moving statement (PostgreSQL's cancel and
	// reaper, whose snapshot does not see its own UPDATE).
	Current string
	// StatusApart leaves notification.status_changed out of
	// OutcomeEventsSQL: the store writes it with StatusEventsSQL in a
	// statement of its own after the moves, in their transaction.
	// PostgreSQL's Complete does (issue 35 item 5): in the moving
	// statement its planner sees the UPDATE's RETURNING as one row and
	// computed the channel status once per notification, 60–235 ms per
	// 200 deliveries; after it the moved rows are plain table rows.
	StatusApart bool
}

// The event ids, computed in SQL from what the statement that makes the
// change reads, so a retried statement cannot mint a second one and every
// endpoint gets the same id:
//   - delivery.finished, evt_d<delivery id>r<replay count>: a delivery
//     finishes once per replay;
//   - dead_letter.created, evt_dl<delivery id>r<replay count>: it dies at
//     most once per replay;
//   - notification.status_changed, evt_n<notification id>r<the sum of its
//     deliveries' replay counts>: a final notification becomes live again
//     only by a replay, which adds one to the sum, so each time it becomes
//     final has an id of its own.

// OutcomeEventsSQL is the INSERT of the webhook messages of an outcome
// statement's moves (ev), one per event and subscribed endpoint, in the
// order of the moves; a notification's status event follows the events
// of its deliveries:
//
//   - delivery.finished for each move to a final state;
//   - dead_letter.created for each move to dead or unknown (the dead
//     letters, which wait for an operator's replay);
//   - notification.status_changed for each notification a move made
//     final: it has a delivery that finished in ev.Moved and none live
//     (pending or leased) any more. Its data is the status rule's answer
//     (StatusRules in its SQL form, as HistorySQL runs it) over
//     ev.Current: status, reason and channel_status, as GET
//     /v1/notifications/{id} reports them. A move that leaves the
//     notification live (a retry, a deferral to the end of quiet hours)
//     reports nothing: DEFERRED and PENDING are not reported (see
//     docs/ARCHITECTURE.md, "As built").
//
// The uncorrelated EXISTS is planned as a one-time filter: without an
// enabled endpoint the statement reads that tiny table once and computes
// nothing else; the status, the costliest part, is computed only when an
// endpoint takes it.
func OutcomeEventsSQL(d WebhookDialect, ev OutcomeEvents) string {
	x := ev.Moved
	delivery := `'delivery_id', x.id, 'notification_id', x.notification_id, 'user_id', x.user_id,
		'notification_type', x.ntype, 'channel', x.channel, 'state', x.state, 'attempt', x.attempt, 'error_code', x.last_code`
	parts := `SELECT 'evt_d' || x.id || 'r' || x.replay_count AS event_id, '` + heraldtype.WebhookDeliveryFinished + `' AS type,
		x.notification_id AS ordering_key, ` + jsonObject(d, delivery) + ` AS payload, x.at AS at, x.ord AS ord, 0 AS part
	FROM ` + x + ` WHERE x.state IN (` + finalStates + `)
	UNION ALL
	SELECT 'evt_dl' || x.id || 'r' || x.replay_count, '` + heraldtype.WebhookDeadLetterCreated + `', x.notification_id,
		` + jsonObject(d, `'list', 'deliveries', `+delivery+`, 'error', x.last_err`) + `, x.at, x.ord, 1
	FROM ` + x + ` WHERE x.state IN (` + deadStates + `)`
	if !ev.StatusApart {
		parts += `
	UNION ALL
	` + statusEvents(d, ev)
	}
	return insertEvents(d, parts)
}

// StatusEventsSQL is the INSERT of the notification.status_changed
// messages of ev's moves alone (OutcomeEventsSQL says which and what),
// for PostgreSQL's Complete, which writes them apart
// (OutcomeEvents.StatusApart). It computes the same status, reason and
// channel_status as the in-statement form, reading each finished
// notification once and its deliveries once (a LATERAL per
// notification): each channel's tally, with a delivery-less row for each
// channel the notification asked for, then the notification's as the sum
// of its channels' (every delivery is on one channel). The in-statement
// form tallies the notification and its channels apart and joins the two;
// held to nested loops (indexPlans), PostgreSQL joined them row by row,
// 34,000 comparisons for a batch of 185 (issue 35 item 5).
func StatusEventsSQL(d WebhookDialect, ev OutcomeEvents) string {
	var rollup []string
	for _, col := range tallyColumns() {
		agg := "sum"
		if strings.HasPrefix(col, "code_") {
			agg = "max"
		}
		rollup = append(rollup, agg+"(c."+col+") AS "+col)
	}
	parts := `SELECT 'evt_n' || s.id || 'r' || s.replays AS event_id, '` + heraldtype.WebhookNotificationStatusChanged + `' AS type,
		s.id AS ordering_key, ` + jsonObject(d, `'notification_id', s.id, 'user_id', s.user_id, 'notification_type', s.type,
		'status', `+statusSQL()+`, 'reason', `+reasonSQL()+`, 'channel_status', `+d.Nested+`(s.channel_status)`) + ` AS payload,
		s.at AS at, s.ord AS ord, 2 AS part
	FROM (SELECT c.id, c.user_id, c.type, c.at, c.ord, CAST(sum(c.replays) AS bigint) AS replays,
			` + strings.Join(rollup, ", ") + `, ` + d.JSONObjectAgg + `(c.channel, c.status) AS channel_status
		FROM (SELECT n.id, n.user_id, n.type, f.at, f.ord, t.*, ` + statusSQL() + ` AS status
			FROM ` + finishedNotifications(ev) + ` f JOIN ` + Schema + `notifications n ON n.id = f.notification_id,
			LATERAL (SELECT d.channel, sum(d.replay_count) AS replays,
				` + tallySQL() + `
				FROM (SELECT d.id, d.channel, d.state, d.last_error_code, d.replay_count FROM ` + ev.Current + ` d
						WHERE d.notification_id = n.id
					UNION ALL SELECT NULL, ` + d.Channel + `, NULL, NULL, NULL FROM ` + d.Channels + `) d
				GROUP BY d.channel) t) c
		GROUP BY c.id, c.user_id, c.type, c.at, c.ord) s
	WHERE s.` + countColumn(ClassLive) + ` = 0 AND EXISTS (SELECT 1 FROM ` + Schema + `webhook_endpoints e
		WHERE ` + WebhookSubscribed("e", "'"+heraldtype.WebhookNotificationStatusChanged+"'") + `)`
	return insertEvents(d, parts)
}

// insertEvents is the INSERT of the events of parts (a derived table
// with the columns event_id, type, ordering_key, payload, at, ord and
// part), one message per event and subscribed endpoint, in the order of
// ord and part.
func insertEvents(d WebhookDialect, parts string) string {
	q := `INSERT INTO ` + Schema + `webhook_events (` + WebhookEventColumns + `)
SELECT e.id, m.event_id, m.type, m.ordering_key, m.payload, m.at
FROM (` + parts + `
) m JOIN ` + Schema + `webhook_endpoints e ON ` + WebhookSubscribed("e", "m.type") + `
WHERE EXISTS (SELECT 1 FROM ` + Schema + `webhook_endpoints WHERE enabled)
ORDER BY m.ord, m.part, e.id`
	return strings.ReplaceAll(q, ByteOrder, d.ByteOrder)
}

func jsonObject(d WebhookDialect, pairs string) string {
	return `CAST(` + d.JSONObject + `(` + pairs + `) AS text)`
}

// statusEvents is the notification.status_changed part of
// OutcomeEventsSQL.
func statusEvents(d WebhookDialect, ev OutcomeEvents) string {
	return `SELECT 'evt_n' || s.id || 'r' || s.replays AS event_id, '` + heraldtype.WebhookNotificationStatusChanged + `' AS type,
		s.id AS ordering_key, ` + jsonObject(d, `'notification_id', s.id, 'user_id', s.user_id, 'notification_type', s.type, 'status', s.status,
		'reason', s.reason, 'channel_status', `+d.Nested+`(c.channel_status)`) + ` AS payload, s.at AS at, s.ord AS ord, 2 AS part
	FROM ` + notificationStatus(ev) + ` s JOIN ` + channelStatusSQL(d, ev) + ` c ON c.notification_id = s.id
	WHERE s.` + countColumn(ClassLive) + ` = 0 AND EXISTS (SELECT 1 FROM ` + Schema + `webhook_endpoints e
		WHERE ` + WebhookSubscribed("e", "'"+heraldtype.WebhookNotificationStatusChanged+"'") + `)`
}

// finishedNotifications is the notifications with a move to a final state
// in ev.Moved, each with the time and the order of its last such move: a
// derived table with the columns notification_id, at, ord.
func finishedNotifications(ev OutcomeEvents) string {
	return `(SELECT x.notification_id, max(x.at) AS at, max(x.ord) AS ord FROM ` + ev.Moved + `
		WHERE x.state IN (` + finalStates + `) GROUP BY x.notification_id)`
}

// notificationStatus is, for each notification of finishedNotifications,
// its tally over ev.Current (tallySQL), its status and reason by the
// status rule (statusSQL, reasonSQL: HistorySQL's own), and the sum of
// its deliveries' replay counts.
func notificationStatus(ev OutcomeEvents) string {
	return `(SELECT h.*, ` + statusSQL() + ` AS status, ` + reasonSQL() + ` AS reason
	FROM (SELECT n.id, n.user_id, n.type, f.at, f.ord, sum(d.replay_count) AS replays,
		` + tallySQL() + `
		FROM ` + finishedNotifications(ev) + ` f JOIN ` + Schema + `notifications n ON n.id = f.notification_id
		LEFT JOIN ` + ev.Current + ` d ON d.notification_id = n.id
		GROUP BY n.id, n.user_id, n.type, f.at, f.ord) h)`
}

// channelStatusSQL is, for each notification of finishedNotifications, its
// channel_status: the status rule over each channel's deliveries in
// ev.Current, for every channel it asked for or has a delivery on (a
// channel asked for without a delivery is FAILED, as Tallies has it),
// aggregated into one JSON object per notification.
func channelStatusSQL(d WebhookDialect, ev OutcomeEvents) string {
	return strings.ReplaceAll(`(SELECT t.notification_id, `+d.JSONObjectAgg+`(t.channel, t.status) AS channel_status
	FROM (SELECT c.notification_id, c.channel, `+statusSQL()+` AS status
		FROM (SELECT k.notification_id, k.channel, `+tallySQL()+`
			FROM (SELECT n.id AS notification_id, `+d.Channel+` AS channel
					FROM `+finishedNotifications(ev)+` f JOIN `+Schema+`notifications n ON n.id = f.notification_id, `+d.Channels+`
				UNION SELECT d.notification_id, d.channel
					FROM `+finishedNotifications(ev)+` f JOIN `+ev.Current+` d ON d.notification_id = f.notification_id) k
			LEFT JOIN `+ev.Current+` d ON d.notification_id = k.notification_id AND d.channel = k.channel
			GROUP BY k.notification_id, k.channel) c) t
	GROUP BY t.notification_id)`, ByteOrder, d.ByteOrder)
}
