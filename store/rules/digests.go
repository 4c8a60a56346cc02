package rules

import (
	"strings"

	"github.com/heraldhq/herald/heraldtype"
)

// The digest rule (issue 36 item 1), one SQL text for both stores. A
// digest is open until its window ends, max_items closes it, or a claim
// takes it; the partial unique index (user_id, type, key) WHERE state =
// 'open' makes "one open digest per key" the schema's rule, so concurrent
// triggers on several instances find or create the same row, and keys
// cannot mix.

// DigestCloseSQL closes the user's open digest of a type and key that no
// longer takes items — its window is over, or it is full — so the
// DigestAddSQL after it opens a new one. table is the digests table.
func DigestCloseSQL(table string, user, typ, key, now any, mark Marker) string {
	return `UPDATE ` + table + ` SET state = 'closed'
WHERE user_id = ` + mark(user) + ` AND type = ` + mark(typ) + ` AND key = ` + mark(key) + `
	AND state = 'open' AND (close_at <= ` + mark(now) + ` OR items >= max_items)`
}

// longer takes items — its window is over, or it is full — so the
// DigestAddSQL finds or creates the open digest of (user, type, key) and
// counts one more item in it (INSERT … ON CONFLICT DO UPDATE … RETURNING
// id, items). A new digest is the row the caller proposes
// (DigestNewRow: open until now + window with its first items, or closed
// at once when those already reach max_items); the statement that brings
// an open digest to max_items closes it (state closed, close_at = now) so
// the worker sends it at once. It returns no row when the open digest no
// longer takes items (window over or full, by a concurrent trigger's
// commit since the DigestCloseSQL before it): the caller closes and adds
// again.
func DigestAddSQL(table string, id, user, typ, key, state, openedAt, closeAt, items, maxItems, now any, mark Marker) string {
	// Each value is marked where it is used: SQLite's markers are
	// positional.
	return `INSERT INTO ` + table + ` AS g (id, user_id, type, key, state, opened_at, close_at, items, max_items, lease_owner)
VALUES (` + mark(id) + `, ` + mark(user) + `, ` + mark(typ) + `, ` + mark(key) + `, ` + mark(state) + `, ` + mark(openedAt) + `, ` +
		mark(closeAt) + `, ` + mark(items) + `, ` + mark(maxItems) + `, '')
` + digestJoinConflict(now, mark) + `
RETURNING id, items`
}

// DigestAddManySQL is DigestAddSQL for many users' digests of one trigger
// at once (PostgreSQL, issue 36 item 6): rows is the caller's SELECT of
// the proposed rows' columns (id, user_id, type, key, state, opened_at,
// close_at, items, max_items, lease_owner), one per user and key, ordered
// by user_id — the lock order of every write over several users' digests.
// It returns id, user_id, key and items for each row added or counted; a
// user and key without a row there found an open digest that no longer
// takes items, and goes through DigestCloseSQL and DigestAddSQL alone.
func DigestAddManySQL(table, rows string, now any, mark Marker) string {
	return `INSERT INTO ` + table + ` AS g (id, user_id, type, key, state, opened_at, close_at, items, max_items, lease_owner)
` + rows + `
` + digestJoinConflict(now, mark) + `
RETURNING id, user_id, key, items`
}

// digestJoinConflict is what DigestAddSQL and DigestAddManySQL do with the
// open digest they find: count one more item, closing it (close_at = now)
// when that reaches max_items — unless it no longer takes items.
func digestJoinConflict(now any, mark Marker) string {
	return `ON CONFLICT (user_id, type, key) WHERE state = 'open' DO UPDATE SET items = g.items + 1,
	state = CASE WHEN g.items + 1 >= g.max_items THEN 'closed' ELSE 'open' END,
	close_at = CASE WHEN g.items + 1 >= g.max_items THEN ` + mark(now) + ` ELSE g.close_at END
WHERE g.close_at > ` + mark(now) + ` AND g.items < g.max_items`
}

// DigestDueSQL is the condition of a digest a claim may take: its window
// over (or max_items closed it: close_at = then), not sent or failed, and
// no live lease.
func DigestDueSQL(now any, mark Marker) string {
	return `state IN ('open', 'closed') AND close_at <= ` + mark(now) + ` AND (lease_until IS NULL OR lease_until <= ` +
		mark(now) + `)`
}

// DigestListSQL is the read of ListDigests: the digests f selects with an
// id below below ("" for the first page), newest first (ids grow with
// time), limit rows. Each filter is a condition only when it is set, so
// a user's page uses the index (user_id, id) and the others the primary
// key.
func DigestListSQL(table, columns string, f heraldtype.DigestFilter, below string, limit int, mark Marker) string {
	var where []string
	if f.UserID != "" {
		where = append(where, "user_id = "+mark(f.UserID))
	}
	if f.Type != "" {
		where = append(where, "type = "+mark(f.Type))
	}
	if f.State != "" {
		where = append(where, "state = "+mark(f.State))
	}
	if below != "" {
		where = append(where, "id < "+mark(below))
	}
	q := "SELECT " + columns + " FROM " + table
	if len(where) > 0 {
		q += " WHERE " + strings.Join(where, " AND ")
	}
	return q + " ORDER BY id DESC LIMIT " + mark(limit)
}
