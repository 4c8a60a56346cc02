package postgres

import (
	"context"
	"errors"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/heraldhq/herald/heraldtype"
	"github.com/heraldhq/herald/store"
	"github.com/heraldhq/herald/store/rules"
)

const userColumns = `id, timezone, locale, email, phone, created_at, updated_at`

func scanUser(row pgx.Row) (heraldtype.User, error) {
	var u heraldtype.User
	err := row.Scan(&u.ID, &u.Timezone, &u.Locale, &u.Email, &u.Phone, &u.CreatedAt, &u.UpdatedAt)
	u.CreatedAt, u.UpdatedAt = utc(u.CreatedAt), utc(u.UpdatedAt)
	return u, err
}

// UpsertUser implements store.Store.
func (s *Store) UpsertUser(ctx context.Context, u heraldtype.User, now time.Time) (heraldtype.User, error) {
	if u.ID == "" {
		return heraldtype.User{}, heraldtype.FieldErrorf("id", "must not be empty")
	}
	out, err := scanUser(s.pool.QueryRow(ctx, s.q(`INSERT INTO {s}.users (`+userColumns+`) VALUES ($1, $2, $3, $4, $5, $6, $6)
ON CONFLICT (id) DO UPDATE SET timezone = excluded.timezone, locale = excluded.locale,
	email = excluded.email, phone = excluded.phone, updated_at = excluded.updated_at
RETURNING `+userColumns), u.ID, u.Timezone, u.Locale, u.Email, u.Phone, now))
	return out, formatError(err, "user "+quote(u.ID))
}

// GetUser implements store.Store.
func (s *Store) GetUser(ctx context.Context, id string) (heraldtype.User, error) {
	u, err := scanUser(s.pool.QueryRow(ctx, s.q(`SELECT `+userColumns+` FROM {s}.users WHERE id = $1`), id))
	return u, formatError(err, "user "+quote(id))
}

// GetUsers implements store.Store: one query over the ids as an array.
func (s *Store) GetUsers(ctx context.Context, ids []string) (map[string]heraldtype.User, error) {
	out := make(map[string]heraldtype.User, len(ids))
	if len(ids) == 0 {
		return out, nil
	}
	rows, err := s.pool.Query(ctx, s.q(`SELECT `+userColumns+` FROM {s}.users WHERE id = ANY ($1::text[])`), ids)
	if err != nil {
		return nil, formatError(err, "users")
	}
	defer rows.Close()
	for rows.Next() {
		u, err := scanUser(rows)
		if err != nil {
			return nil, formatError(err, "users")
		}
		out[u.ID] = u
	}
	return out, formatError(rows.Err(), "users")
}

const deviceColumns = `id, user_id, platform, token, app_version, push_opt_in, status, fail_count,
	last_seen_at, invalidated_at, invalid_reason, created_at, updated_at, webpush_p256dh, webpush_auth,
	previous_user_id, reassigned_at`

func scanDevice(row pgx.Row) (heraldtype.Device, error) {
	var d heraldtype.Device
	err := row.Scan(&d.ID, &d.UserID, &d.Platform, &d.Token, &d.AppVersion, &d.PushOptIn, &d.Status, &d.FailCount,
		&d.LastSeenAt, &d.InvalidatedAt, &d.InvalidReason, &d.CreatedAt, &d.UpdatedAt, &d.WebPushP256DH, &d.WebPushAuth,
		&d.PreviousUserID, &d.ReassignedAt)
	d.LastSeenAt, d.CreatedAt, d.UpdatedAt = utc(d.LastSeenAt), utc(d.CreatedAt), utc(d.UpdatedAt)
	d.InvalidatedAt, d.ReassignedAt = utcPtr(d.InvalidatedAt), utcPtr(d.ReassignedAt)
	return d, err
}

// UpsertDevice implements store.Store. The detach of a previous token
// holder and the upsert are one transaction, so the unique token index
// never sees two holders. Two registrations of one token racing from two
// instances are serialised by that index: the later one fails with
// ECONFLICT and may simply be retried.
func (s *Store) UpsertDevice(ctx context.Context, d heraldtype.Device, now time.Time, maxPerUser int) (heraldtype.Device, error) {
	return s.upsertDevice(ctx, d, now, maxPerUser, false, time.Time{})
}

// UpsertOwnDevice implements store.Store: the upsert's ON CONFLICT does
// nothing to another user's device and then returns no row, which rolls
// the whole transaction back. The check is the conflict arm of the insert
// itself: a registration racing for the same new id waits on the primary
// key for the first to commit, then sees its row (READ COMMITTED re-checks
// the conflicting row) and is refused.
func (s *Store) UpsertOwnDevice(ctx context.Context, d heraldtype.Device, now time.Time, maxPerUser int, takeoverBefore time.Time) (heraldtype.Device, error) {
	return s.upsertDevice(ctx, d, now, maxPerUser, true, takeoverBefore)
}

// tokenMovedSQL takes the token $2 from every device but $3 at $1, and
// writes the device.invalidated messages of those it invalidates; $4 is
// $1 in unix microseconds.
var tokenMovedSQL = `WITH x AS (
	UPDATE {s}.devices SET token = '', status = 'INVALID', invalidated_at = $1, invalid_reason = 'token_moved', updated_at = $1
	WHERE token = $2 AND token <> '' AND id <> $3
	RETURNING id AS device_id, user_id, platform, invalid_reason AS reason, invalidated_at AS at
)
` + rules.DeviceTokenMovedSQL(rules.WebhookPostgres, `x JOIN {s}.devices was ON was.id = x.device_id AND was.status <> '`+
	string(heraldtype.DeviceInvalid)+`'`, "$4") + ` ORDER BY x.device_id, e.id`

// upsertDevice is UpsertDevice, or UpsertOwnDevice when own is set.
func (s *Store) upsertDevice(ctx context.Context, d heraldtype.Device, now time.Time, maxPerUser int, own bool, takeoverBefore time.Time) (heraldtype.Device, error) {
	if d.ID == "" {
		return heraldtype.Device{}, heraldtype.FieldErrorf("device_id", "must not be empty")
	}
	var out heraldtype.Device
	err := s.inTx(ctx, func(tx pgx.Tx) error {
		var one int
		err := tx.QueryRow(ctx, s.q(`SELECT 1 FROM {s}.users WHERE id = $1`), d.UserID).Scan(&one)
		if err != nil {
			return formatError(err, "user "+quote(d.UserID))
		}
		if own && d.Token != "" {
			// The holder's row is locked (FOR UPDATE) until commit, so a
			// heartbeat or another registration cannot change it between
			// the check and the detach.
			err := tx.QueryRow(ctx, s.q(`SELECT 1 FROM {s}.devices WHERE token = $1 AND token <> '' AND id <> $2
	AND user_id <> $3 AND status = 'ACTIVE' AND last_seen_at >= $4 LIMIT 1 FOR UPDATE`), d.Token, d.ID, d.UserID,
				takeoverBefore).Scan(&one)
			switch {
			case err == nil:
				return store.ErrTokenHeld()
			case !errors.Is(err, pgx.ErrNoRows):
				return formatError(err, "device token")
			}
		}
		if d.Token != "" {
			// token <> '' (true of $2 here) lets a generic plan use the
			// partial index devices_token; without it the plan PostgreSQL
			// settles on after five runs scanned every device (a
			// registration cost O(devices), docs/PERFORMANCE.md session 9).
			//
			// A device this invalidates (one that was not INVALID
			// already) is reported by the same statement
			// (device.invalidated, issue 35 item 4): its join to devices
			// reads the statement's snapshot, from before the UPDATE.
			_, err := tx.Exec(ctx, s.q(tokenMovedSQL), now, d.Token, d.ID, strconv.FormatInt(now.UnixMicro(), 10))
			if err != nil {
				return formatError(err, "device token")
			}
		}
		out, err = scanDevice(tx.QueryRow(ctx, s.q(`INSERT INTO {s}.devices AS devices (`+deviceColumns+`)
VALUES ($1, $2, $3, $4, $5, $6, 'ACTIVE', 0, $7, NULL, '', $7, $7, $8, $9, '', NULL)
ON CONFLICT (id) DO UPDATE SET user_id = excluded.user_id, platform = excluded.platform,
	token = excluded.token, app_version = excluded.app_version, push_opt_in = excluded.push_opt_in,
	status = 'ACTIVE', fail_count = 0, last_seen_at = excluded.last_seen_at, invalidated_at = NULL,
	invalid_reason = '', updated_at = excluded.updated_at, webpush_p256dh = excluded.webpush_p256dh,
	webpush_auth = excluded.webpush_auth,
	previous_user_id = CASE WHEN devices.user_id <> excluded.user_id THEN devices.user_id ELSE devices.previous_user_id END,
	reassigned_at = CASE WHEN devices.user_id <> excluded.user_id THEN excluded.updated_at ELSE devices.reassigned_at END
WHERE NOT $10::boolean OR devices.user_id = excluded.user_id
RETURNING `+deviceColumns), d.ID, d.UserID, string(d.Platform), d.Token, d.AppVersion, d.PushOptIn, now,
			d.WebPushP256DH, d.WebPushAuth, own))
		if own && errors.Is(err, pgx.ErrNoRows) {
			return store.ErrDeviceTaken(d.ID)
		}
		if err != nil {
			return formatError(err, "device "+quote(d.ID))
		}
		return s.evictDevices(ctx, tx, d, maxPerUser)
	})
	return out, err
}

// evictDevices keeps the user's maxPerUser devices seen most recently, d
// first, and deletes the others (issue 18: a user's devices bound the
// sends of one push). Two registrations for one user at once would each
// miss the other's uncommitted row, so the user row is locked first (FOR
// NO KEY UPDATE: it does not conflict with the KEY SHARE lock the devices
// foreign key takes); the DELETE's snapshot, taken after the lock under
// READ COMMITTED, then sees every device committed before it.
func (s *Store) evictDevices(ctx context.Context, tx pgx.Tx, d heraldtype.Device, maxPerUser int) error {
	if maxPerUser <= 0 {
		return nil
	}
	if _, err := tx.Exec(ctx, s.q(`SELECT 1 FROM {s}.users WHERE id = $1 FOR NO KEY UPDATE`), d.UserID); err != nil {
		return formatError(err, "user "+quote(d.UserID))
	}
	_, err := tx.Exec(ctx, s.q(`DELETE FROM {s}.devices WHERE user_id = $1 AND id NOT IN (
	SELECT id FROM {s}.devices WHERE user_id = $1 ORDER BY id = $2 DESC, last_seen_at DESC, id LIMIT $3)`),
		d.UserID, d.ID, maxPerUser)
	return formatError(err, "devices")
}

// GetDevice implements store.Store.
func (s *Store) GetDevice(ctx context.Context, id string) (heraldtype.Device, error) {
	d, err := scanDevice(s.pool.QueryRow(ctx, s.q(`SELECT `+deviceColumns+` FROM {s}.devices WHERE id = $1`), id))
	return d, formatError(err, "device "+quote(id))
}

// ListDevices implements store.Store. The user is looked up only when it
// has no devices (a device cannot exist without its user).
func (s *Store) ListDevices(ctx context.Context, userID string) ([]heraldtype.Device, error) {
	rows, err := s.pool.Query(ctx, s.q(`SELECT `+deviceColumns+` FROM {s}.devices
WHERE user_id = $1 ORDER BY id`), userID)
	if err != nil {
		return nil, formatError(err, "devices")
	}
	devices, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (heraldtype.Device, error) { return scanDevice(r) })
	if err != nil {
		return nil, formatError(err, "devices")
	}
	if len(devices) == 0 {
		var one int
		err := s.pool.QueryRow(ctx, s.q(`SELECT 1 FROM {s}.users WHERE id = $1`), userID).Scan(&one)
		if err != nil {
			return nil, formatError(err, "user "+quote(userID))
		}
	}
	if devices == nil {
		devices = []heraldtype.Device{}
	}
	return devices, nil
}

// DeleteDevice implements store.Store.
func (s *Store) DeleteDevice(ctx context.Context, userID, deviceID string) error {
	tag, err := s.pool.Exec(ctx, s.q(`DELETE FROM {s}.devices WHERE id = $1 AND user_id = $2`), deviceID, userID)
	return affectedOne(tag.RowsAffected(), err, "device "+quote(deviceID)+" of user "+quote(userID))
}

// TouchDevice implements store.Store. Only last_seen_at moves: a
// heartbeat is not a change of the device.
func (s *Store) TouchDevice(ctx context.Context, deviceID string, now time.Time) error {
	tag, err := s.pool.Exec(ctx, s.q(`UPDATE {s}.devices SET last_seen_at = $1 WHERE id = $2`), now, deviceID)
	return affectedOne(tag.RowsAffected(), err, "device "+quote(deviceID))
}

// PruneDevices implements store.Store.
func (s *Store) PruneDevices(ctx context.Context, cutoff time.Time) (int, error) {
	tag, err := s.pool.Exec(ctx, s.q(`DELETE FROM {s}.devices WHERE last_seen_at < $1`), cutoff)
	return int(tag.RowsAffected()), formatError(err, "devices")
}

// affectedOne turns "no row changed" into ENOTFOUND.
func affectedOne(n int64, err error, what string) error {
	if err == nil && n == 0 {
		err = pgx.ErrNoRows
	}
	return formatError(err, what)
}

// quote formats an id for an error message.
func quote(s string) string { return strconv.Quote(s) }
