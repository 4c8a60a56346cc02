package rules

import (
	"strings"

	"github.com/heraldhq/herald/heraldtype"
)

// The outbound webhook rules (issue 35 item 4, docs/ARCHITECTURE.md
// "Outbound webhooks"), written once for both stores: which endpoints get
// an event (WebhookSubscribed), and which changes emit which types with
// what data — so far a delivery reaching a final state emits
// delivery.finished (DeliveryFinishedSQL). Each is written by the
// statement or transaction that makes the change, so a crash can delay a
// message but never lose one, and the join on webhook_endpoints is the
// subscription check in that statement's own snapshot: no cache, and with
// no endpoint the cost is one probe of a tiny table.

// WebhookMessageColumns are the columns a new message sets; the
// statements below give their values in this order.
const WebhookMessageColumns = `endpoint_id, event_id, type, ordering_key, payload, state, run_at, occurred_at, first_at`

// WebhookSubscribed is the condition that endpoint alias e receives
// events of the type the SQL expression eventType gives: it is enabled,
// and its events (space-separated, as API key scopes are) are empty —
// every type — or name it. LIKE's '_' matches itself among the others,
// and no type's name holds another's between spaces.
func WebhookSubscribed(e, eventType string) string {
	return e + `.enabled AND (` + e + `.events = '' OR (' ' || ` + e + `.events || ' ') LIKE '% ' || ` + eventType + ` || ' %')`
}

// finalStates is the SQL list of the delivery states a delivery ends in.
var finalStates = func() string {
	var b strings.Builder
	for _, s := range []heraldtype.DeliveryState{heraldtype.StateSent, heraldtype.StateDead, heraldtype.StateUnknown,
		heraldtype.StateSkipped, heraldtype.StateOptedOut, heraldtype.StateRateLimited} {
		if b.Len() > 0 {
			b.WriteString(", ")
		}
		b.WriteString("'" + string(s) + "'")
	}
	return b.String()
}()

// DeliveryFinishedSQL is the INSERT of the delivery.finished messages of
// the deliveries in from — a FROM item aliased x with the columns id,
// notification_id, user_id, ntype (the notification type), channel,
// state, attempt, last_code and replay_count, after the change — whose
// state is final, one per delivery and subscribed endpoint, at the time
// expression at. jsonObject is the dialect's json_build_object (PostgreSQL)
// or json_object (SQLite). The event id is the delivery's id and its
// replay count: a delivery finishes once per replay, so a retry of the
// statement that finished it cannot write a second event, and every
// endpoint gets the same id. The ordering key is the notification. The
// uncorrelated EXISTS is planned as a one-time filter: without an enabled
// endpoint the statement reads that tiny table once and joins nothing.
func DeliveryFinishedSQL(jsonObject, from, at string) string {
	return `INSERT INTO ` + Schema + `webhook_messages (` + WebhookMessageColumns + `)
SELECT e.id, 'evt_d' || x.id || 'r' || x.replay_count, '` + heraldtype.WebhookDeliveryFinished + `', x.notification_id,
	CAST(` + jsonObject + `('delivery_id', x.id, 'notification_id', x.notification_id, 'user_id', x.user_id,
		'notification_type', x.ntype, 'channel', x.channel, 'state', x.state, 'attempt', x.attempt,
		'error_code', x.last_code) AS text),
	'pending', ` + at + `, ` + at + `, ` + at + `
FROM ` + from + ` JOIN ` + Schema + `webhook_endpoints e ON ` + WebhookSubscribed("e", "'"+heraldtype.WebhookDeliveryFinished+"'") + `
WHERE EXISTS (SELECT 1 FROM ` + Schema + `webhook_endpoints WHERE enabled) AND x.state IN (` + finalStates + `)`
}
