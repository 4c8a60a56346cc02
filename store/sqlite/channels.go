package sqlite

import (
	"context"
	"slices"

	"github.com/heraldhq/herald/heraldtype"
	"github.com/heraldhq/herald/store"
	"github.com/heraldhq/herald/store/rules"
)

// This file writes the deliveries of the channels beyond push at enqueue:
// sms and email to the address the user has now, in_app to the inbox.
// Which deliveries a trigger gets and what each one is are store/rules'
// decisions (the plan in Go, the rest in SQL fragments written once for
// both stores); this file only brings the rows to them and persists the
// result.

// insertChannels writes the sms, email and in_app deliveries of the
// plan, adds them to counts, and returns the inbox items it wrote.
func (s *Store) insertChannels(ctx context.Context, tx *writeTx, p store.EnqueueParams, plan rules.Plan,
	counts map[string]int) ([]heraldtype.InboxItem, error) {
	if len(plan.Addressed) == 0 && len(plan.InApp) == 0 && len(plan.InAppLater) == 0 {
		return nil, nil
	}
	// Notifications that got a delivery which is final at once (skipped,
	// or an in-app one, sent or opted out), whose attempt rows are written
	// last.
	final := make(map[string]bool)
	if err := s.insertAddressed(ctx, tx, p, plan.Addressed, counts, final); err != nil {
		return nil, err
	}
	items, err := s.insertInbox(ctx, tx, p, plan.InApp, counts)
	if err != nil {
		return nil, err
	}
	if err := s.insertInboxLater(ctx, tx, p, plan.InAppLater, counts); err != nil {
		return nil, err
	}
	for _, r := range plan.InApp {
		final[r.N.ID] = true
	}
	ids := make([]string, 0, len(final))
	for id := range final {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	now := micros(p.Now)
	err = inLists(ids, func(args []any) error {
		_, err := s.exec(ctx, tx, `INSERT INTO delivery_attempts (delivery_id, attempt, at, outcome, error_code, error,
	provider_message_id)
SELECT id, attempt, ?, state, last_error_code, last_error, provider_message_id
FROM deliveries WHERE notification_id IN (`+marks(len(args))+`) AND state IN ('sent', 'skipped', 'opted_out') ORDER BY id`,
			append([]any{now}, args...)...)
		return formatError(err, "attempts")
	})
	return items, err
}

// insertAddressed writes the sms and email deliveries, each to the
// user's phone or e-mail address read in this transaction, or skipped
// (rules.SkipSQL), and notes in final the notifications that got a
// skipped one.
func (s *Store) insertAddressed(ctx context.Context, tx *writeTx, p store.EnqueueParams, routes []rules.Route,
	counts map[string]int, final map[string]bool) error {
	now := micros(p.Now)
	return insertBatches(routes, func(rs []rules.Route) error {
		args := make([]any, 0, len(rs)*8+4)
		for i, r := range rs {
			args = append(args, i, r.N.ID, r.N.UserID, r.N.Type, string(r.N.Guarantee), micros(r.RunAt),
				string(r.Channel), r.Provider)
		}
		args = append(args, p.MaxAttempts, now, now, now)
		rows, err := s.query(ctx, tx, `WITH n (ord, nid, uid, type, guarantee, run_at, channel, provider) AS (VALUES `+
			rowMarks(len(rs), 8)+`),`+addressedSQL, args...)
		if err != nil {
			return formatError(err, "deliveries")
		}
		defer rows.Close()
		for rows.Next() {
			var id string
			var state heraldtype.DeliveryState
			if err := rows.Scan(&id, &state); err != nil {
				return formatError(err, "deliveries")
			}
			counts[id]++
			if state == heraldtype.StateSkipped {
				final[id] = true
			}
		}
		return formatError(rows.Err(), "deliveries")
	})
}

// insertInbox writes, for each in-app notification due now and in
// trigger order, the inbox item and its delivery, already sent
// (rules.InboxItemSQL, rules.InboxDeliverySQL) — or, when the user's
// preferences in this transaction refuse it (rules.InboxRefusalSQL), an
// opted_out delivery and no item (issue 22).
func (s *Store) insertInbox(ctx context.Context, tx *writeTx, p store.EnqueueParams, routes []rules.Route,
	counts map[string]int) ([]heraldtype.InboxItem, error) {
	var items []heraldtype.InboxItem
	now := micros(p.Now)
	err := insertBatches(routes, func(rs []rules.Route) error {
		args := make([]any, 0, 3*len(rs)+4)
		for i, r := range rs {
			args = append(args, i, r.N.ID, r.N.Critical)
		}
		values := `WITH n (ord, nid, critical) AS (VALUES ` + rowMarks(len(rs), 3) + `)`
		refused, err := s.query(ctx, tx, values+inboxRefusedSQL, append(args, p.MaxAttempts, now, now, now, now)...)
		if err := countDeliveries(refused, err, counts); err != nil {
			return err
		}
		rows, err := s.query(ctx, tx, values+inboxItemSQL, append(args, now)...)
		if err != nil {
			return formatError(err, "inbox items")
		}
		got, err := scanInboxRows(rows)
		if err != nil {
			return err
		}
		items = append(items, got...)
		if len(got) == 0 {
			return nil
		}
		ids := make([]any, 0, len(got)+5)
		ids = append(ids, p.MaxAttempts, now, now, now, now)
		for _, it := range got {
			ids = append(ids, it.ID)
		}
		_, err = s.exec(ctx, tx, inboxDeliverySQL+marks(len(got))+`) ORDER BY i.id`, ids...)
		return formatError(err, "deliveries")
	})
	if err != nil {
		return nil, err
	}
	slices.SortFunc(items, func(a, b heraldtype.InboxItem) int { return cmpInt64(a.ID, b.ID) })
	for _, it := range items {
		counts[it.NotificationID]++
	}
	return items, nil
}

// insertInboxLater writes a pending delivery, due at its SendAt, for each
// in-app notification scheduled for later (rules.InboxPendingSQL): its
// item is written when it is due (store.InboxSent, issue 22).
func (s *Store) insertInboxLater(ctx context.Context, tx *writeTx, p store.EnqueueParams, routes []rules.Route,
	counts map[string]int) error {
	now := micros(p.Now)
	return insertBatches(routes, func(rs []rules.Route) error {
		args := make([]any, 0, len(rs)*5+3)
		for i, r := range rs {
			args = append(args, i, r.N.ID, r.N.UserID, r.N.Type, micros(r.RunAt))
		}
		rows, err := s.query(ctx, tx, `WITH n (ord, nid, uid, type, run_at) AS (VALUES `+rowMarks(len(rs), 5)+`)
`+inboxPendingSQL, append(args, p.MaxAttempts, now, now)...)
		return countDeliveries(rows, err, counts)
	})
}

// inboxRefusal is the in-app preference rule over the user_preferences
// row p of the notification x joined to the VALUES row n.
var inboxRefusal = rules.InboxRefusalSQL(prefsJSON{}, "p.prefs", "x.type", "n.critical")

// The statements of insertAddressed and insertInbox after their VALUES
// lists, built once from the rules' fragments.
var (
	addressedSQL = `
a AS (SELECT n.*, ` + rules.AddressSQL("n.channel", "u.phone", "u.email") + ` AS address
	FROM n JOIN users u ON u.id = n.uid),
b AS (SELECT a.*, (SELECT x.reason FROM suppressions x WHERE x.channel = a.channel AND x.address = a.address) AS suppressed
	FROM a),
c AS (SELECT b.*, ` + rules.SkipSQL("b.address", "b.suppressed") + ` AS skip FROM b)
INSERT INTO deliveries (notification_id, user_id, type, channel, provider, address, state, guarantee,
	attempt, max_attempts, run_at, last_error_code, last_error, created_at, updated_at, finished_at)
SELECT c.nid, c.uid, c.type, c.channel, c.provider, c.address, ` + rules.AddressedStateSQL("c.skip") + `, c.guarantee,
	0, ?, c.run_at, c.skip, ` + rules.SkipErrorSQL("c.skip", "c.channel", "c.suppressed") + `,
	?, ?, ` + rules.FinishedAtSQL("c.skip", "?") + `
FROM c ORDER BY c.ord
RETURNING notification_id, state`
	inboxItemSQL = `
INSERT INTO inbox_items (` + rules.InboxItemColumns + `)
SELECT ` + rules.InboxItemSQL("?") + ` FROM n JOIN notifications x ON x.id = n.nid
	LEFT JOIN user_preferences p ON p.user_id = x.user_id
WHERE ` + inboxRefusal + ` = '' ORDER BY n.ord
RETURNING ` + inboxNewColumns
	inboxRefusedSQL = `,
r AS (SELECT n.ord, x.*, ` + inboxRefusal + ` AS refusal FROM n JOIN notifications x ON x.id = n.nid
	LEFT JOIN user_preferences p ON p.user_id = x.user_id)
INSERT INTO deliveries (` + rules.InboxRefusedColumns + `)
SELECT ` + rules.InboxRefusedSQL("x.refusal", "?", "?") + ` FROM r x WHERE x.refusal <> '' ORDER BY x.ord
RETURNING notification_id`
	inboxPendingSQL = `INSERT INTO deliveries (` + rules.InboxPendingColumns + `)
SELECT ` + rules.InboxPendingSQL("n.nid", "n.uid", "n.type", "n.run_at", "?", "?") + `
FROM n ORDER BY n.ord
RETURNING notification_id`
	inboxDeliverySQL = `INSERT INTO deliveries (` + rules.InboxDeliveryColumns + `)
SELECT ` + rules.InboxDeliverySQL("?", "?") + `
FROM inbox_items i JOIN notifications x ON x.id = i.notification_id
WHERE i.id IN (`
)
