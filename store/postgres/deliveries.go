package postgres

import (
	"context"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/heraldhq/herald/heraldtype"
	"github.com/heraldhq/herald/store"
)

// querier is what the pool and a pgx.Tx both offer for reading.
type querier interface {
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
}

func queryDeliveries(ctx context.Context, q querier, query string, args ...any) ([]heraldtype.Delivery, error) {
	rows, err := q.Query(ctx, query, args...)
	if err != nil {
		return nil, formatError(err, "deliveries")
	}
	defer rows.Close()
	ds := []heraldtype.Delivery{}
	for rows.Next() {
		var d heraldtype.Delivery
		if err := rows.Scan(deliveryDest(&d)...); err != nil {
			return nil, formatError(err, "deliveries")
		}
		fixDelivery(&d)
		ds = append(ds, d)
	}
	return ds, formatError(rows.Err(), "deliveries")
}

// loadAttempts fills the Attempts of ds with one query, oldest first.
func (s *Store) loadAttempts(ctx context.Context, q querier, ds []heraldtype.Delivery) error {
	if len(ds) == 0 {
		return nil
	}
	index := make(map[int64]int, len(ds))
	ids := make([]int64, len(ds))
	for i, d := range ds {
		index[d.ID] = i
		ids[i] = d.ID
	}
	rows, err := q.Query(ctx, s.q(`SELECT delivery_id, attempt, at, outcome, error_code, error, retry_after,
	provider_message_id, latency
FROM {s}.delivery_attempts WHERE delivery_id = ANY ($1::bigint[]) ORDER BY delivery_id, id`), ids)
	if err != nil {
		return formatError(err, "attempts")
	}
	defer rows.Close()
	for rows.Next() {
		var id, retryAfter, latency int64
		var a heraldtype.Attempt
		err := rows.Scan(&id, &a.Attempt, &a.At, &a.Outcome, &a.ErrorCode, &a.Error, &retryAfter,
			&a.ProviderMessageID, &latency)
		if err != nil {
			return formatError(err, "attempts")
		}
		a.At, a.RetryAfter, a.Latency = a.At.UTC(), time.Duration(retryAfter), time.Duration(latency)
		d := &ds[index[id]]
		d.Attempts = append(d.Attempts, a)
	}
	for i := range ds {
		store.SplitReceipts(&ds[i])
		ds[i].LateReport = store.LateReport(ds[i].Attempts)
	}
	return formatError(rows.Err(), "attempts")
}

// readTx runs fn in a read-only REPEATABLE READ transaction, so that the
// deliveries and their attempts come from one snapshot.
func (s *Store) readTx(ctx context.Context, fn func(tx pgx.Tx) error) error {
	err := pgx.BeginTxFunc(ctx, s.pool, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly}, fn)
	return formatError(err, "transaction")
}

// ListNotificationDeliveries implements store.Store.
func (s *Store) ListNotificationDeliveries(ctx context.Context, notificationID string) ([]heraldtype.Delivery, error) {
	var ds []heraldtype.Delivery
	err := s.readTx(ctx, func(tx pgx.Tx) error {
		var err error
		ds, err = queryDeliveries(ctx, tx, s.q(`SELECT `+deliveryColumns+` FROM {s}.deliveries
WHERE notification_id = $1 ORDER BY id`), notificationID)
		if err != nil {
			return err
		}
		if len(ds) == 0 {
			var one int
			err := tx.QueryRow(ctx, s.q(`SELECT 1 FROM {s}.notifications WHERE id = $1`), notificationID).Scan(&one)
			return formatError(err, "notification "+quote(notificationID))
		}
		return s.loadAttempts(ctx, tx, ds)
	})
	return ds, err
}

// GetDelivery implements store.Store: the delivery and its attempts from
// one snapshot.
func (s *Store) GetDelivery(ctx context.Context, id int64) (heraldtype.Delivery, error) {
	if err := store.CheckGetDelivery(id); err != nil {
		return heraldtype.Delivery{}, err
	}
	var d heraldtype.Delivery
	err := s.readTx(ctx, func(tx pgx.Tx) error {
		ds, err := queryDeliveries(ctx, tx, s.q(`SELECT `+deliveryColumns+` FROM {s}.deliveries WHERE id = $1`), id)
		if err != nil {
			return err
		}
		if len(ds) == 0 {
			return store.DeliveryNotFound(id)
		}
		if err := s.loadAttempts(ctx, tx, ds); err != nil {
			return err
		}
		d = ds[0]
		return nil
	})
	return d, err
}

// ListDeliveries implements store.Store. Pages are keyed by id (newest
// first), with the filter checks, page sizes and cursor of
// store.CheckDeliveryFilter.
func (s *Store) ListDeliveries(ctx context.Context, f heraldtype.DeliveryFilter) ([]heraldtype.Delivery, string, error) {
	limit, below, err := store.CheckDeliveryFilter(f)
	if err != nil {
		return nil, "", err
	}
	var w where
	w.filter(s, f)
	if below > 0 {
		w.add("id < $", below)
	}
	limitArg := w.arg(limit + 1)
	// The page's ids first, then their rows: on dead and unknown
	// deliveries the ids come from one of the dead-letter indexes alone
	// (0027), whatever the filter, without reading a row that does not
	// match. With an end time, "id + 0" keeps the planner from walking
	// the ids newest first — it takes matches to be spread evenly over
	// them, but a range that ended days ago has none among the newest —
	// and has it take the range from deliveries_dead_letters_created and
	// sort its ids instead (only there: another state has no index on the
	// time, and its newest-first walk is the better bet).
	order := "id"
	if !f.To.IsZero() && (f.State == heraldtype.StateDead || f.State == heraldtype.StateUnknown) {
		order = "id + 0"
	}
	var ds []heraldtype.Delivery
	next := ""
	err = s.readTx(ctx, func(tx pgx.Tx) error {
		var err error
		ds, err = queryDeliveries(ctx, tx, s.q(`SELECT `+deliveryColumns+` FROM {s}.deliveries WHERE id IN (
	SELECT id FROM {s}.deliveries`+w.sql()+` ORDER BY `+order+` DESC LIMIT `+limitArg+`) ORDER BY id DESC`), w.args...)
		if err != nil {
			return err
		}
		ds, next = store.DeliveryPage(ds, limit)
		return s.loadAttempts(ctx, tx, ds)
	})
	if err != nil {
		return nil, "", err
	}
	return ds, next, nil
}

// where builds a WHERE clause with numbered parameters.
type where struct {
	conds []string
	args  []any
}

// arg adds an argument and returns its placeholder.
func (w *where) arg(v any) string {
	w.args = append(w.args, v)
	return "$" + strconv.Itoa(len(w.args))
}

// add adds a condition whose one "$" is v's placeholder.
func (w *where) add(cond string, v any) {
	w.conds = append(w.conds, strings.Replace(cond, "$", w.arg(v), 1))
}

// filter adds the filter's conditions (all but cursor and limit); the
// caller has checked f.
func (w *where) filter(s *Store, f heraldtype.DeliveryFilter) {
	if f.State != "" {
		w.add("state = $", string(f.State))
	}
	for _, c := range []struct{ col, val string }{
		{"last_error_code", f.ErrorCode}, {"type", f.Type}, {"notification_id", f.NotificationID}, {"channel", string(f.Channel)},
	} {
		if c.val != "" {
			w.add(c.col+" = $", c.val)
		}
	}
	if f.UserID != "" {
		// Through the user's notifications (notifications_user_id, then
		// deliveries_notification_id): deliveries carry no user index,
		// which every claim and outcome would have to rewrite (0006).
		w.add(s.q("notification_id IN (SELECT id FROM {s}.notifications WHERE user_id = $)"), f.UserID)
	}
	if !f.From.IsZero() {
		w.add("created_at >= $", f.From)
	}
	if !f.To.IsZero() {
		w.add("created_at < $", f.To)
	}
}

func (w *where) sql() string {
	if len(w.conds) == 0 {
		return ""
	}
	return " WHERE " + strings.Join(w.conds, " AND ")
}

// ReplayDelivery implements store.Store.
func (s *Store) ReplayDelivery(ctx context.Context, id int64, now time.Time) (heraldtype.Delivery, error) {
	var d heraldtype.Delivery
	err := s.inTx(ctx, func(tx pgx.Tx) error {
		n, err := s.replay(ctx, tx, `SELECT id FROM {s}.deliveries WHERE id = $2`, now, id)
		if err != nil {
			return err
		}
		ds, err := queryDeliveries(ctx, tx, s.q(`SELECT `+deliveryColumns+` FROM {s}.deliveries WHERE id = $1`), id)
		if err != nil {
			return err
		}
		switch {
		case len(ds) == 0:
			return store.ReplayRefusal(id, nil)
		case n == 0:
			return store.ReplayRefusal(id, &ds[0])
		}
		if err := s.loadAttempts(ctx, tx, ds); err != nil {
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
	// $1 is now; the filter's arguments follow.
	w := where{args: []any{now}}
	w.filter(s, f)
	w.conds = append(w.conds, store.ReplayableSQL)
	limit := w.arg(max)
	var n int
	err := s.inTx(ctx, func(tx pgx.Tx) error {
		var err error
		n, err = s.replay(ctx, tx, `SELECT id FROM {s}.deliveries`+w.sql()+` ORDER BY id LIMIT `+limit, w.args...)
		return err
	})
	return n, err
}

// replay moves the replayable deliveries among those pick selects (a
// query whose $1 is now) back to pending, writes their "replayed" attempt
// rows with the attempt each had, and returns how many it moved. The
// previous error is kept until the next outcome replaces or (sent) clears
// it. A replay that moved any wakes the other instances.
func (s *Store) replay(ctx context.Context, tx pgx.Tx, pick string, args ...any) (int, error) {
	var n int
	err := tx.QueryRow(ctx, s.q(`WITH old AS (
	SELECT id, attempt FROM {s}.deliveries WHERE `+store.ReplayableSQL+` AND id IN (`+pick+`)
	ORDER BY id FOR UPDATE
), u AS (
	UPDATE {s}.deliveries d SET state = 'pending', run_at = $1, attempt = 0, replay_count = d.replay_count + 1,
		last_replay_at = $1, last_replay_result = '', lease_owner = '', lease_until = NULL, finished_at = NULL,
		updated_at = $1
	FROM old WHERE d.id = old.id
	RETURNING d.id, old.attempt
), a AS (
	INSERT INTO {s}.delivery_attempts (delivery_id, attempt, at, outcome)
	SELECT id, attempt, $1, 'replayed' FROM u ORDER BY id
)
SELECT count(*) FROM u`), args...).Scan(&n)
	if err != nil {
		return 0, formatError(err, "deliveries")
	}
	if n > 0 {
		if _, err := tx.Exec(ctx, s.notifySQL()); err != nil {
			return 0, formatError(err, "notify")
		}
	}
	return n, nil
}
