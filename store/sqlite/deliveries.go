package sqlite

import (
	"context"
	"database/sql"
	"encoding/base64"
	"strconv"
	"strings"
	"time"

	"github.com/heraldhq/herald/heraldtype"
)

const deliveryColumns = `id, notification_id, user_id, type, channel, provider, device_id, state, guarantee,
	attempt, max_attempts, run_at, lease_owner, lease_until, last_error_code, last_error, provider_message_id,
	replay_count, last_replay_at, last_replay_result, created_at, updated_at, finished_at, address`

func scanDelivery(sc interface{ Scan(...any) error }) (heraldtype.Delivery, error) {
	var d heraldtype.Delivery
	var runAt, created, updated int64
	var leaseUntil, lastReplay, finished sql.NullInt64
	err := sc.Scan(&d.ID, &d.NotificationID, &d.UserID, &d.Type, &d.Channel, &d.Provider, &d.DeviceID, &d.State,
		&d.Guarantee, &d.Attempt, &d.MaxAttempts, &runAt, &d.LeaseOwner, &leaseUntil, &d.LastErrorCode,
		&d.LastError, &d.ProviderMessageID, &d.ReplayCount, &lastReplay, &d.LastReplayResult, &created, &updated,
		&finished, &d.Address)
	d.RunAt, d.CreatedAt, d.UpdatedAt = fromMicros(runAt), fromMicros(created), fromMicros(updated)
	d.LeaseUntil, d.LastReplayAt, d.FinishedAt = fromNullMicros(leaseUntil), fromNullMicros(lastReplay), fromNullMicros(finished)
	return d, err
}

// querier is what both pools and transactions offer for reading.
type querier interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
}

func queryDeliveries(ctx context.Context, q querier, query string, args ...any) ([]heraldtype.Delivery, error) {
	rows, err := q.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, formatError(err, "deliveries")
	}
	defer rows.Close()
	ds := []heraldtype.Delivery{}
	for rows.Next() {
		d, err := scanDelivery(rows)
		if err != nil {
			return nil, formatError(err, "deliveries")
		}
		ds = append(ds, d)
	}
	return ds, formatError(rows.Err(), "deliveries")
}

// loadAttempts fills the Attempts of ds with one query per IN chunk,
// oldest first (insertion order).
func loadAttempts(ctx context.Context, q querier, ds []heraldtype.Delivery) error {
	if len(ds) == 0 {
		return nil
	}
	index := make(map[int64]int, len(ds))
	ids := make([]int64, len(ds))
	for i, d := range ds {
		index[d.ID] = i
		ids[i] = d.ID
	}
	return inLists(ids, func(args []any) error {
		rows, err := q.QueryContext(ctx, `SELECT delivery_id, attempt, at, outcome, error_code, error, retry_after,
	provider_message_id, latency
FROM delivery_attempts WHERE delivery_id IN (`+marks(len(args))+`) ORDER BY delivery_id, rowid`, args...)
		if err != nil {
			return formatError(err, "attempts")
		}
		defer rows.Close()
		for rows.Next() {
			var id, at, retryAfter, latency int64
			var a heraldtype.Attempt
			err := rows.Scan(&id, &a.Attempt, &at, &a.Outcome, &a.ErrorCode, &a.Error, &retryAfter,
				&a.ProviderMessageID, &latency)
			if err != nil {
				return formatError(err, "attempts")
			}
			a.At, a.RetryAfter, a.Latency = fromMicros(at), time.Duration(retryAfter), time.Duration(latency)
			d := &ds[index[id]]
			d.Attempts = append(d.Attempts, a)
		}
		return formatError(rows.Err(), "attempts")
	})
}

// ListNotificationDeliveries implements store.Store. An unknown
// notification is ENOTFOUND; a known one without deliveries (no usable
// device) gives an empty list.
func (s *Store) ListNotificationDeliveries(ctx context.Context, notificationID string) ([]heraldtype.Delivery, error) {
	tx, err := s.read.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return nil, formatError(err, "transaction")
	}
	defer tx.Rollback()
	ds, err := queryDeliveries(ctx, tx, `SELECT `+deliveryColumns+` FROM deliveries
WHERE notification_id = ? ORDER BY id`, notificationID)
	if err != nil {
		return nil, err
	}
	if len(ds) == 0 {
		var one int
		err := tx.QueryRowContext(ctx, `SELECT 1 FROM notifications WHERE id = ?`, notificationID).Scan(&one)
		return ds, formatError(err, "notification "+quote(notificationID))
	}
	return ds, loadAttempts(ctx, tx, ds)
}

// Page sizes of ListDeliveries (heraldtype.DeliveryFilter.Limit).
const (
	defaultListLimit = 50
	maxListLimit     = 1000
)

// ListDeliveries implements store.Store. Pages are keyed by id (newest
// first), so rows inserted while paging never shift a page; the cursor is
// the last id of the page, base64-encoded to keep it opaque.
func (s *Store) ListDeliveries(ctx context.Context, f heraldtype.DeliveryFilter) ([]heraldtype.Delivery, string, error) {
	where, args, err := filterSQL(f)
	if err != nil {
		return nil, "", err
	}
	if f.Cursor != "" {
		after, err := decodeCursor(f.Cursor)
		if err != nil {
			return nil, "", err
		}
		where = append(where, "id < ?")
		args = append(args, after)
	}
	limit := f.Limit
	switch {
	case limit < 0:
		return nil, "", heraldtype.FieldErrorf("limit", "must not be negative")
	case limit == 0:
		limit = defaultListLimit
	case limit > maxListLimit:
		limit = maxListLimit
	}
	args = append(args, limit+1)
	tx, err := s.read.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return nil, "", formatError(err, "transaction")
	}
	defer tx.Rollback()
	ds, err := queryDeliveries(ctx, tx, `SELECT `+deliveryColumns+` FROM deliveries`+whereSQL(where)+
		` ORDER BY id DESC LIMIT ?`, args...)
	if err != nil {
		return nil, "", err
	}
	next := ""
	if len(ds) > limit {
		ds = ds[:limit]
		next = encodeCursor(ds[limit-1].ID)
	}
	if err := loadAttempts(ctx, tx, ds); err != nil {
		return nil, "", err
	}
	return ds, next, nil
}

// filterSQL turns the filter's conditions (all but cursor and limit) into
// SQL conditions and arguments.
func filterSQL(f heraldtype.DeliveryFilter) ([]string, []any, error) {
	var where []string
	var args []any
	if f.State != "" {
		if !f.State.Valid() {
			return nil, nil, heraldtype.FieldErrorf("state", "unknown state %q", f.State)
		}
		where, args = append(where, "state = ?"), append(args, string(f.State))
	}
	for _, c := range []struct{ col, val string }{
		{"last_error_code", f.ErrorCode}, {"type", f.Type}, {"user_id", f.UserID}, {"notification_id", f.NotificationID},
	} {
		if c.val != "" {
			where, args = append(where, c.col+" = ?"), append(args, c.val)
		}
	}
	if !f.From.IsZero() {
		where, args = append(where, "created_at >= ?"), append(args, micros(f.From))
	}
	if !f.To.IsZero() {
		where, args = append(where, "created_at < ?"), append(args, micros(f.To))
	}
	return where, args, nil
}

func whereSQL(where []string) string {
	if len(where) == 0 {
		return ""
	}
	return " WHERE " + strings.Join(where, " AND ")
}

func encodeCursor(id int64) string {
	return base64.RawURLEncoding.EncodeToString([]byte(strconv.FormatInt(id, 10)))
}

func decodeCursor(c string) (int64, error) {
	b, err := base64.RawURLEncoding.DecodeString(c)
	if err == nil {
		id, perr := strconv.ParseInt(string(b), 10, 64)
		if perr == nil && id > 0 {
			return id, nil
		}
	}
	return 0, heraldtype.FieldErrorf("cursor", "is not a cursor returned by a previous page")
}

// replayable are the states a replay may leave (S0.4, S4.6).
const replayableSQL = `state IN ('dead', 'unknown')`

// ReplayDelivery implements store.Store.
func (s *Store) ReplayDelivery(ctx context.Context, id int64, now time.Time) (heraldtype.Delivery, error) {
	var d heraldtype.Delivery
	err := s.inTx(ctx, func(tx *writeTx) error {
		n, err := s.replay(ctx, tx, []any{id}, now)
		if err != nil {
			return err
		}
		st, err := s.stmt(ctx, tx, `SELECT `+deliveryColumns+` FROM deliveries WHERE id = ?`)
		if err != nil {
			return err
		}
		d, err = scanDelivery(st.QueryRowContext(ctx, id))
		if err != nil {
			return formatError(err, "delivery "+strconv.FormatInt(id, 10))
		}
		if n == 0 {
			return heraldtype.Errorf(heraldtype.ECONFLICT, "delivery %d is %s; only dead or unknown deliveries can be replayed", id, d.State)
		}
		ds := []heraldtype.Delivery{d}
		if err := loadAttempts(ctx, tx, ds); err != nil {
			return err
		}
		d = ds[0]
		return nil
	})
	return d, err
}

// ReplayDeliveries implements store.Store. The oldest matching deliveries
// are replayed first.
func (s *Store) ReplayDeliveries(ctx context.Context, f heraldtype.DeliveryFilter, now time.Time, max int) (int, error) {
	switch f.State {
	case "", heraldtype.StateDead, heraldtype.StateUnknown:
	default:
		return 0, heraldtype.FieldErrorf("state", "only dead or unknown deliveries can be replayed, not %q", f.State)
	}
	if max < 1 {
		return 0, heraldtype.FieldErrorf("max", "must be at least 1")
	}
	where, args, err := filterSQL(f)
	if err != nil {
		return 0, err
	}
	where = append(where, replayableSQL)
	args = append(args, max)
	total := 0
	err = s.inTx(ctx, func(tx *writeTx) error {
		rows, err := tx.QueryContext(ctx, `SELECT id FROM deliveries`+whereSQL(where)+` ORDER BY id LIMIT ?`, args...)
		if err != nil {
			return formatError(err, "deliveries")
		}
		var ids []int64
		for rows.Next() {
			var id int64
			if err := rows.Scan(&id); err != nil {
				rows.Close()
				return formatError(err, "deliveries")
			}
			ids = append(ids, id)
		}
		if err := rows.Close(); err != nil {
			return formatError(err, "deliveries")
		}
		if err := rows.Err(); err != nil {
			return formatError(err, "deliveries")
		}
		return inLists(ids, func(idArgs []any) error {
			n, err := s.replay(ctx, tx, idArgs, now)
			total += n
			return err
		})
	})
	return total, err
}

// replay moves the replayable deliveries among ids back to pending and
// writes their "replayed" attempt rows; it returns how many it moved. The
// attempt rows are written first, while the state still says which rows
// qualify. The previous error is kept until the next outcome.
func (s *Store) replay(ctx context.Context, tx *writeTx, ids []any, now time.Time) (int, error) {
	at := micros(now)
	attemptArgs := append([]any{at}, ids...)
	_, err := s.exec(ctx, tx, `INSERT INTO delivery_attempts (delivery_id, attempt, at, outcome)
SELECT id, attempt, ?, 'replayed' FROM deliveries WHERE id IN (`+marks(len(ids))+`) AND `+replayableSQL,
		attemptArgs...)
	if err != nil {
		return 0, formatError(err, "attempts")
	}
	updateArgs := append([]any{at, at, at}, ids...)
	res, err := s.exec(ctx, tx, `UPDATE deliveries SET state = 'pending', run_at = ?, attempt = 0,
	replay_count = replay_count + 1, last_replay_at = ?, last_replay_result = '', lease_owner = '',
	lease_until = NULL, finished_at = NULL, updated_at = ?
WHERE id IN (`+marks(len(ids))+`) AND `+replayableSQL, updateArgs...)
	return affected(res, err, "deliveries")
}
