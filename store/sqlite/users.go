package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/heraldhq/herald/heraldtype"
	"github.com/heraldhq/herald/store"
)

const userColumns = `id, timezone, locale, email, phone, created_at, updated_at`

func scanUser(sc interface{ Scan(...any) error }) (heraldtype.User, error) {
	var u heraldtype.User
	var created, updated int64
	err := sc.Scan(&u.ID, &u.Timezone, &u.Locale, &u.Email, &u.Phone, &created, &updated)
	u.CreatedAt, u.UpdatedAt = fromMicros(created), fromMicros(updated)
	return u, err
}

// UpsertUser implements store.Store.
func (s *Store) UpsertUser(ctx context.Context, u heraldtype.User, now time.Time) (heraldtype.User, error) {
	if u.ID == "" {
		return heraldtype.User{}, heraldtype.FieldErrorf("id", "must not be empty")
	}
	var out heraldtype.User
	err := s.inTx(ctx, func(tx *writeTx) error {
		st, err := s.stmt(ctx, tx, `INSERT INTO users (`+userColumns+`) VALUES (?, ?, ?, ?, ?, ?, ?)
ON CONFLICT (id) DO UPDATE SET timezone = excluded.timezone, locale = excluded.locale,
	email = excluded.email, phone = excluded.phone, updated_at = excluded.updated_at
RETURNING `+userColumns)
		if err != nil {
			return err
		}
		out, err = scanUser(st.QueryRowContext(ctx, u.ID, u.Timezone, u.Locale, u.Email, u.Phone, micros(now), micros(now)))
		return formatError(err, "user "+quote(u.ID))
	})
	return out, err
}

// GetUser implements store.Store.
func (s *Store) GetUser(ctx context.Context, id string) (heraldtype.User, error) {
	u, err := scanUser(s.read.QueryRowContext(ctx, `SELECT `+userColumns+` FROM users WHERE id = ?`, id))
	return u, formatError(err, "user "+quote(id))
}

// GetUsers implements store.Store: one query, the ids as a JSON array.
func (s *Store) GetUsers(ctx context.Context, ids []string) (map[string]heraldtype.User, error) {
	out := make(map[string]heraldtype.User, len(ids))
	if len(ids) == 0 {
		return out, nil
	}
	arr, err := json.Marshal(ids)
	if err != nil {
		return nil, fmt.Errorf("sqlite: users: %w", err)
	}
	rows, err := s.read.QueryContext(ctx, `SELECT `+userColumns+` FROM users WHERE id IN (SELECT value FROM json_each(?))`, string(arr))
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

func scanDevice(sc interface{ Scan(...any) error }) (heraldtype.Device, error) {
	var d heraldtype.Device
	var lastSeen, created, updated int64
	var invalidated, reassigned sql.NullInt64
	err := sc.Scan(&d.ID, &d.UserID, &d.Platform, &d.Token, &d.AppVersion, &d.PushOptIn, &d.Status, &d.FailCount,
		&lastSeen, &invalidated, &d.InvalidReason, &created, &updated, &d.WebPushP256DH, &d.WebPushAuth,
		&d.PreviousUserID, &reassigned)
	d.LastSeenAt, d.CreatedAt, d.UpdatedAt = fromMicros(lastSeen), fromMicros(created), fromMicros(updated)
	d.InvalidatedAt, d.ReassignedAt = fromNullMicros(invalidated), fromNullMicros(reassigned)
	return d, err
}

// UpsertDevice implements store.Store. The detach of a previous token
// holder and the upsert are one transaction, so the unique token index
// never sees two holders.
func (s *Store) UpsertDevice(ctx context.Context, d heraldtype.Device, now time.Time, maxPerUser int) (heraldtype.Device, error) {
	return s.upsertDevice(ctx, d, now, maxPerUser, false, time.Time{})
}

// UpsertOwnDevice implements store.Store: the upsert's ON CONFLICT does
// nothing to another user's device, and then returns no row, which rolls
// the whole transaction back. Writes are serialised (one writer), so the
// check and the write cannot interleave with another registration.
func (s *Store) UpsertOwnDevice(ctx context.Context, d heraldtype.Device, now time.Time, maxPerUser int, takeoverBefore time.Time) (heraldtype.Device, error) {
	return s.upsertDevice(ctx, d, now, maxPerUser, true, takeoverBefore)
}

// upsertDevice is UpsertDevice, or UpsertOwnDevice when own is set.
func (s *Store) upsertDevice(ctx context.Context, d heraldtype.Device, now time.Time, maxPerUser int, own bool, takeoverBefore time.Time) (heraldtype.Device, error) {
	if d.ID == "" {
		return heraldtype.Device{}, heraldtype.FieldErrorf("device_id", "must not be empty")
	}
	var out heraldtype.Device
	err := s.inTx(ctx, func(tx *writeTx) error {
		if err := s.userExists(ctx, tx, d.UserID); err != nil {
			return err
		}
		if own && d.Token != "" {
			if err := s.tokenFree(ctx, tx, d, takeoverBefore); err != nil {
				return err
			}
		}
		if d.Token != "" {
			if err := s.moveToken(ctx, tx, d, now); err != nil {
				return err
			}
		}
		st, err := s.stmt(ctx, tx, `INSERT INTO devices (`+deviceColumns+`)
VALUES (?, ?, ?, ?, ?, ?, 'ACTIVE', 0, ?, NULL, '', ?, ?, ?, ?, '', NULL)
ON CONFLICT (id) DO UPDATE SET user_id = excluded.user_id, platform = excluded.platform,
	token = excluded.token, app_version = excluded.app_version, push_opt_in = excluded.push_opt_in,
	status = 'ACTIVE', fail_count = 0, last_seen_at = excluded.last_seen_at, invalidated_at = NULL,
	invalid_reason = '', updated_at = excluded.updated_at, webpush_p256dh = excluded.webpush_p256dh,
	webpush_auth = excluded.webpush_auth,
	previous_user_id = CASE WHEN devices.user_id <> excluded.user_id THEN devices.user_id ELSE devices.previous_user_id END,
	reassigned_at = CASE WHEN devices.user_id <> excluded.user_id THEN excluded.updated_at ELSE devices.reassigned_at END
WHERE NOT ? OR devices.user_id = excluded.user_id
RETURNING `+deviceColumns)
		if err != nil {
			return err
		}
		out, err = scanDevice(st.QueryRowContext(ctx, d.ID, d.UserID, string(d.Platform), d.Token, d.AppVersion,
			d.PushOptIn, micros(now), micros(now), micros(now), d.WebPushP256DH, d.WebPushAuth, own))
		if own && errors.Is(err, sql.ErrNoRows) {
			return store.ErrDeviceTaken(d.ID)
		}
		if err != nil {
			return formatError(err, "device "+quote(d.ID))
		}
		return s.evictDevices(ctx, tx, d, maxPerUser)
	})
	return out, err
}

// tokenFree returns ErrTokenHeld if another user's ACTIVE device seen at
// or after takeoverBefore holds d's token. One writer: nothing can change
// between the check and the write.
func (s *Store) tokenFree(ctx context.Context, tx *writeTx, d heraldtype.Device, takeoverBefore time.Time) error {
	st, err := s.stmt(ctx, tx, `SELECT 1 FROM devices WHERE token = ? AND id <> ? AND user_id <> ?
	AND status = 'ACTIVE' AND last_seen_at >= ? LIMIT 1`)
	if err != nil {
		return err
	}
	var one int
	err = st.QueryRowContext(ctx, d.Token, d.ID, d.UserID, micros(takeoverBefore)).Scan(&one)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return nil
	case err != nil:
		return formatError(err, "device token")
	}
	return store.ErrTokenHeld()
}

// evictDevices keeps the user's maxPerUser devices seen most recently, d
// first, and deletes the others (issue 18: a user's devices bound the
// sends of one push). SQLite has one writer, so inside UpsertDevice's
// transaction the count cannot change underneath.
func (s *Store) evictDevices(ctx context.Context, tx *writeTx, d heraldtype.Device, maxPerUser int) error {
	if maxPerUser <= 0 {
		return nil
	}
	_, err := s.exec(ctx, tx, `DELETE FROM devices WHERE user_id = ? AND id NOT IN (
	SELECT id FROM devices WHERE user_id = ? ORDER BY id = ? DESC, last_seen_at DESC, id LIMIT ?)`,
		d.UserID, d.UserID, d.ID, maxPerUser)
	return formatError(err, "devices")
}

// userExists returns ENOTFOUND naming the user if it does not exist.
func (s *Store) userExists(ctx context.Context, tx *writeTx, id string) error {
	st, err := s.stmt(ctx, tx, `SELECT 1 FROM users WHERE id = ?`)
	if err != nil {
		return err
	}
	var one int
	return formatError(st.QueryRowContext(ctx, id).Scan(&one), "user "+quote(id))
}

// GetDevice implements store.Store.
func (s *Store) GetDevice(ctx context.Context, id string) (heraldtype.Device, error) {
	d, err := scanDevice(s.read.QueryRowContext(ctx, `SELECT `+deviceColumns+` FROM devices WHERE id = ?`, id))
	return d, formatError(err, "device "+quote(id))
}

// ListDevices implements store.Store. The user check and the listing run
// in one read transaction, so a user created in between cannot make the
// answer inconsistent.
func (s *Store) ListDevices(ctx context.Context, userID string) ([]heraldtype.Device, error) {
	tx, err := s.read.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return nil, formatError(err, "transaction")
	}
	defer tx.Rollback()
	var one int
	if err := tx.QueryRowContext(ctx, `SELECT 1 FROM users WHERE id = ?`, userID).Scan(&one); err != nil {
		return nil, formatError(err, "user "+quote(userID))
	}
	rows, err := tx.QueryContext(ctx, `SELECT `+deviceColumns+` FROM devices WHERE user_id = ? ORDER BY id`, userID)
	if err != nil {
		return nil, formatError(err, "devices")
	}
	defer rows.Close()
	devices := []heraldtype.Device{}
	for rows.Next() {
		d, err := scanDevice(rows)
		if err != nil {
			return nil, formatError(err, "devices")
		}
		devices = append(devices, d)
	}
	return devices, formatError(rows.Err(), "devices")
}

// DeleteDevice implements store.Store.
func (s *Store) DeleteDevice(ctx context.Context, userID, deviceID string) error {
	return s.inTx(ctx, func(tx *writeTx) error {
		res, err := s.exec(ctx, tx, `DELETE FROM devices WHERE id = ? AND user_id = ?`, deviceID, userID)
		return affectedOne(res, err, "device "+quote(deviceID)+" of user "+quote(userID))
	})
}

// TouchDevice implements store.Store. Only last_seen_at moves: a
// heartbeat is not a change of the device.
func (s *Store) TouchDevice(ctx context.Context, deviceID string, now time.Time) error {
	return s.inTx(ctx, func(tx *writeTx) error {
		res, err := s.exec(ctx, tx, `UPDATE devices SET last_seen_at = ? WHERE id = ?`, micros(now), deviceID)
		return affectedOne(res, err, "device "+quote(deviceID))
	})
}

// PruneDevices implements store.Store.
func (s *Store) PruneDevices(ctx context.Context, cutoff time.Time) (int, error) {
	var n int
	err := s.inTx(ctx, func(tx *writeTx) error {
		res, err := s.exec(ctx, tx, `DELETE FROM devices WHERE last_seen_at < ?`, micros(cutoff))
		n, err = affected(res, err, "devices")
		return err
	})
	return n, err
}

// affected returns the rows a statement changed.
func affected(res sql.Result, err error, what string) (int, error) {
	if err != nil {
		return 0, formatError(err, what)
	}
	n, err := res.RowsAffected()
	return int(n), formatError(err, what)
}

// affectedOne turns "no row changed" into ENOTFOUND.
func affectedOne(res sql.Result, err error, what string) error {
	n, err := affected(res, err, what)
	if err == nil && n == 0 {
		err = formatError(sql.ErrNoRows, what)
	}
	return err
}

// quote formats an id for an error message.
func quote(s string) string { return strconv.Quote(s) }
