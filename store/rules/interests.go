package rules

import (
	"strings"

	"github.com/heraldhq/herald/heraldtype"
)

// The interest writes and the audience query both stores run (issue 20
// item 3, S3.3), each one SQL text, so what a repeated interest keeps and
// who is in an audience cannot drift between them.

// InterestUpsertSQL is the conflict arm of the interest insert: a repeated
// (subject, user, kind) keeps the later time and that record's data. An
// older record (a replayed behaviour event) changes nothing.
const InterestUpsertSQL = `ON CONFLICT (subject, user_id, kind) DO UPDATE SET
	last_at = CASE WHEN excluded.last_at > interests.last_at THEN excluded.last_at ELSE interests.last_at END,
	data = CASE WHEN excluded.last_at >= interests.last_at THEN excluded.data ELSE interests.data END`

// UsersKey is the placeholder after an interest's user_id compared with
// users.id: the interest's column sorts in byte order (ByteOrder) and the
// users' key in the database's collation, and PostgreSQL uses an index
// only for a comparison in the index's own collation — without
// UsersKeyPostgres the audience query read every user for each page
// (a hash join over a sequential scan: 0.8 ms a page with 15,000 users,
// issue 39 item 3). SQLite has one collation there and drops it.
const UsersKey = "{userskey}"

// The users-key collations of the two stores (UsersKey).
const (
	UsersKeyPostgres = ` COLLATE "default"`
	UsersKeySQLite   = ``
)

// InterestedUsersSQL is one page of an audience: the registered users
// after q.After with an interest in q.Subject of one of q.Kinds at or
// after q.Since, in user id order, each with the data of their latest
// matching interest. It walks the primary key (subject, user_id, kind)
// from (subject, after), so a page costs its own rows, however large the
// audience.
func InterestedUsersSQL(q heraldtype.InterestQuery, mark Marker) string {
	var match strings.Builder
	match.WriteString(`j.subject = i.subject AND j.user_id = i.user_id`)
	cond := func(alias string) string {
		var b strings.Builder
		if len(q.Kinds) > 0 {
			b.WriteString(` AND ` + alias + `.kind IN (`)
			for k, kind := range q.Kinds {
				if k > 0 {
					b.WriteString(", ")
				}
				b.WriteString(mark(kind))
			}
			b.WriteString(`)`)
		}
		if !q.Since.IsZero() {
			b.WriteString(` AND ` + alias + `.last_at >= ` + mark(q.Since))
		}
		return b.String()
	}
	// The markers are asked for in the order they appear in the text
	// (SQLite binds "?" by position): the data subquery's first.
	dataCond := cond("j")
	subject, after := mark(q.Subject), mark(q.After)
	outerCond := cond("i")
	return `SELECT i.user_id, (SELECT j.data FROM {s}.interests j WHERE ` + match.String() + dataCond +
		` ORDER BY j.last_at DESC LIMIT 1)
FROM {s}.interests i
WHERE i.subject = ` + subject + ` AND i.user_id > ` + after + outerCond + `
	AND EXISTS (SELECT 1 FROM {s}.users u WHERE u.id = i.user_id` + UsersKey + `)
GROUP BY i.subject, i.user_id ORDER BY i.user_id LIMIT ` + mark(q.Limit)
}
