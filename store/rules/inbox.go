package rules

import (
	"strconv"
	"strings"

	"github.com/heraldhq/herald/heraldtype"
	"github.com/heraldhq/herald/store"
)

// The in-app rule (S4.5, issue 22). An in_app notification due now is
// decided in the trigger's own transaction by the user's preferences, as
// they are when it commits (InboxRefusalSQL):
//
//   - allowed: it is written to the user's inbox, and the item is its
//     delivery, sent at once: provider store.InboxProvider, attempt 1 with
//     a sent attempt row, provider message id = the item's id, finished
//     now. The inbox is the record the user is guaranteed to see.
//   - refused (the type turned off, in_app not among the type's channels,
//     in_app opted out): no item; its delivery ends opted_out at once with
//     the policy's code and reason and an opted_out attempt row, so the
//     history and the timeline say why.
//
// A notification of a critical type is never refused. An in_app
// notification scheduled for later (SendAt after now) gets a pending
// delivery due at SendAt and no item yet: the dispatcher writes the item
// when it is due, after the policy's preference check at that time
// (store.InboxSent).

// InboxItemColumns are the columns of inbox_items the enqueue writes;
// InboxItemSQL gives their values.
const InboxItemColumns = `user_id, notification_id, type, title, body, data, created_at`

// InboxItemSQL is the values of InboxItemColumns for the in-app
// notification row x (a notifications row) written at now (a parameter
// marker): the notification's user and content.
func InboxItemSQL(now string) string {
	return `x.user_id, x.id, x.type, x.title, x.body, x.data, ` + now
}

// InboxDeliveryColumns are the columns of deliveries an in-app delivery
// sets; InboxDeliverySQL gives their values.
const InboxDeliveryColumns = `notification_id, user_id, type, channel, provider, state, guarantee, attempt,
	max_attempts, run_at, provider_message_id, created_at, updated_at, finished_at`

// InboxDeliverySQL is the values of InboxDeliveryColumns for the inbox
// item row i of the notification row x, from the parameter markers of
// the trigger's max attempts and time: already sent.
func InboxDeliverySQL(maxAttempts, now string) string {
	return `i.notification_id, i.user_id, i.type, 'in_app', '` + store.InboxProvider + `', 'sent', x.guarantee, 1, ` +
		maxAttempts + `, ` + now + `, CAST(i.id AS TEXT), ` + now + `, ` + now + `, ` + now
}

// InboxRefusedColumns are the columns of deliveries a refused in-app
// delivery sets; InboxRefusedSQL gives their values.
const InboxRefusedColumns = `notification_id, user_id, type, channel, provider, state, guarantee, attempt,
	max_attempts, run_at, last_error_code, last_error, created_at, updated_at, finished_at`

// InboxRefusedSQL is the values of InboxRefusedColumns for the
// notification row x whose in-app delivery the preferences refuse with
// the code refusal (an SQL expression, InboxRefusalSQL), from the
// parameter markers of the trigger's max attempts and time: opted_out,
// with the policy's code and reason.
func InboxRefusedSQL(refusal, maxAttempts, now string) string {
	return `x.id, x.user_id, x.type, 'in_app', '` + store.InboxProvider + `', 'opted_out', x.guarantee, 0, ` +
		maxAttempts + `, ` + now + `, ` + refusal + `, ` + refusalReasonSQL(refusal, "x.type") + `, ` +
		now + `, ` + now + `, ` + now
}

// InboxPendingColumns are the columns of deliveries a scheduled in-app
// delivery sets; InboxPendingSQL gives their values.
const InboxPendingColumns = `notification_id, user_id, type, channel, provider, state, guarantee, attempt,
	max_attempts, run_at, created_at, updated_at`

// InboxPendingSQL is the values of InboxPendingColumns from the SQL
// expressions of the notification's id, user, type and due time and the
// parameter markers of the trigger's max attempts and time: pending,
// attempt 0, no item yet. It is at_least_once whatever the type's
// guarantee: the item and the delivery's move to sent are one
// transaction, so a lease lost before it (a crashed worker) wrote nothing
// and the reaper's retry cannot show the item twice — whereas unknown
// would never show it at all.
func InboxPendingSQL(id, user, typ, runAt, maxAttempts, now string) string {
	return id + `, ` + user + `, ` + typ + `, 'in_app', '` + store.InboxProvider + `', 'pending', '` +
		string(heraldtype.AtLeastOnce) + `', 0, ` + maxAttempts + `, ` + runAt + `, ` + now + `, ` + now
}

// JSON is how a store's SQL reads a stored JSON document (the users'
// preferences): the one dialect difference of InboxRefusalSQL. doc is the
// document's SQL expression (NULL when the user stored none); path are SQL
// text expressions, each an object key, from the document's root.
type JSON interface {
	// True is an SQL boolean: the value at path is JSON true (false when
	// absent).
	True(doc string, path ...string) string
	// Len is the SQL length of the array at path, NULL when absent.
	Len(doc string, path ...string) string
	// Has is an SQL boolean: the array at path holds the string elem, an
	// SQL text expression (false when absent).
	Has(doc, elem string, path ...string) string
}

// The keys of the stored preferences (heraldtype.Preferences and
// TypePreference, as JSON).
const (
	prefsTypes    = `'types'`
	prefsDisabled = `'disabled'`
	prefsChannels = `'channels'`
	prefsOptedOut = `'opted_out_channels'`
)

// InboxRefusalSQL is heraldtype.Preferences.Refusal for channel in_app
// over the stored preferences document prefs (an SQL expression, NULL
// for a user without preferences) and the notification's type typ: the
// empty string when the inbox may be written, else the code of the
// refusal, in the same order of precedence. critical (an SQL boolean)
// bypasses it (issue 22). j reads the document in the store's dialect.
// storetest ("InboxPreferences") holds it to the Go rule case by case on
// every store.
func InboxRefusalSQL(j JSON, prefs, typ, critical string) string {
	inApp := `CAST('` + string(heraldtype.ChannelInApp) + `' AS TEXT)`
	return `CASE WHEN ` + critical + ` THEN ''
	WHEN ` + j.True(prefs, prefsTypes, typ, prefsDisabled) + ` THEN '` + heraldtype.CodeTypeDisabled + `'
	WHEN coalesce(` + j.Len(prefs, prefsTypes, typ, prefsChannels) + `, 0) > 0 AND NOT ` +
		j.Has(prefs, inApp, prefsTypes, typ, prefsChannels) + ` THEN '` + heraldtype.CodeChannelDisabled + `'
	WHEN ` + j.Has(prefs, inApp, prefsOptedOut) + ` THEN '` + heraldtype.CodeChannelOptedOut + `'
	ELSE '' END`
}

// refusalReasonSQL is heraldtype.RefusalReason of the refusal code (an
// SQL expression) for in_app and the type typ (an SQL expression), built
// from the Go messages so the two never differ.
func refusalReasonSQL(code, typ string) string {
	const mark = "\x00"
	var b strings.Builder
	b.WriteString(`CASE ` + code)
	for _, c := range []string{heraldtype.CodeTypeDisabled, heraldtype.CodeChannelDisabled, heraldtype.CodeChannelOptedOut} {
		parts := strings.Split(heraldtype.RefusalReason(c, mark, heraldtype.ChannelInApp), mark)
		for i, p := range parts {
			parts[i] = `'` + strings.ReplaceAll(p, `'`, `''`) + `'`
		}
		b.WriteString(` WHEN '` + c + `' THEN ` + strings.Join(parts, ` || `+typ+` || `))
	}
	b.WriteString(` ELSE '' END`)
	return b.String()
}

// InboxStateSQL reads a user's heraldtype.InboxState, (unread, unseen),
// in one statement (issue 35 item 1). unread is the table expression the
// unread count reads (SQLite names its partial index there: "inbox_items
// INDEXED BY inbox_items_unread"), user the user id's parameter. Unread
// is ListInbox's count, through the partial index of unread items;
// unseen walks only the user's newest heraldtype.InboxUnseenWindow items
// (the (user_id, id) index), as no index covers seen_at and one would
// cost every inbox write.
func InboxStateSQL(unread, user string) string {
	return `SELECT (SELECT count(*) FROM ` + unread + ` WHERE user_id = ` + user + ` AND read_at IS NULL AND archived_at IS NULL),
	(SELECT count(*) FROM (SELECT seen_at, archived_at FROM ` + Schema + `inbox_items WHERE user_id = ` + user +
		` ORDER BY id DESC LIMIT ` + strconv.Itoa(heraldtype.InboxUnseenWindow) + `) w
	WHERE seen_at IS NULL AND archived_at IS NULL)`
}
