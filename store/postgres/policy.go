package postgres

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

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
	_, err = s.pool.Exec(ctx, s.q(`INSERT INTO {s}.notification_types (name, config, updated_at) VALUES ($1, $2, $3)
ON CONFLICT (name) DO UPDATE SET config = excluded.config, updated_at = excluded.updated_at`), t.Name, b, t.UpdatedAt)
	return t, formatError(err, "type")
}

// GetType implements store.Store.
func (s *Store) GetType(ctx context.Context, name string) (heraldtype.NotificationType, error) {
	var config []byte
	err := s.pool.QueryRow(ctx, s.q(`SELECT config FROM {s}.notification_types WHERE name = $1`), name).Scan(&config)
	if err != nil {
		return heraldtype.NotificationType{}, formatError(err, "type "+quote(name))
	}
	return store.DecodeType(config)
}

// ListTypes implements store.Store.
func (s *Store) ListTypes(ctx context.Context) ([]heraldtype.NotificationType, error) {
	rows, err := s.pool.Query(ctx, s.q(`SELECT config FROM {s}.notification_types ORDER BY name`))
	if err != nil {
		return nil, formatError(err, "types")
	}
	configs, err := pgx.CollectRows(rows, pgx.RowTo[[]byte])
	if err != nil {
		return nil, formatError(err, "types")
	}
	out := make([]heraldtype.NotificationType, 0, len(configs))
	for _, c := range configs {
		t, err := store.DecodeType(c)
		if err != nil {
			return nil, err
		}
		out = append(out, t)
	}
	return out, nil
}

// PutPreferences implements store.Store.
func (s *Store) PutPreferences(ctx context.Context, p heraldtype.Preferences, now time.Time) (heraldtype.Preferences, error) {
	p, b, err := store.EncodePreferences(p, now)
	if err != nil {
		return p, err
	}
	// The scheduled types are added in the write's own statement.
	_, err = s.pool.Exec(ctx, s.q(`WITH t AS (INSERT INTO {s}.digest_schedule_types (type)
	SELECT unnest($4::text[]) ON CONFLICT (type) DO NOTHING)
INSERT INTO {s}.user_preferences (user_id, prefs, updated_at) VALUES ($1, $2, $3)
ON CONFLICT (user_id) DO UPDATE SET prefs = excluded.prefs, updated_at = excluded.updated_at`),
		p.UserID, b, p.UpdatedAt, store.ScheduledDigestTypes(p))
	if err != nil {
		return p, formatError(err, "preferences of user "+quote(p.UserID))
	}
	return s.GetPreferences(ctx, p.UserID)
}

// SwapPreferences implements store.Store: one guarded statement.
func (s *Store) SwapPreferences(ctx context.Context, p heraldtype.Preferences, was, now time.Time) (heraldtype.Preferences, bool, error) {
	p, b, err := store.EncodePreferences(p, now)
	if err != nil {
		return p, false, err
	}
	// One statement: the write, and the scheduled types ($1) added only
	// when it happened.
	w, args := `UPDATE {s}.user_preferences SET prefs = $2, updated_at = $3 WHERE user_id = $4 AND updated_at = $5 RETURNING 1`,
		[]any{store.ScheduledDigestTypes(p), b, p.UpdatedAt, p.UserID, was.UTC()}
	if was.IsZero() {
		w, args = `INSERT INTO {s}.user_preferences (user_id, prefs, updated_at) VALUES ($4, $2, $3)
	ON CONFLICT (user_id) DO NOTHING RETURNING 1`, args[:4]
	}
	var n int
	err = s.pool.QueryRow(ctx, s.q(`WITH w AS (`+w+`),
t AS (INSERT INTO {s}.digest_schedule_types (type) SELECT unnest($1::text[]) WHERE EXISTS (SELECT FROM w)
	ON CONFLICT (type) DO NOTHING)
SELECT count(*) FROM w`), args...).Scan(&n)
	if err != nil {
		return p, false, formatError(err, "preferences of user "+quote(p.UserID))
	}
	if n == 0 {
		return p, false, nil
	}
	p, err = s.GetPreferences(ctx, p.UserID)
	return p, true, err
}

// GetPreferences implements store.Store: one read joins the user (for its
// time zone, and to tell a missing user from one without preferences).
func (s *Store) GetPreferences(ctx context.Context, userID string) (heraldtype.Preferences, error) {
	var tz string
	var prefs []byte
	err := s.pool.QueryRow(ctx, s.q(`SELECT u.timezone, p.prefs FROM {s}.users u
LEFT JOIN {s}.user_preferences p ON p.user_id = u.id WHERE u.id = $1`), userID).Scan(&tz, &prefs)
	if err != nil {
		return heraldtype.Preferences{}, formatError(err, "user "+quote(userID))
	}
	return store.DecodePreferences(userID, tz, prefs)
}

// GetPreferencesMany implements store.Store with one read.
func (s *Store) GetPreferencesMany(ctx context.Context, userIDs []string) (map[string]heraldtype.Preferences, error) {
	out := make(map[string]heraldtype.Preferences, len(userIDs))
	if len(userIDs) == 0 {
		return out, nil
	}
	rows, err := s.pool.Query(ctx, s.q(`SELECT u.id, u.timezone, p.prefs FROM {s}.users u
LEFT JOIN {s}.user_preferences p ON p.user_id = u.id WHERE u.id = ANY ($1::text[])`), userIDs)
	if err != nil {
		return nil, formatError(err, "preferences")
	}
	defer rows.Close()
	for rows.Next() {
		var id, tz string
		var prefs []byte
		if err := rows.Scan(&id, &tz, &prefs); err != nil {
			return nil, formatError(err, "preferences")
		}
		p, err := store.DecodePreferences(id, tz, prefs)
		if err != nil {
			return nil, err
		}
		out[id] = p
	}
	return out, formatError(rows.Err(), "preferences")
}

// DigestScheduleTypes implements store.Store.
func (s *Store) DigestScheduleTypes(ctx context.Context) ([]string, error) {
	rows, err := s.pool.Query(ctx, s.q(`SELECT type FROM {s}.digest_schedule_types ORDER BY type`))
	if err != nil {
		return nil, formatError(err, "digest schedule types")
	}
	types, err := pgx.CollectRows(rows, pgx.RowTo[string])
	return types, formatError(err, "digest schedule types")
}

// AcquireDedupe implements policy.Limiter with one upsert. Concurrent
// inserts of one key queue on its primary key; each then finds the
// winner's row and, unless it has expired, leaves it as it is: the
// returned owner is who holds the lock.
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

// acquireDedupeSQL takes the locks of distinct keys ($1, for the owners
// $2 until $3) in key order — two batches sharing keys queue on them in
// one order instead of deadlocking — each over only when it has expired
// at $4, and returns who holds each key after.
const acquireDedupeSQL = `INSERT INTO {s}.policy_dedupe AS l (key, owner, expires_at)
SELECT * FROM unnest($1::text[], $2::text[], $3::timestamptz[]) ORDER BY 1
ON CONFLICT (key) DO UPDATE SET
	owner = CASE WHEN l.expires_at <= $4 THEN excluded.owner ELSE l.owner END,
	expires_at = CASE WHEN l.expires_at <= $4 THEN excluded.expires_at ELSE l.expires_at END
RETURNING key, owner`

// AcquireDedupeBatch implements policy.DedupeBatchLimiter in one upsert:
// the first item of each key claims it, and every item of the key is
// answered by who holds it after — the same answers as one AcquireDedupe
// per item in order, since at one now a lock just taken cannot expire.
func (s *Store) AcquireDedupeBatch(ctx context.Context, items []heraldtype.DedupeLock, now time.Time) ([]bool, error) {
	if err := heraldtype.CheckDedupeLocks(items); err != nil {
		return nil, err
	}
	if len(items) == 0 {
		return nil, nil
	}
	var keys, owners []string
	var expires []time.Time
	seen := make(map[string]bool, len(items))
	for _, l := range items {
		if !seen[l.Key] {
			seen[l.Key] = true
			keys, owners, expires = append(keys, l.Key), append(owners, l.Owner), append(expires, now.Add(l.Window))
		}
	}
	rows, err := s.pool.Query(ctx, s.q(acquireDedupeSQL), keys, owners, expires, now)
	if err != nil {
		return nil, formatError(err, "dedupe lock")
	}
	holders := make(map[string]string, len(keys))
	var key, holder string
	if _, err := pgx.ForEachRow(rows, []any{&key, &holder}, func() error {
		holders[key] = holder
		return nil
	}); err != nil {
		return nil, formatError(err, "dedupe lock")
	}
	ok := make([]bool, len(items))
	for i, l := range items {
		h, found := holders[l.Key]
		if !found {
			return nil, fmt.Errorf("postgres: dedupe lock: no answer for key %q", l.Key)
		}
		ok[i] = h == l.Owner
	}
	return ok, nil
}

// CountDaily implements policy.Limiter: a batch of one (CountDailyBatch),
// so one rule counts, serialised per user and day by a transaction
// advisory lock — a count and an insert cannot be made atomic by a
// constraint, and READ COMMITTED would let two transactions both see nine
// of ten slots taken.
func (s *Store) CountDaily(ctx context.Context, userID, day, owner string, limit int, expireAt time.Time) (bool, error) {
	if err := store.CheckCountDaily(limit); err != nil {
		return false, err
	}
	ok, err := s.CountDailyBatch(ctx, []heraldtype.DailyCount{{UserID: userID, Day: day, Owner: owner, Limit: limit,
		ExpireAt: expireAt}})
	if err != nil {
		return false, err
	}
	return ok[0], nil
}

// PrunePolicy implements store.Store.
func (s *Store) PrunePolicy(ctx context.Context, now time.Time) (int, error) {
	total := 0
	for _, table := range []string{"policy_dedupe", "policy_daily"} {
		tag, err := s.pool.Exec(ctx, s.q(`DELETE FROM {s}.`+table+` WHERE expires_at <= $1`), now)
		if err != nil {
			return total, formatError(err, table)
		}
		total += int(tag.RowsAffected())
	}
	return total, nil
}

// prefsJSON reads the stored preferences (jsonb) in the in-app rule
// (rules.InboxRefusalSQL) with PostgreSQL's jsonb operators.
type prefsJSON struct{}

var _ rules.JSON = prefsJSON{}

func jsonAt(doc string, path []string) string {
	p := `(` + doc
	for _, k := range path {
		p += ` -> CAST(` + k + ` AS text)`
	}
	return p + `)`
}

func (prefsJSON) True(doc string, path ...string) string {
	return `coalesce(` + jsonAt(doc, path) + ` = 'true'::jsonb, FALSE)`
}

func (prefsJSON) Len(doc string, path ...string) string {
	v := jsonAt(doc, path)
	return `CASE jsonb_typeof(` + v + `) WHEN 'array' THEN jsonb_array_length(` + v + `) END`
}

func (prefsJSON) Has(doc, elem string, path ...string) string {
	return `coalesce(` + jsonAt(doc, path) + ` @> jsonb_build_array(` + elem + `), FALSE)`
}
