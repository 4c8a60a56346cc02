package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"strings"
	"time"

	"github.com/heraldhq/herald/heraldtype"
	"github.com/heraldhq/herald/store"
	"github.com/heraldhq/herald/store/rules"
)

// Interests: store.Interests (issue 20 item 3, S3.3).

// PutInterests implements store.Interests: multi-row upserts in one
// transaction, merged first (store.MergeInterests) like PostgreSQL's.
func (s *Store) PutInterests(ctx context.Context, is []heraldtype.Interest) error {
	if err := store.CheckInterests(is); err != nil {
		return err
	}
	is = store.MergeInterests(is)
	if len(is) == 0 {
		return nil
	}
	return s.inTx(ctx, func(tx *writeTx) error {
		return insertBatches(is, func(batch []heraldtype.Interest) error {
			args := make([]any, 0, len(batch)*5)
			for _, in := range batch {
				var data sql.NullString
				if len(in.Data) > 0 {
					b, err := json.Marshal(in.Data)
					if err != nil {
						return err
					}
					data = sql.NullString{String: string(b), Valid: true}
				}
				args = append(args, in.Subject, in.UserID, in.Kind, micros(in.At), data)
			}
			_, err := s.exec(ctx, tx, `INSERT INTO interests (subject, user_id, kind, last_at, data) VALUES `+
				rowMarks(len(batch), 5)+` `+rules.InterestUpsertSQL, args...)
			return formatError(err, "interests")
		})
	})
}

// ListInterests implements store.Interests.
func (s *Store) ListInterests(ctx context.Context, f heraldtype.InterestFilter) ([]heraldtype.Interest, string, error) {
	limit, afterSubject, afterKind, err := store.CheckInterestFilter(f)
	if err != nil {
		return nil, "", err
	}
	rows, err := s.read.QueryContext(ctx, `SELECT user_id, subject, kind, last_at, data FROM interests
WHERE user_id = ? AND (? = '' OR subject = ?) AND (subject, kind) > (?, ?)
ORDER BY subject, kind LIMIT ?`, f.UserID, f.Subject, f.Subject, afterSubject, afterKind, limit+1)
	if err != nil {
		return nil, "", formatError(err, "interests")
	}
	defer rows.Close()
	is := []heraldtype.Interest{}
	for rows.Next() {
		var in heraldtype.Interest
		var at int64
		var data sql.NullString
		if err := rows.Scan(&in.UserID, &in.Subject, &in.Kind, &at, &data); err != nil {
			return nil, "", formatError(err, "interests")
		}
		in.At = fromMicros(at)
		if data.Valid {
			if err := json.Unmarshal([]byte(data.String), &in.Data); err != nil {
				return nil, "", err
			}
		}
		is = append(is, in)
	}
	if err := rows.Err(); err != nil {
		return nil, "", formatError(err, "interests")
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
	query := strings.ReplaceAll(rules.Unqualified(rules.InterestedUsersSQL(q, mark(&args))), rules.UsersKey, rules.UsersKeySQLite)
	rows, err := s.read.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, formatError(err, "interests")
	}
	defer rows.Close()
	var out []heraldtype.Interested
	for rows.Next() {
		var u heraldtype.Interested
		var data sql.NullString
		if err := rows.Scan(&u.UserID, &data); err != nil {
			return nil, formatError(err, "interests")
		}
		if data.Valid {
			if err := json.Unmarshal([]byte(data.String), &u.Data); err != nil {
				return nil, err
			}
		}
		out = append(out, u)
	}
	return out, formatError(rows.Err(), "interests")
}

// PruneInterests implements store.Interests.
func (s *Store) PruneInterests(ctx context.Context, cutoff time.Time, limit int) (int, error) {
	if err := store.CheckPruneInterests(limit); err != nil {
		return 0, err
	}
	var n int
	err := s.inTx(ctx, func(tx *writeTx) error {
		res, err := s.exec(ctx, tx, `DELETE FROM interests WHERE (subject, user_id, kind) IN (
	SELECT subject, user_id, kind FROM interests WHERE last_at < ? ORDER BY last_at LIMIT ?)`, micros(cutoff), limit)
		n, err = affected(res, err, "interests")
		return err
	})
	return n, err
}
