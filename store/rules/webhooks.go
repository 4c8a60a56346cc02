package rules

// The outbound webhook rules (issue 35 item 4, docs/ARCHITECTURE.md
// "Outbound webhooks"), written once for both stores: which endpoints get
// an event (WebhookSubscribed), and which changes emit which types with
// what data. Each is written by the
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
