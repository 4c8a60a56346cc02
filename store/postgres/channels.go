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

// insertInbox writes one inbox item per in-app notification, in trigger
// order, and its delivery, already sent (rules.InboxItemSQL,
// rules.InboxDeliverySQL), with its sent attempt row.
func (s *Store) insertInbox(p store.EnqueueParams, routes []rules.Route, st *enqueueState) step {
	nids := make([]string, len(routes))
	for i, r := range routes {
		nids[i] = r.N.ID
	}
	return step{what: "inbox items", sql: s.q(inboxSQL),
		args: []any{nids, p.Now, p.MaxAttempts},
		read: func(rows txRows) error {
			for rows.Next() {
				var it heraldtype.InboxItem
				var data string
				if err := rows.Scan(&it.ID, &it.UserID, &it.NotificationID, &it.Type, &it.Title, &it.Body, &data,
					&it.CreatedAt); err != nil {
					return err
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

// inboxSQL is insertInbox's statement, built once from the rules' fragments.
var inboxSQL = `WITH n AS (
	SELECT * FROM unnest($1::text[]) WITH ORDINALITY AS n (id, ord)
), i AS (
	INSERT INTO {s}.inbox_items (` + rules.InboxItemColumns + `)
	SELECT ` + rules.InboxItemSQL("$2") + `
	FROM n JOIN {s}.notifications x ON x.id = n.id ORDER BY n.ord
	RETURNING id, user_id, notification_id, type, title, body, data, created_at
), d AS (
	INSERT INTO {s}.deliveries (` + rules.InboxDeliveryColumns + `)
	SELECT ` + rules.InboxDeliverySQL("$3", "$2") + `
	FROM i JOIN {s}.notifications x ON x.id = i.notification_id ORDER BY i.id
	RETURNING id, provider_message_id
), a AS (
	INSERT INTO {s}.delivery_attempts (delivery_id, attempt, at, outcome, provider_message_id)
	SELECT id, 1, $2, 'sent', provider_message_id FROM d ORDER BY id
)
SELECT id, user_id, notification_id, type, title, body, coalesce(data::text, ''), created_at FROM i ORDER BY id`

// inboxUsers are the distinct users of items, sorted.
func inboxUsers(items []heraldtype.InboxItem) []string {
	users := make([]string, 0, len(items))
	for _, it := range items {
		users = append(users, it.UserID)
	}
	slices.Sort(users)
	return slices.Compact(users)
}
