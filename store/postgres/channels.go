package postgres

import (
	"slices"
	"time"

	"github.com/heraldhq/herald/heraldtype"
	"github.com/heraldhq/herald/store"
	"github.com/heraldhq/herald/store/rules"
)

// This file writes the deliveries of the channels beyond push at enqueue:
// sms and email to the address the user has now, in_app to the inbox.
// Each kind is one statement whatever the trigger's size, its attempt
// rows included. Which deliveries a trigger gets and what each one is are
// store/rules' decisions (the plan in Go, the rest in SQL fragments
// written once for both stores); this file only brings the rows to them
// and persists the result.

// insertChannels returns the steps that write the sms, email and in_app
// deliveries of the plan, which count them into st, flag one due now,
// and collect the inbox items written.
func (s *Store) insertChannels(p store.EnqueueParams, plan rules.Plan, st *enqueueState) []step {
	var steps []step
	if len(plan.Addressed) > 0 {
		steps = append(steps, s.insertAddressed(p, plan.Addressed, st))
	}
	if len(plan.InApp) > 0 {
		steps = append(steps, s.insertInbox(p, plan.InApp, st))
	}
	if len(plan.InAppLater) > 0 {
		steps = append(steps, s.insertInboxLater(p, plan.InAppLater, st))
	}
	return steps
}

// insertAddressed writes the sms and email deliveries, each to the
// user's phone or e-mail address as of this transaction, or skipped
// (rules.SkipSQL) with its skipped attempt row.
func (s *Store) insertAddressed(p store.EnqueueParams, routes []rules.Route, st *enqueueState) step {
	k := len(routes)
	nid, uid, typ, guarantee := make([]string, k), make([]string, k), make([]string, k), make([]string, k)
	channel, provider, runAt := make([]string, k), make([]string, k), make([]time.Time, k)
	for i, r := range routes {
		nid[i], uid[i], typ[i], guarantee[i] = r.N.ID, r.N.UserID, r.N.Type, string(r.N.Guarantee)
		channel[i], provider[i], runAt[i] = string(r.Channel), r.Provider, r.RunAt
	}
	return step{what: "deliveries", sql: s.q(addressedSQL),
		args: []any{nid, uid, typ, guarantee, runAt, channel, provider, p.MaxAttempts, p.Now},
		read: st.readCounts}
}

// insertInbox writes, for each in-app notification due now and in
// trigger order, the inbox item and its delivery, already sent
// (rules.InboxItemSQL, rules.InboxDeliverySQL), with its sent attempt row
// — or, when the user's preferences in this transaction refuse it
// (rules.InboxRefusalSQL), an opted_out delivery with its attempt row and
// no item (issue 22). One statement, whatever the trigger's size.
func (s *Store) insertInbox(p store.EnqueueParams, routes []rules.Route, st *enqueueState) step {
	nids, critical := make([]string, len(routes)), make([]bool, len(routes))
	for i, r := range routes {
		nids[i], critical[i] = r.N.ID, r.N.Critical
	}
	return step{what: "inbox items", sql: s.q(inboxSQL),
		args: []any{nids, p.Now, p.MaxAttempts, critical},
		read: func(rows txRows) error {
			for rows.Next() {
				var it heraldtype.InboxItem
				var data string
				var item bool
				if err := rows.Scan(&item, &it.ID, &it.UserID, &it.NotificationID, &it.Type, &it.Title, &it.Body, &data,
					&it.CreatedAt); err != nil {
					return err
				}
				if !item {
					st.counts[it.NotificationID]++
					continue
				}
				if err := decodeInboxData(&it, data); err != nil {
					return err
				}
				it.CreatedAt = utc(it.CreatedAt)
				st.counts[it.NotificationID]++
				st.inbox = append(st.inbox, it)
			}
			return nil
		}}
}

// addressedSQL is insertAddressed's statement, built once from the rules'
// fragments.
var addressedSQL = `WITH n AS (
	SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::timestamptz[], $6::text[], $7::text[])
		WITH ORDINALITY AS n (id, user_id, type, guarantee, run_at, channel, provider, ord)
), a AS (
	SELECT n.*, ` + rules.AddressSQL("n.channel", "u.phone", "u.email") + ` AS address
	FROM n CROSS JOIN LATERAL (SELECT u.phone, u.email FROM {s}.users u WHERE u.id = n.user_id OFFSET 0) u
), c AS (
	SELECT a.*, x.reason AS suppressed, ` + rules.SkipSQL("a.address", "x.reason") + ` AS skip
	FROM a LEFT JOIN {s}.suppressions x ON x.channel = a.channel AND x.address = a.address
), d AS (
	INSERT INTO {s}.deliveries (notification_id, user_id, type, channel, provider, address, state, guarantee,
		attempt, max_attempts, run_at, last_error_code, last_error, created_at, updated_at, finished_at)
	SELECT c.id, c.user_id, c.type, c.channel, c.provider, c.address, ` + rules.AddressedStateSQL("c.skip") + `,
		c.guarantee, 0, $8, c.run_at, c.skip, ` + rules.SkipErrorSQL("c.skip", "c.channel", "c.suppressed") + `,
		$9, $9, ` + rules.FinishedAtSQL("c.skip", "$9::timestamptz") + `
	FROM c ORDER BY c.ord
	RETURNING id, notification_id, state, attempt, last_error_code, last_error, run_at
), t AS (
	INSERT INTO {s}.delivery_attempts (delivery_id, attempt, at, outcome, error_code, error)
	SELECT id, attempt, $9, 'skipped', last_error_code, last_error FROM d WHERE state = 'skipped' ORDER BY id
)
SELECT notification_id, state = 'pending' AND run_at <= $9 FROM d`

// insertInboxLater writes a pending delivery, due at its SendAt, for each
// in-app notification scheduled for later (rules.InboxPendingSQL): its
// item is written when it is due (store.InboxSent, issue 22).
func (s *Store) insertInboxLater(p store.EnqueueParams, routes []rules.Route, st *enqueueState) step {
	k := len(routes)
	nid, uid, typ, runAt := make([]string, k), make([]string, k), make([]string, k), make([]time.Time, k)
	for i, r := range routes {
		nid[i], uid[i], typ[i], runAt[i] = r.N.ID, r.N.UserID, r.N.Type, r.RunAt
	}
	return step{what: "deliveries", sql: s.q(`INSERT INTO {s}.deliveries (` + rules.InboxPendingColumns + `)
SELECT ` + rules.InboxPendingSQL("n.id", "n.user_id", "n.type", "n.run_at", "$5", "$6") + `
FROM unnest($1::text[], $2::text[], $3::text[], $4::timestamptz[]) WITH ORDINALITY
	AS n (id, user_id, type, run_at, ord)
ORDER BY n.ord
RETURNING notification_id, run_at <= $6`),
		args: []any{nid, uid, typ, runAt, p.MaxAttempts, p.Now},
		read: st.readCounts}
}

// inboxRefusal is the in-app preference rule over the user_preferences
// row p of the notification row x of the trigger's row n.
var inboxRefusal = rules.InboxRefusalSQL(prefsJSON{}, "p.prefs", "x.type", "n.critical")

// inboxSQL is insertInbox's statement, built once from the rules' fragments.
// The preferences are read per recipient by primary key (LATERAL, OFFSET
// 0, as the devices of insertDeliveries are).
var inboxSQL = `WITH n AS (
	SELECT * FROM unnest($1::text[], $4::bool[]) WITH ORDINALITY AS n (id, critical, ord)
), r AS (
	SELECT n.ord, x.*, ` + inboxRefusal + ` AS refusal
	FROM n JOIN {s}.notifications x ON x.id = n.id
	LEFT JOIN LATERAL (SELECT p.prefs FROM {s}.user_preferences p WHERE p.user_id = x.user_id OFFSET 0) p ON TRUE
), i AS (
	INSERT INTO {s}.inbox_items (` + rules.InboxItemColumns + `)
	SELECT ` + rules.InboxItemSQL("$2") + `
	FROM r x WHERE x.refusal = '' ORDER BY x.ord
	RETURNING id, user_id, notification_id, type, title, body, data, created_at
), o AS (
	INSERT INTO {s}.deliveries (` + rules.InboxRefusedColumns + `)
	SELECT ` + rules.InboxRefusedSQL("x.refusal", "$3", "$2::timestamptz") + `
	FROM r x WHERE x.refusal <> '' ORDER BY x.ord
	RETURNING id, notification_id, attempt, last_error_code, last_error
), oa AS (
	INSERT INTO {s}.delivery_attempts (delivery_id, attempt, at, outcome, error_code, error)
	SELECT id, attempt, $2, 'opted_out', last_error_code, last_error FROM o ORDER BY id
), d AS (
	INSERT INTO {s}.deliveries (` + rules.InboxDeliveryColumns + `)
	SELECT ` + rules.InboxDeliverySQL("$3", "$2") + `
	FROM i JOIN {s}.notifications x ON x.id = i.notification_id ORDER BY i.id
	RETURNING id, provider_message_id
), a AS (
	INSERT INTO {s}.delivery_attempts (delivery_id, attempt, at, outcome, provider_message_id)
	SELECT id, 1, $2, 'sent', provider_message_id FROM d ORDER BY id
)
SELECT TRUE, id, user_id, notification_id, type, title, body, coalesce(data::text, ''), created_at FROM i
UNION ALL
SELECT FALSE, 0, '', notification_id, '', '', '', '', $2 FROM o
ORDER BY 1 DESC, 2`

// inboxUsers are the distinct users of items, sorted.
func inboxUsers(items []heraldtype.InboxItem) []string {
	users := make([]string, 0, len(items))
	for _, it := range items {
		users = append(users, it.UserID)
	}
	slices.Sort(users)
	return slices.Compact(users)
}
