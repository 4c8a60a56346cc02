package postgres

import (
	"context"
	"encoding/json"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/heraldhq/herald/heraldtype"
	"github.com/heraldhq/herald/store"
	"github.com/heraldhq/herald/store/rules"
)

// Interests: store.Interests (issue 20 item 3, S3.3).

// PutInterests implements store.Interests in one INSERT … SELECT FROM
// unnest, merged first (store.MergeInterests).
func (s *Store) PutInterests(ctx context.Context, is []heraldtype.Interest) error {
	if err := store.CheckInterests(is); err != nil {
		return err
	}
	is = store.MergeInterests(is)
	if len(is) == 0 {
		return nil
	}
	k := len(is)
	subject, user, kind, data := make([]string, k), make([]string, k), make([]string, k), make([]string, k)
	at := make([]time.Time, k)
	for i, in := range is {
		subject[i], user[i], kind[i], at[i] = in.Subject, in.UserID, in.Kind, in.At
		if len(in.Data) > 0 {
			b, err := json.Marshal(in.Data)
			if err != nil {
				return err
			}
			data[i] = string(b)
		}
	}
	_, err := s.pool.Exec(ctx, s.q(`INSERT INTO {s}.interests AS interests (subject, user_id, kind, last_at, data)
SELECT x.subject, x.user_id, x.kind, x.at, NULLIF(x.data, '')::jsonb
FROM unnest($1::text[], $2::text[], $3::text[], $4::timestamptz[], $5::text[]) AS x (subject, user_id, kind, at, data)
`+rules.InterestUpsertSQL), subject, user, kind, at, data)
	return formatError(err, "interests")
}

// ListInterests implements store.Interests.
func (s *Store) ListInterests(ctx context.Context, f heraldtype.InterestFilter) ([]heraldtype.Interest, string, error) {
	limit, afterSubject, afterKind, err := store.CheckInterestFilter(f)
	if err != nil {
		return nil, "", err
	}
	rows, err := s.pool.Query(ctx, s.q(`SELECT user_id, subject, kind, last_at, data FROM {s}.interests
WHERE user_id = $1 AND ($2 = '' OR subject = $2) AND (subject, kind) > ($3, $4)
ORDER BY subject, kind LIMIT $5`), f.UserID, f.Subject, afterSubject, afterKind, limit+1)
	if err != nil {
		return nil, "", formatError(err, "interests")
	}
	is, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (heraldtype.Interest, error) {
		var in heraldtype.Interest
		var data []byte
		if err := r.Scan(&in.UserID, &in.Subject, &in.Kind, &in.At, &data); err != nil {
			return in, err
		}
		in.At = utc(in.At)
		return in, decodeStringMap(data, &in.Data)
	})
	if err != nil {
		return nil, "", formatError(err, "interests")
	}
	if is == nil {
		is = []heraldtype.Interest{}
	}
	is, next := store.InterestPage(is, limit)
	return is, next, nil
}

// InterestedUsers implements store.Interests with rules.InterestedUsersSQL.
func (s *Store) InterestedUsers(ctx context.Context, q heraldtype.InterestQuery) ([]heraldtype.Interested, error) {
	if err := store.CheckInterestQuery(q); err != nil {
		return nil, err
	}
	var args []any
	query := s.q(interestedUsersSQL(q, marker(&args)))
	rows, err := s.pool.Query(ctx, query, args...)
	if err != nil {
		return nil, formatError(err, "interests")
	}
	return collectInterested(rows)
}

// interestedUsersSQL is rules.InterestedUsersSQL comparing users.id in
// its own collation, so the users' key is an index lookup.
func interestedUsersSQL(q heraldtype.InterestQuery, mark rules.Marker) string {
	return strings.ReplaceAll(rules.InterestedUsersSQL(q, mark), rules.UsersKey, rules.UsersKeyPostgres)
}

// collectInterested reads the rows of rules.InterestedUsersSQL.
func collectInterested(rows pgx.Rows) ([]heraldtype.Interested, error) {
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (heraldtype.Interested, error) {
		var u heraldtype.Interested
		var data []byte
		if err := r.Scan(&u.UserID, &data); err != nil {
			return u, err
		}
		return u, decodeStringMap(data, &u.Data)
	})
	return out, formatError(err, "interests")
}

// PruneInterests implements store.Interests.
func (s *Store) PruneInterests(ctx context.Context, cutoff time.Time, limit int) (int, error) {
	if err := store.CheckPruneInterests(limit); err != nil {
		return 0, err
	}
	tag, err := s.pool.Exec(ctx, s.q(`DELETE FROM {s}.interests WHERE (subject, user_id, kind) IN (
	SELECT subject, user_id, kind FROM {s}.interests WHERE last_at < $1 ORDER BY last_at LIMIT $2)`), cutoff, limit)
	return int(tag.RowsAffected()), formatError(err, "interests")
}

// decodeStringMap decodes a JSON object of strings; nothing for NULL.
func decodeStringMap(b []byte, m *map[string]string) error {
	if len(b) == 0 {
		return nil
	}
	return json.Unmarshal(b, m)
}
