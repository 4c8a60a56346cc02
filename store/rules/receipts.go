package rules

import (
	"github.com/heraldhq/herald/heraldtype"
	"github.com/heraldhq/herald/store"
)

// The receipt rule (store/receipt.go, issue 35 item 1), written once for
// both stores: a receipt is an OutcomeReceipt attempt row on its
// delivery's timeline, its error code the event, its error the action.
// The unique index delivery_attempts_receipt (SQLite migration 0022,
// PostgreSQL 0029: delivery_id, error_code WHERE outcome = 'receipt')
// holds each event once per delivery, and every statement that writes
// one ends with ReceiptConflict, so a repeated receipt — a retried
// request, two racing ones, an inbox item marked read twice — writes
// nothing and fails nothing.

// ReceiptColumns are the columns of delivery_attempts a receipt sets; the
// statements below give their values.
const ReceiptColumns = `delivery_id, attempt, at, outcome, error_code, error, provider_message_id, latency`

// ReceiptConflict ends every statement that writes a receipt: the conflict
// target is the partial unique index, so any other failure still fails.
const ReceiptConflict = `ON CONFLICT (delivery_id, error_code) WHERE outcome = '` + string(heraldtype.OutcomeReceipt) + `' DO NOTHING`

// ReceiptSQL is the INSERT of one app receipt, from the caller's
// placeholders of the delivery id, notification id, user ("" for any),
// time, event and action: the delivery must have both ids (its
// data.messageId) and, when a user is given, be that user's. The time is
// never before the delivery's creation (a device clock behind).
func ReceiptSQL(id, nid, user, at, event, action string) string {
	return `INSERT INTO ` + Schema + `delivery_attempts (` + ReceiptColumns + `)
SELECT d.id, d.attempt, CASE WHEN ` + at + ` < d.created_at THEN d.created_at ELSE ` + at + ` END, '` +
		string(heraldtype.OutcomeReceipt) + `', ` + event + `, ` + action + `, '', 0
FROM ` + Schema + `deliveries d
WHERE ` + receiptDelivery(id, nid, user) + `
` + ReceiptConflict
}

// ReceiptExistsSQL counts (SELECT count(*)) the delivery a receipt names,
// as ReceiptSQL finds it: a receipt ReceiptSQL did not write is a
// duplicate when it is 1, not found when 0.
func ReceiptExistsSQL(id, nid, user string) string {
	return `SELECT count(*) FROM ` + Schema + `deliveries d WHERE ` + receiptDelivery(id, nid, user)
}

func receiptDelivery(id, nid, user string) string {
	return `d.id = ` + id + ` AND d.notification_id = ` + nid + ` AND (` + user + ` = '' OR d.user_id = ` + user + `)`
}

// InboxReceiptSQL is the INSERT of the receipt of event (seen, read,
// clicked, archived) for the inbox items i that where selects (an SQL
// condition over i), at the item's column of that event
// (InboxEventColumn) with the action action (an SQL expression; ” for
// none): on the item's in-app delivery (inboxDelivery). An item whose
// delivery already has the event writes nothing.
func InboxReceiptSQL(event heraldtype.ReceiptEvent, action, where string) string {
	return `INSERT INTO ` + Schema + `delivery_attempts (` + ReceiptColumns + `)
SELECT d.id, d.attempt, ` + InboxEventColumn(event, "i") + `, '` + string(heraldtype.OutcomeReceipt) + `', '` + string(event) + `', ` + action + `, '', 0
FROM ` + Schema + `inbox_items i JOIN ` + Schema + `deliveries d ON ` + inboxDelivery("i") + `
WHERE ` + where + `
` + ReceiptConflict
}

// InboxEventColumn is the column of inbox item row item (a table name or
// alias; "" for the bare column an UPDATE sets) that holds when event
// happened to it: seen_at, read_at, clicked_at, archived_at.
func InboxEventColumn(event heraldtype.ReceiptEvent, item string) string {
	col := "read_at"
	switch event {
	case heraldtype.ReceiptSeen:
		col = "seen_at"
	case heraldtype.ReceiptClicked:
		col = "clicked_at"
	case heraldtype.ReceiptArchived:
		col = "archived_at"
	}
	if item == "" {
		return col
	}
	return item + "." + col
}

// InboxDeliveryIDSQL is the id of the in-app delivery of inbox item row
// item (a table name or alias), NULL if there is none: a scalar subquery
// named delivery_id, for the item's message_id. The index
// deliveries_notification_id finds it among the notification's few
// deliveries.
func InboxDeliveryIDSQL(item string) string {
	return `(SELECT d.id FROM ` + Schema + `deliveries d WHERE ` + inboxDelivery(item) + `) AS delivery_id`
}

// inboxDelivery is the condition on deliveries d that selects the in-app
// delivery of inbox item row item: the one whose provider message id is
// the item's id (rules.InboxDeliverySQL and the dispatcher's
// store.InboxSent both record it so).
func inboxDelivery(item string) string {
	return `d.notification_id = ` + item + `.notification_id
	AND d.channel = '` + string(heraldtype.ChannelInApp) + `' AND d.provider = '` + store.InboxProvider + `'
	AND d.provider_message_id = CAST(` + item + `.id AS TEXT)`
}
