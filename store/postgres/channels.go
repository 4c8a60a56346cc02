package postgres

import (
	"slices"
	"time"

	"github.com/heraldhq/herald/heraldtype"
	"github.com/heraldhq/herald/store"
	"github.com/heraldhq/herald/store/rules"
)

// This file writes the deliveries of the channels beyond push at enqueue
// (the rules are in store/channels.go; which deliveries a trigger gets is
// store/rules' plan): sms and email to the address the user has now,
// in_app to the inbox. Each kind is one statement whatever the trigger's
// size, its attempt rows included.

// insertChannels returns the steps that write the sms, email and in_app
// deliveries of the plan, which count them into st, flag one due now, and
// collect the inbox items written.
func (s *Store) insertChannels(p store.EnqueueParams, plan rules.Plan, st *enqueueState) []step {
	var r addressedRoutes
	for _, rt := range plan.Addressed {
		r.add(rt)
	}
	inApp := make([]string, len(plan.InApp))
	for i, rt := range plan.InApp {
		inApp[i] = rt.N.ID
	}
	var steps []step
	if len(r.nid) > 0 {
		steps = append(steps, s.insertAddressed(p, &r, st))
	}
	if len(inApp) > 0 {
		steps = append(steps, s.insertInbox(p, inApp, st))
	}
	return steps
}

// addressedRoutes are the sms and email deliveries to write, as the
// columns of unnest.
type addressedRoutes struct {
	nid, uid, typ, guarantee, channel, provider []string
	runAt                                       []time.Time
}

func (r *addressedRoutes) add(rt rules.Route) {
	n := rt.N
	r.nid, r.uid, r.typ = append(r.nid, n.ID), append(r.uid, n.UserID), append(r.typ, n.Type)
	r.guarantee, r.runAt = append(r.guarantee, string(n.Guarantee)), append(r.runAt, rt.RunAt)
	r.channel, r.provider = append(r.channel, string(rt.Channel)), append(r.provider, rt.Provider)
}

// insertAddressed writes the sms and email deliveries, each to the
// user's phone or e-mail address as of this transaction. A user without
// the address, or an address on the suppression list, gives a skipped
// delivery carrying the reason (and its skipped attempt row), never a
// silent drop.
func (s *Store) insertAddressed(p store.EnqueueParams, r *addressedRoutes, st *enqueueState) step {
	return step{what: "deliveries", sql: s.q(`WITH n AS (
	SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::timestamptz[], $6::text[], $7::text[])
		WITH ORDINALITY AS n (id, user_id, type, guarantee, run_at, channel, provider, ord)
), a AS (
	SELECT n.*, CASE n.channel WHEN 'sms' THEN u.phone ELSE u.email END AS address
	FROM n CROSS JOIN LATERAL (SELECT u.phone, u.email FROM {s}.users u WHERE u.id = n.user_id OFFSET 0) u
), c AS (
	SELECT a.*, x.reason AS suppressed,
		CASE WHEN a.address = '' THEN '` + store.CodeNoAddress + `'
			WHEN x.reason IS NOT NULL THEN '` + store.CodeSuppressed + `' ELSE '' END AS skip
	FROM a LEFT JOIN {s}.suppressions x ON x.channel = a.channel AND x.address = a.address
), d AS (
	INSERT INTO {s}.deliveries (notification_id, user_id, type, channel, provider, address, state, guarantee,
		attempt, max_attempts, run_at, last_error_code, last_error, created_at, updated_at, finished_at)
	SELECT c.id, c.user_id, c.type, c.channel, c.provider, c.address,
		CASE c.skip WHEN '' THEN 'pending' ELSE 'skipped' END, c.guarantee, 0, $8, c.run_at, c.skip,
		CASE c.skip WHEN '' THEN ''
			WHEN '` + store.CodeNoAddress + `' THEN 'the user has no ' ||
				CASE c.channel WHEN 'sms' THEN 'phone number' ELSE 'e-mail address' END
			ELSE 'the address is suppressed on ' || c.channel || ': ' || c.suppressed END,
		$9, $9, CASE WHEN c.skip <> '' THEN $9::timestamptz END
	FROM c ORDER BY c.ord
	RETURNING id, notification_id, state, attempt, last_error_code, last_error, run_at
), t AS (
	INSERT INTO {s}.delivery_attempts (delivery_id, attempt, at, outcome, error_code, error)
	SELECT id, attempt, $9, 'skipped', last_error_code, last_error FROM d WHERE state = 'skipped' ORDER BY id
)
SELECT notification_id, state = 'pending' AND run_at <= $9 FROM d`),
		args: []any{r.nid, r.uid, r.typ, r.guarantee, r.runAt, r.channel, r.provider, p.MaxAttempts, p.Now},
		read: st.readCounts}
}

// insertInbox writes one inbox item per in-app notification, in trigger
// order, and its delivery, already sent: the item is the delivery, and
// the provider message id is the item's id.
func (s *Store) insertInbox(p store.EnqueueParams, nids []string, st *enqueueState) step {
	return step{what: "inbox items", sql: s.q(`WITH n AS (
	SELECT * FROM unnest($1::text[]) WITH ORDINALITY AS n (id, ord)
), i AS (
	INSERT INTO {s}.inbox_items (user_id, notification_id, type, title, body, data, created_at)
	SELECT x.user_id, x.id, x.type, x.title, x.body, x.data, $2
	FROM n JOIN {s}.notifications x ON x.id = n.id ORDER BY n.ord
	RETURNING id, user_id, notification_id, type, title, body, data, created_at
), d AS (
	INSERT INTO {s}.deliveries (notification_id, user_id, type, channel, provider, state, guarantee, attempt,
		max_attempts, run_at, provider_message_id, created_at, updated_at, finished_at)
	SELECT i.notification_id, i.user_id, i.type, 'in_app', '` + store.InboxProvider + `', 'sent', x.guarantee, 1,
		$3, $2, i.id::text, $2, $2, $2
	FROM i JOIN {s}.notifications x ON x.id = i.notification_id ORDER BY i.id
	RETURNING id, provider_message_id
), a AS (
	INSERT INTO {s}.delivery_attempts (delivery_id, attempt, at, outcome, provider_message_id)
	SELECT id, 1, $2, 'sent', provider_message_id FROM d ORDER BY id
)
SELECT id, user_id, notification_id, type, title, body, coalesce(data::text, ''), created_at FROM i ORDER BY id`),
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

// inboxUsers are the distinct users of items, sorted.
func inboxUsers(items []heraldtype.InboxItem) []string {
	users := make([]string, 0, len(items))
	for _, it := range items {
		users = append(users, it.UserID)
	}
	slices.Sort(users)
	return slices.Compact(users)
}
