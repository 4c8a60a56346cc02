package rules

import "github.com/heraldhq/herald/heraldtype"

// The escalation rule (issue 36 item 3), one SQL text for both stores. A
// notification's escalation step is a row of escalations, pending until
// it fires or stops. The race of a receipt with a due step is decided by
// the row's lock: the statement that writes a receipt also stops the
// pending steps it answers (EscalationStopSQL), and the fire locks the
// step (FOR UPDATE on PostgreSQL; SQLite's one writer) and then looks for
// the receipt (EscalationReceiptSQL) — whichever commits first wins and
// the other sees its result.

// escalationsOf is the condition on notification_id of the steps a
// receipt on a delivery d answers: those of d's notification, or — when
// d's notification was sent by a step — of the notification that step
// escalated (its later steps wait on every message sent so far).
const escalationsOf = `SELECT coalesce(f.notification_id, d.notification_id) FROM ` + Schema + `deliveries d
		LEFT JOIN ` + Schema + `escalations f ON f.fired_notification_id = d.notification_id`

// EscalationStopSQL is the UPDATE that stops the pending steps the
// receipts in receipts answer: receipts is a FROM item (a table, CTE or
// parenthesized subquery) with the columns delivery_id, error_code and at
// of receipt rows of one event just written. A step stops when its
// unless is that event and it belongs to a receipt's notification (or to
// the notification it escalated); its reason is "receipt <event>".
func EscalationStopSQL(receipts string) string {
	return `UPDATE ` + Schema + `escalations SET state = '` + heraldtype.EscalationStopped + `',
	decided_at = (SELECT max(r.at) FROM ` + receipts + ` r), reason = 'receipt ' || unless, lease_owner = '', lease_until = NULL
WHERE state = '` + heraldtype.EscalationPending + `' AND unless IN (SELECT r.error_code FROM ` + receipts + ` r)
	AND notification_id IN (` + escalationsOf + ` WHERE d.id IN (SELECT r.delivery_id FROM ` + receipts + ` r))`
}

// EscalationCancelSQL is the UPDATE that stops the pending steps of the
// notifications n that sel selects (a condition over n) at now, with the
// reason reason (an SQL expression).
func EscalationCancelSQL(sel, now, reason string) string {
	return `UPDATE ` + Schema + `escalations SET state = '` + heraldtype.EscalationStopped + `', decided_at = ` + now + `,
	reason = ` + reason + `, lease_owner = '', lease_until = NULL
WHERE state = '` + heraldtype.EscalationPending + `' AND notification_id IN (SELECT n.id FROM ` + Schema + `notifications n WHERE ` + sel + `)`
}

// EscalationReceiptSQL counts (SELECT count(*)) the receipts of event
// unless on the deliveries of notification nid and of the notifications
// its fired steps sent: a fire that finds one stops the step instead.
// The index delivery_attempts_receipt answers it per delivery.
func EscalationReceiptSQL(nid, unless any, mark Marker) string {
	return `SELECT count(*) FROM ` + Schema + `delivery_attempts a JOIN ` + Schema + `deliveries d ON d.id = a.delivery_id
WHERE a.outcome = '` + string(heraldtype.OutcomeReceipt) + `' AND a.error_code = ` + mark(unless) + `
	AND (d.notification_id = ` + mark(nid) + ` OR d.notification_id IN (SELECT f.fired_notification_id FROM ` + Schema + `escalations f
		WHERE f.notification_id = ` + mark(nid) + ` AND f.fired_notification_id IS NOT NULL))`
}

// EscalationDueSQL is the condition of a step a claim may take: pending,
// due, and no live lease.
func EscalationDueSQL(now any, mark Marker) string {
	return `state = '` + heraldtype.EscalationPending + `' AND due_at <= ` + mark(now) + ` AND (lease_until IS NULL OR lease_until <= ` +
		mark(now) + `)`
}
