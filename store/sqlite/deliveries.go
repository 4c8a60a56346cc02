package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"strconv"
	"strings"
	"time"

	"github.com/heraldhq/herald/heraldtype"
	"github.com/heraldhq/herald/store"
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
	err := inLists(ids, func(args []any) error {
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
	for i := range ds {
		store.SplitReceipts(&ds[i])
		ds[i].LateReport = store.LateReport(ds[i].Attempts)
	}
	return err
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

// GetDelivery implements store.Store: the delivery and its attempts from
// one read transaction.
func (s *Store) GetDelivery(ctx context.Context, id int64) (heraldtype.Delivery, error) {
	if err := store.CheckGetDelivery(id); err != nil {
		return heraldtype.Delivery{}, err
	}
	tx, err := s.read.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return heraldtype.Delivery{}, formatError(err, "transaction")
	}
	defer tx.Rollback()
	ds, err := queryDeliveries(ctx, tx, `SELECT `+deliveryColumns+` FROM deliveries WHERE id = ?`, id)
	if err != nil {
		return heraldtype.Delivery{}, err
	}
	if len(ds) == 0 {
		return heraldtype.Delivery{}, store.DeliveryNotFound(id)
	}
	if err := loadAttempts(ctx, tx, ds); err != nil {
		return heraldtype.Delivery{}, err
	}
	return ds[0], nil
}

// ListDeliveries implements store.Store. Pages are keyed by id (newest
// first), so rows inserted while paging never shift a page; the filter
// checks, page sizes and cursor are store.CheckDeliveryFilter's.
func (s *Store) ListDeliveries(ctx context.Context, f heraldtype.DeliveryFilter) ([]heraldtype.Delivery, string, error) {
	limit, below, err := store.CheckDeliveryFilter(f)
	if err != nil {
		return nil, "", err
	}
	where, args := filterSQL(f)
	if below > 0 {
		where = append(where, "id < ?")
		args = append(args, below)
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
	ds, next := store.DeliveryPage(ds, limit)
	if err := loadAttempts(ctx, tx, ds); err != nil {
		return nil, "", err
	}
	return ds, next, nil
}

// filterSQL turns the filter's conditions (all but cursor and limit) into
// SQL conditions and arguments; the caller has checked f.
func filterSQL(f heraldtype.DeliveryFilter) ([]string, []any) {
	var where []string
	var args []any
	if f.State != "" {
		where, args = append(where, "state = ?"), append(args, string(f.State))
	}
	for _, c := range []struct{ col, val string }{
		{"last_error_code", f.ErrorCode}, {"type", f.Type}, {"user_id", f.UserID}, {"notification_id", f.NotificationID},
		{"channel", string(f.Channel)},
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
	return where, args
}

func whereSQL(where []string) string {
	if len(where) == 0 {
		return ""
	}
	return " WHERE " + strings.Join(where, " AND ")
}

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
		switch {
		case errors.Is(err, sql.ErrNoRows):
			return store.ReplayRefusal(id, nil)
		case err != nil:
			return formatError(err, "delivery "+strconv.FormatInt(id, 10))
		case n == 0:
			return store.ReplayRefusal(id, &d)
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
	if err := store.CheckReplayDeliveries(f, max); err != nil {
		return 0, err
	}
	where, args := filterSQL(f)
	where = append(where, store.ReplayableSQL)
	args = append(args, max)
	total := 0
	err := s.inTx(ctx, func(tx *writeTx) error {
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
// qualify. The previous error is kept until the next outcome replaces or (sent)
// clears it.
func (s *Store) replay(ctx context.Context, tx *writeTx, ids []any, now time.Time) (int, error) {
	at := micros(now)
	attemptArgs := append([]any{at}, ids...)
	_, err := s.exec(ctx, tx, `INSERT INTO delivery_attempts (delivery_id, attempt, at, outcome)
SELECT id, attempt, ?, 'replayed' FROM deliveries WHERE id IN (`+marks(len(ids))+`) AND `+store.ReplayableSQL,
		attemptArgs...)
	if err != nil {
		return 0, formatError(err, "attempts")
	}
	updateArgs := append([]any{at, at, at}, ids...)
	res, err := s.exec(ctx, tx, `UPDATE deliveries SET state = 'pending', run_at = ?, attempt = 0,
	replay_count = replay_count + 1, last_replay_at = ?, last_replay_result = '', lease_owner = '',
	lease_until = NULL, finished_at = NULL, updated_at = ?
WHERE id IN (`+marks(len(ids))+`) AND `+store.ReplayableSQL, updateArgs...)
	return affected(res, err, "deliveries")
}
