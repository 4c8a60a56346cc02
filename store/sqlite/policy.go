package sqlite

import (
	"cmp"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"time"

	"github.com/heraldhq/herald/heraldtype"
	"github.com/heraldhq/herald/store"
	"github.com/heraldhq/herald/store/rules"
)

// PutType implements store.Store: the type is kept as one JSON document.
func (s *Store) PutType(ctx context.Context, t heraldtype.NotificationType, now time.Time) (heraldtype.NotificationType, error) {
	t, b, err := store.EncodeType(t, now)
	if err != nil {
		return t, err
	}
	err = s.inTx(ctx, func(tx *writeTx) error {
		_, err := s.exec(ctx, tx, `INSERT INTO notification_types (name, config, updated_at) VALUES (?, ?, ?)
ON CONFLICT (name) DO UPDATE SET config = excluded.config, updated_at = excluded.updated_at`,
			t.Name, string(b), micros(t.UpdatedAt))
		return formatError(err, "type")
	})
	return t, err
}

// GetType implements store.Store.
func (s *Store) GetType(ctx context.Context, name string) (heraldtype.NotificationType, error) {
	var config []byte
	err := s.read.QueryRowContext(ctx, `SELECT config FROM notification_types WHERE name = ?`, name).Scan(&config)
	if err != nil {
		return heraldtype.NotificationType{}, formatError(err, "type "+quote(name))
	}
	return store.DecodeType(config)
}

// ListTypes implements store.Store.
func (s *Store) ListTypes(ctx context.Context) ([]heraldtype.NotificationType, error) {
	rows, err := s.read.QueryContext(ctx, `SELECT config FROM notification_types ORDER BY name`)
	if err != nil {
		return nil, formatError(err, "types")
	}
	defer rows.Close()
	var out []heraldtype.NotificationType
	for rows.Next() {
		var config []byte
		if err := rows.Scan(&config); err != nil {
			return nil, formatError(err, "types")
		}
		t, err := store.DecodeType(config)
		if err != nil {
			return nil, err
		}
		out = append(out, t)
	}
	return out, formatError(rows.Err(), "types")
}

// PutPreferences implements store.Store.
func (s *Store) PutPreferences(ctx context.Context, p heraldtype.Preferences, now time.Time) (heraldtype.Preferences, error) {
	p, b, err := store.EncodePreferences(p, now)
	if err != nil {
		return p, err
	}
	err = s.inTx(ctx, func(tx *writeTx) error {
		_, err := s.exec(ctx, tx, `INSERT INTO user_preferences (user_id, prefs, updated_at) VALUES (?, ?, ?)
ON CONFLICT (user_id) DO UPDATE SET prefs = excluded.prefs, updated_at = excluded.updated_at`,
			p.UserID, string(b), micros(p.UpdatedAt))
		if err != nil {
			return formatError(err, "preferences of user "+quote(p.UserID))
		}
		return s.addDigestScheduleTypes(ctx, tx, p)
	})
	if err != nil {
		return p, err
	}
	return s.GetPreferences(ctx, p.UserID)
}

// SwapPreferences implements store.Store in one transaction.
func (s *Store) SwapPreferences(ctx context.Context, p heraldtype.Preferences, was, now time.Time) (heraldtype.Preferences, bool, error) {
	p, b, err := store.EncodePreferences(p, now)
	if err != nil {
		return p, false, err
	}
	swapped := false
	err = s.inTx(ctx, func(tx *writeTx) error {
		q, args := `UPDATE user_preferences SET prefs = ?, updated_at = ? WHERE user_id = ? AND updated_at = ?`,
			[]any{string(b), micros(p.UpdatedAt), p.UserID, micros(was)}
		if was.IsZero() {
			q, args = `INSERT INTO user_preferences (user_id, prefs, updated_at) VALUES (?, ?, ?) ON CONFLICT (user_id) DO NOTHING`,
				[]any{p.UserID, string(b), micros(p.UpdatedAt)}
		}
		n, err := s.execN(ctx, tx, "preferences of user "+quote(p.UserID), q, args...)
		swapped = n == 1
		if err != nil || !swapped {
			return err
		}
		return s.addDigestScheduleTypes(ctx, tx, p)
	})
	if err != nil || !swapped {
		return p, false, err
	}
	p, err = s.GetPreferences(ctx, p.UserID)
	return p, true, err
}

// addDigestScheduleTypes adds the types p schedules digests for to
// digest_schedule_types, in the preference write's transaction.
func (s *Store) addDigestScheduleTypes(ctx context.Context, tx *writeTx, p heraldtype.Preferences) error {
	types := store.ScheduledDigestTypes(p)
	if len(types) == 0 {
		return nil
	}
	b, err := json.Marshal(types)
	if err != nil {
		return err
	}
	_, err = s.exec(ctx, tx, `INSERT INTO digest_schedule_types (type) SELECT value FROM json_each(?) WHERE true
ON CONFLICT (type) DO NOTHING`, string(b))
	return formatError(err, "digest schedule types")
}

// DigestScheduleTypes implements store.Store.
func (s *Store) DigestScheduleTypes(ctx context.Context) ([]string, error) {
	rows, err := s.read.QueryContext(ctx, `SELECT type FROM digest_schedule_types ORDER BY type`)
	if err != nil {
		return nil, formatError(err, "digest schedule types")
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var t string
		if err := rows.Scan(&t); err != nil {
			return nil, formatError(err, "digest schedule types")
		}
		out = append(out, t)
	}
	return out, formatError(rows.Err(), "digest schedule types")
}

// GetPreferences implements store.Store: one read joins the user (for its
// time zone, and to tell a missing user from one without preferences).
func (s *Store) GetPreferences(ctx context.Context, userID string) (heraldtype.Preferences, error) {
	var tz string
	var prefs sql.NullString
	err := s.read.QueryRowContext(ctx, `SELECT u.timezone, p.prefs FROM users u
LEFT JOIN user_preferences p ON p.user_id = u.id WHERE u.id = ?`, userID).Scan(&tz, &prefs)
	if err != nil {
		return heraldtype.Preferences{}, formatError(err, "user "+quote(userID))
	}
	return decodePreferences(userID, tz, prefs)
}

// GetPreferencesMany implements store.Store with one read; the ids travel
// as one JSON array.
func (s *Store) GetPreferencesMany(ctx context.Context, userIDs []string) (map[string]heraldtype.Preferences, error) {
	out := make(map[string]heraldtype.Preferences, len(userIDs))
	if len(userIDs) == 0 {
		return out, nil
	}
	ids, err := json.Marshal(userIDs)
	if err != nil {
		return nil, fmt.Errorf("sqlite: preferences: %w", err)
	}
	rows, err := s.read.QueryContext(ctx, `SELECT u.id, u.timezone, p.prefs FROM users u
LEFT JOIN user_preferences p ON p.user_id = u.id WHERE u.id IN (SELECT value FROM json_each(?))`, string(ids))
	if err != nil {
		return nil, formatError(err, "preferences")
	}
	defer rows.Close()
	for rows.Next() {
		var id, tz string
		var prefs sql.NullString
		if err := rows.Scan(&id, &tz, &prefs); err != nil {
			return nil, formatError(err, "preferences")
		}
		p, err := decodePreferences(id, tz, prefs)
		if err != nil {
			return nil, err
		}
		out[id] = p
	}
	return out, formatError(rows.Err(), "preferences")
}

// decodePreferences is store.DecodePreferences of a nullable column.
func decodePreferences(userID, tz string, prefs sql.NullString) (heraldtype.Preferences, error) {
	var stored []byte
	if prefs.Valid {
		stored = []byte(prefs.String)
	}
	return store.DecodePreferences(userID, tz, stored)
}

// AcquireDedupe implements policy.Limiter: a batch of one
// (AcquireDedupeBatch).
func (s *Store) AcquireDedupe(ctx context.Context, key, owner string, window time.Duration, now time.Time) (bool, error) {
	if err := store.CheckAcquireDedupe(window); err != nil {
		return false, err
	}
	ok, err := s.AcquireDedupeBatch(ctx, []heraldtype.DedupeLock{{Key: key, Owner: owner, Window: window}}, now)
	if err != nil {
		return false, err
	}
	return ok[0], nil
}

// AcquireDedupeBatch implements policy.DedupeBatchLimiter in one write
// transaction: per item in order, one upsert that takes the lock over
// only when it has expired and returns whoever holds it after. SQLite
// runs one writer at a time, so the batch is atomic.
func (s *Store) AcquireDedupeBatch(ctx context.Context, items []heraldtype.DedupeLock, now time.Time) ([]bool, error) {
	if err := heraldtype.CheckDedupeLocks(items); err != nil {
		return nil, err
	}
	if len(items) == 0 {
		return nil, nil
	}
	ok := make([]bool, len(items))
	err := s.inTx(ctx, func(tx *writeTx) error {
		for i, l := range items {
			rows, err := s.query(ctx, tx, `INSERT INTO policy_dedupe (key, owner, expires_at) VALUES (?1, ?2, ?3)
ON CONFLICT (key) DO UPDATE SET
	owner = CASE WHEN policy_dedupe.expires_at <= ?4 THEN excluded.owner ELSE policy_dedupe.owner END,
	expires_at = CASE WHEN policy_dedupe.expires_at <= ?4 THEN excluded.expires_at ELSE policy_dedupe.expires_at END
RETURNING owner`, l.Key, l.Owner, micros(now.Add(l.Window)), micros(now))
			if err != nil {
				return formatError(err, "dedupe lock")
			}
			var holder string
			if rows.Next() {
				err = rows.Scan(&holder)
			}
			if cerr := rows.Close(); err == nil {
				err = cerr
			}
			if err = cmp.Or(err, rows.Err()); err != nil {
				return formatError(err, "dedupe lock")
			}
			ok[i] = holder == l.Owner
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return ok, nil
}

// CountDaily implements policy.Limiter in one IMMEDIATE transaction, which
// serialises it against every other writer.
func (s *Store) CountDaily(ctx context.Context, userID, day, owner string, limit int, expireAt time.Time) (bool, error) {
	if err := store.CheckCountDaily(limit); err != nil {
		return false, err
	}
	ok := false
	err := s.inTx(ctx, func(tx *writeTx) error {
		var err error
		ok, err = s.countDaily(ctx, tx, heraldtype.DailyCount{UserID: userID, Day: day, Owner: owner, Limit: limit, ExpireAt: expireAt})
		return err
	})
	return ok, err
}

// CountDailyBatch implements store.Store: CountDaily for each item in
// order, in one IMMEDIATE transaction.
func (s *Store) CountDailyBatch(ctx context.Context, items []heraldtype.DailyCount) ([]bool, error) {
	if err := store.CheckCountDailyBatch(items); err != nil {
		return nil, err
	}
	if len(items) == 0 {
		return nil, nil
	}
	ok := make([]bool, len(items))
	err := s.inTx(ctx, func(tx *writeTx) error {
		for i, c := range items {
			var err error
			if ok[i], err = s.countDaily(ctx, tx, c); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return ok, nil
}

// countDaily counts c.Owner toward its user's day inside tx: an owner
// already counted is allowed, a new one only while fewer than c.Limit are.
func (s *Store) countDaily(ctx context.Context, tx *writeTx, c heraldtype.DailyCount) (bool, error) {
	var counted, n int
	err := tx.QueryRowContext(ctx, `SELECT coalesce(sum(owner = ?3), 0), count(*) FROM policy_daily
WHERE user_id = ?1 AND day = ?2`, c.UserID, c.Day, c.Owner).Scan(&counted, &n)
	switch {
	case err != nil:
		return false, formatError(err, "daily count")
	case counted > 0:
		return true, nil
	case n >= c.Limit:
		return false, nil
	}
	_, err = s.exec(ctx, tx, `INSERT INTO policy_daily (user_id, day, owner, expires_at) VALUES (?, ?, ?, ?)`,
		c.UserID, c.Day, c.Owner, micros(c.ExpireAt))
	return err == nil, formatError(err, "daily count")
}

// PrunePolicy implements store.Store.
func (s *Store) PrunePolicy(ctx context.Context, now time.Time) (int, error) {
	total := 0
	err := s.inTx(ctx, func(tx *writeTx) error {
		total = 0
		for _, table := range []string{"policy_dedupe", "policy_daily"} {
			res, err := s.exec(ctx, tx, `DELETE FROM `+table+` WHERE expires_at <= ?`, micros(now))
			n, err := affected(res, err, table)
			if err != nil {
				return err
			}
			total += n
		}
		return nil
	})
	return total, err
}

// prefsJSON reads the stored preferences (TEXT) in the in-app rule
// (rules.InboxRefusalSQL) with SQLite's JSON functions. A path is built
// with every key quoted, so a type name with a dot is one key.
type prefsJSON struct{}

var _ rules.JSON = prefsJSON{}

func jsonPath(path []string) string {
	p := `'$'`
	for _, k := range path {
		p += ` || '."' || ` + k + ` || '"'`
	}
	return p
}

func (prefsJSON) True(doc string, path ...string) string {
	return `coalesce(json_extract(` + doc + `, ` + jsonPath(path) + `) = 1, FALSE)`
}

func (prefsJSON) Len(doc string, path ...string) string {
	return `json_array_length(` + doc + `, ` + jsonPath(path) + `)`
}

func (prefsJSON) Has(doc, elem string, path ...string) string {
	return `EXISTS (SELECT 1 FROM json_each(` + doc + `, ` + jsonPath(path) + `) e WHERE e.value = ` + elem + `)`
}
