package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/heraldhq/herald/heraldtype"
	"github.com/heraldhq/herald/store"
	"github.com/heraldhq/herald/store/rules"
)

// The reminders (issue 19, S2.1-S2.6): store.Reminders on SQLite. Every
// write is one IMMEDIATE transaction on the one write connection, so a
// claim, a fire, an update and a stop are serialised: a stop that
// committed before a fire makes the fire's guarded UPDATE (version,
// lease owner, active) change no row, and the fire then enqueues
// nothing.

const reminderColumns = `id, key, user_id, type, title, body, data, channels, priority, data_only, schedule,
	max_sends, expires_at, on_event, match, quiet_hours, state, stop_reason, stopped_at, next_at, sent_count,
	last_notification_id, last_sent_at, version, created_at, updated_at, schedule_start, next_occurrence`

// reminderPutSQL writes a reminder by its key: created with version 1,
// or updated by rules.ReminderUpdateSQL, whose version is then above 1.
const reminderPutSQL = `INSERT INTO reminders (id, key, user_id, type, title, body, data, channels, priority,
	data_only, schedule, max_sends, expires_at, on_event, match, quiet_hours, state, next_at, version, created_at,
	updated_at, schedule_start, next_occurrence)
VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 'active', ?, 1, ?, ?, ?, ?)
ON CONFLICT (key) DO UPDATE SET ` + rules.ReminderUpdateSQL + `
RETURNING ` + reminderColumns

// mark is a rules.Marker for SQLite: times as microseconds (NULL for the
// zero time), "?" markers.
func mark(args *[]any) rules.Marker {
	return func(v any) string {
		if t, ok := v.(time.Time); ok {
			v = nullMicros(t)
		}
		*args = append(*args, v)
		return "?"
	}
}

func scanReminder(sc interface{ Scan(...any) error }, extra ...any) (heraldtype.Reminder, error) {
	var r heraldtype.Reminder
	var data, channels, schedule, match string
	var expires, stopped, next, lastSent sql.NullInt64
	var created, updated int64
	var start int64
	var nominal sql.NullInt64
	dest := append([]any{&r.ID, &r.Key, &r.UserID, &r.Type, &r.Title, &r.Body, &data, &channels, &r.Priority,
		&r.DataOnly, &schedule, &r.Stop.MaxSends, &expires, &r.Stop.OnEvent, &match, &r.QuietHours, &r.State,
		&r.StopReason, &stopped, &next, &r.SentCount, &r.LastNotificationID, &lastSent, &r.Version, &created,
		&updated, &start, &nominal}, extra...)
	if err := sc.Scan(dest...); err != nil {
		return r, err
	}
	r.Stop.ExpiresAt, r.StoppedAt, r.NextAt, r.LastSentAt = timeOf(expires), timeOf(stopped), timeOf(next), timeOf(lastSent)
	r.CreatedAt, r.UpdatedAt = fromMicros(created), fromMicros(updated)
	r.ScheduleStart, r.NextOccurrence = fromMicros(start), timeOf(nominal)
	if err := decodeReminder(&r, data, channels, schedule, match); err != nil {
		return r, fmt.Errorf("sqlite: reminder %q: %w", r.Key, err)
	}
	return r, nil
}

// timeOf is a nullable time column: the zero time for NULL.
func timeOf(v sql.NullInt64) time.Time {
	if !v.Valid {
		return time.Time{}
	}
	return fromMicros(v.Int64)
}

func decodeReminder(r *heraldtype.Reminder, data, channels, schedule, match string) error {
	if data != "" {
		if err := json.Unmarshal([]byte(data), &r.Data); err != nil {
			return fmt.Errorf("data: %w", err)
		}
	}
	if err := json.Unmarshal([]byte(channels), &r.Channels); err != nil {
		return fmt.Errorf("channels: %w", err)
	}
	if len(r.Channels) == 0 {
		r.Channels = nil
	}
	if err := json.Unmarshal([]byte(schedule), &r.Schedule); err != nil {
		return fmt.Errorf("schedule: %w", err)
	}
	if match != "" {
		if err := json.Unmarshal([]byte(match), &r.Stop.Match); err != nil {
			return fmt.Errorf("match: %w", err)
		}
	}
	return nil
}

// encodeReminder is the JSON columns of r: data and match are ” when
// empty, channels an array.
func encodeReminder(r heraldtype.Reminder) (data, channels, schedule, match string, err error) {
	enc := func(v any, what string) string {
		if err != nil {
			return ""
		}
		b, e := json.Marshal(v)
		if e != nil {
			err = fmt.Errorf("sqlite: reminder %q: %s: %w", r.Key, what, e)
		}
		return string(b)
	}
	if len(r.Data) > 0 {
		data = enc(r.Data, "data")
	}
	ch := r.Channels
	if ch == nil {
		ch = []heraldtype.Channel{}
	}
	channels = enc(ch, "channels")
	schedule = enc(r.Schedule, "schedule")
	if len(r.Stop.Match) > 0 {
		match = enc(r.Stop.Match, "match")
	}
	return data, channels, schedule, match, err
}

// PutReminder implements store.Reminders.
func (s *Store) PutReminder(ctx context.Context, r heraldtype.Reminder, now time.Time) (heraldtype.Reminder, bool, error) {
	if err := store.CheckReminder(r, now); err != nil {
		return heraldtype.Reminder{}, false, err
	}
	var out heraldtype.Reminder
	err := s.inTx(ctx, func(tx *writeTx) error {
		var err error
		out, err = s.putReminder(ctx, tx, r, now)
		return err
	})
	if err != nil {
		return heraldtype.Reminder{}, false, err
	}
	return out, out.Version == 1, nil
}

// PutReminderTx implements store.Reminders on the caller's *sql.Tx, as
// EnqueueTx does (and with EnqueueTx's caveats: see there).
func (s *Store) PutReminderTx(ctx context.Context, tx any, r heraldtype.Reminder, now time.Time) (heraldtype.Reminder, bool, error) {
	if err := store.CheckReminder(r, now); err != nil {
		return heraldtype.Reminder{}, false, err
	}
	var out heraldtype.Reminder
	err := s.inCallerTx(ctx, tx, "PutReminderTx", func(tx *writeTx) error {
		var err error
		out, err = s.putReminder(ctx, tx, r, now)
		return err
	})
	if err != nil {
		return heraldtype.Reminder{}, false, err
	}
	return out, out.Version == 1, nil
}

// inCallerTx runs fn on the caller's transaction tx (a *sql.Tx) inside a
// savepoint, so that a failure leaves none of fn's writes and tx usable.
func (s *Store) inCallerTx(ctx context.Context, tx any, method string, fn func(tx *writeTx) error) error {
	stx, ok := tx.(*sql.Tx)
	if !ok || stx == nil {
		return heraldtype.Errorf(heraldtype.EINVALID, "sqlite: %s needs a *sql.Tx on the store's database, not %T", method, tx)
	}
	wtx := &writeTx{Tx: stx}
	if _, err := wtx.ExecContext(ctx, `SAVEPOINT herald_reminder`); err != nil {
		return formatError(err, "savepoint")
	}
	if err := fn(wtx); err != nil {
		_, rerr := wtx.ExecContext(ctx, `ROLLBACK TO herald_reminder`)
		if rerr == nil {
			_, rerr = wtx.ExecContext(ctx, `RELEASE herald_reminder`)
		}
		if rerr != nil {
			return errors.Join(err, formatError(rerr, "savepoint"))
		}
		return err
	}
	_, err := wtx.ExecContext(ctx, `RELEASE herald_reminder`)
	return formatError(err, "savepoint")
}

func (s *Store) putReminder(ctx context.Context, tx *writeTx, r heraldtype.Reminder, now time.Time) (heraldtype.Reminder, error) {
	if err := s.userExists(ctx, tx, r.UserID); err != nil {
		if heraldtype.ErrorCode(err) == heraldtype.ENOTFOUND {
			return heraldtype.Reminder{}, store.ReminderUserNotFound(r.UserID)
		}
		return heraldtype.Reminder{}, err
	}
	data, channels, schedule, match, err := encodeReminder(r)
	if err != nil {
		return heraldtype.Reminder{}, err
	}
	rows, err := s.query(ctx, tx, reminderPutSQL, r.ID, r.Key, r.UserID, r.Type, r.Title, r.Body, data, channels,
		string(r.Priority), r.DataOnly, schedule, r.Stop.MaxSends, nullMicros(r.Stop.ExpiresAt), r.Stop.OnEvent, match,
		r.QuietHours, micros(r.NextAt), micros(now), micros(now), micros(now), nullMicros(r.NextOccurrence))
	if err != nil {
		return heraldtype.Reminder{}, formatError(err, "reminder "+quote(r.Key))
	}
	defer rows.Close()
	if !rows.Next() {
		return heraldtype.Reminder{}, formatError(errors.Join(rows.Err(), sql.ErrNoRows), "reminder "+quote(r.Key))
	}
	out, err := scanReminder(rows)
	if err != nil {
		return out, formatError(err, "reminder "+quote(r.Key))
	}
	rows.Close()
	return out, formatError(rows.Err(), "reminder "+quote(r.Key))
}

// GetReminder implements store.Reminders.
func (s *Store) GetReminder(ctx context.Context, key string) (heraldtype.Reminder, error) {
	r, err := scanReminder(s.read.QueryRowContext(ctx, `SELECT `+reminderColumns+` FROM reminders WHERE key = ?`, key))
	if errors.Is(err, sql.ErrNoRows) {
		return r, store.ReminderNotFound(key)
	}
	return r, formatError(err, "reminder "+quote(key))
}

// DeleteReminder implements store.Reminders. Deleting the row is what
// makes a claimed fire write nothing: its guarded UPDATE finds no row.
func (s *Store) DeleteReminder(ctx context.Context, key string) error {
	return s.inTx(ctx, func(tx *writeTx) error { return s.deleteReminder(ctx, tx, key) })
}

// DeleteReminderTx implements store.Reminders on the caller's *sql.Tx.
func (s *Store) DeleteReminderTx(ctx context.Context, tx any, key string) error {
	return s.inCallerTx(ctx, tx, "DeleteReminderTx", func(tx *writeTx) error { return s.deleteReminder(ctx, tx, key) })
}

func (s *Store) deleteReminder(ctx context.Context, tx *writeTx, key string) error {
	res, err := s.exec(ctx, tx, `DELETE FROM reminders WHERE key = ?`, key)
	n, err := affected(res, err, "reminder "+quote(key))
	if err == nil && n == 0 {
		return store.ReminderNotFound(key)
	}
	return err
}

// ListReminders implements store.Reminders. The user check and the page
// are read in one read transaction, so a user's empty list is not
// confused with an unknown user.
func (s *Store) ListReminders(ctx context.Context, f heraldtype.ReminderFilter) ([]heraldtype.Reminder, string, error) {
	limit, after, err := store.CheckReminderFilter(f)
	if err != nil {
		return nil, "", err
	}
	where, args := `key > ?`, []any{after}
	if f.UserID != "" {
		where, args = where+` AND user_id = ?`, append(args, f.UserID)
	}
	if f.Type != "" {
		where, args = where+` AND type = ?`, append(args, f.Type)
	}
	if f.State != "" {
		where, args = where+` AND state = ?`, append(args, string(f.State))
	}
	if !f.DueBefore.IsZero() {
		where, args = where+` AND state = 'active' AND next_at < ?`, append(args, micros(f.DueBefore))
	}
	tx, err := s.read.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return nil, "", formatError(err, "transaction")
	}
	defer tx.Rollback() //nolint:errcheck // read-only; nothing to undo
	if f.UserID != "" {
		var one int
		err := tx.QueryRowContext(ctx, `SELECT 1 FROM users WHERE id = ?`, f.UserID).Scan(&one)
		if err != nil {
			return nil, "", formatError(err, "user "+quote(f.UserID))
		}
	}
	rows, err := tx.QueryContext(ctx, `SELECT `+reminderColumns+` FROM reminders WHERE `+where+
		` ORDER BY key LIMIT ?`, append(args, limit+1)...)
	if err != nil {
		return nil, "", formatError(err, "reminders")
	}
	defer rows.Close()
	var rs []heraldtype.Reminder
	for rows.Next() {
		r, err := scanReminder(rows)
		if err != nil {
			return nil, "", formatError(err, "reminders")
		}
		rs = append(rs, r)
	}
	if err := rows.Err(); err != nil {
		return nil, "", formatError(err, "reminders")
	}
	rs, next := store.ReminderPage(rs, limit)
	return rs, next, nil
}

// StopReminders implements store.Reminders. An event selector reads its
// candidates (the active reminders waiting for that event, of the user
// and type when set) and decides with rules.EventStops; each is then
// stopped by id and version, in the same transaction.
func (s *Store) StopReminders(ctx context.Context, sel store.ReminderSelector, reason string, now time.Time) (int, error) {
	if err := store.CheckReminderSelector(sel, reason, now); err != nil {
		return 0, err
	}
	var where []string
	var whereArgs []any
	add := func(cond string, v any) {
		where, whereArgs = append(where, cond), append(whereArgs, v)
	}
	if sel.UserID != "" {
		add(`user_id = ?`, sel.UserID)
	}
	if sel.Type != "" {
		add(`type = ?`, sel.Type)
	}
	if sel.Event != "" {
		add(`on_event = ?`, sel.Event)
	}
	cond := `state = 'active'`
	for _, w := range where {
		cond += ` AND ` + w
	}
	var stopped int
	err := s.inTx(ctx, func(tx *writeTx) error {
		var args []any
		set := rules.ReminderStopSet(reason, now, mark(&args))
		if sel.Event == "" {
			res, err := s.exec(ctx, tx, `UPDATE reminders SET `+set+` WHERE `+cond, append(args, whereArgs...)...)
			stopped, err = affected(res, err, "reminders")
			return err
		}
		ids, err := s.eventStops(ctx, tx, cond, whereArgs, sel)
		if err != nil {
			return err
		}
		for _, c := range ids {
			res, err := s.exec(ctx, tx, `UPDATE reminders SET `+set+` WHERE id = ? AND version = ?`,
				append(append([]any(nil), args...), c.id, c.version)...)
			n, err := affected(res, err, "reminder")
			if err != nil {
				return err
			}
			stopped += n
		}
		return nil
	})
	return stopped, err
}

type reminderVersion struct {
	id      string
	version int64
}

// eventStops returns the reminders among those cond selects that the
// event of sel stops (rules.EventStops).
func (s *Store) eventStops(ctx context.Context, tx *writeTx, cond string, args []any, sel store.ReminderSelector) ([]reminderVersion, error) {
	rows, err := s.query(ctx, tx, `SELECT id, version, match FROM reminders WHERE `+cond+` ORDER BY id`, args...)
	if err != nil {
		return nil, formatError(err, "reminders")
	}
	defer rows.Close()
	var out []reminderVersion
	for rows.Next() {
		var c reminderVersion
		var match string
		if err := rows.Scan(&c.id, &c.version, &match); err != nil {
			return nil, formatError(err, "reminders")
		}
		stop := heraldtype.ReminderStop{OnEvent: sel.Event}
		if match != "" {
			if err := json.Unmarshal([]byte(match), &stop.Match); err != nil {
				return nil, fmt.Errorf("sqlite: reminder %q: match: %w", c.id, err)
			}
		}
		if rules.EventStops(stop, sel.Event, sel.Data) {
			out = append(out, c)
		}
	}
	return out, formatError(rows.Err(), "reminders")
}

// ClaimReminders implements store.Reminders: the due reminders, with
// their user's time zone and the user's latest send from another
// reminder, are read in the claim's transaction in one statement, then
// leased by id. Writes are serialised, so no other claim can take them
// in between.
func (s *Store) ClaimReminders(ctx context.Context, p store.ReminderClaimParams) ([]store.ReminderClaim, error) {
	if err := store.CheckReminderClaim(p); err != nil {
		return nil, err
	}
	var claims []store.ReminderClaim
	err := s.inTx(ctx, func(tx *writeTx) error {
		var args []any
		due := rules.ReminderDueSQL(p.Now, mark(&args))
		rows, err := s.query(ctx, tx, `SELECT `+prefixed("r.", reminderColumns)+`, r.lease_owner <> '',
	coalesce(u.timezone, ''),
	(SELECT max(o.last_sent_at) FROM reminders o WHERE o.user_id = r.user_id AND o.id <> r.id AND o.last_sent_at IS NOT NULL)
FROM reminders r LEFT JOIN users u ON u.id = r.user_id
WHERE r.id IN (SELECT id FROM reminders WHERE `+due+` ORDER BY next_at, id LIMIT ?)
ORDER BY r.next_at, r.id`, append(args, p.Limit)...)
		if err != nil {
			return formatError(err, "reminders")
		}
		defer rows.Close()
		for rows.Next() {
			var c store.ReminderClaim
			var last sql.NullInt64
			c.Reminder, err = scanReminder(rows, &c.Rescued, &c.UserTimeZone, &last)
			if err != nil {
				return formatError(err, "reminders")
			}
			c.UserLastSentAt = timeOf(last)
			claims = append(claims, c)
		}
		if err := rows.Err(); err != nil {
			return formatError(err, "reminders")
		}
		rows.Close()
		ids := make([]string, len(claims))
		for i, c := range claims {
			ids[i] = c.ID
		}
		return inLists(ids, func(in []any) error {
			_, err := s.exec(ctx, tx, `UPDATE reminders SET lease_owner = ?, lease_until = ? WHERE id IN (`+marks(len(in))+`)`,
				append([]any{p.Owner, micros(p.LeaseUntil)}, in...)...)
			return formatError(err, "reminders")
		})
	})
	if err != nil {
		return nil, err
	}
	return claims, nil
}

// prefixed puts prefix before every column of a column list.
func prefixed(prefix, columns string) string {
	cols := strings.Split(columns, ",")
	for i, c := range cols {
		cols[i] = prefix + strings.TrimSpace(c)
	}
	return strings.Join(cols, ", ")
}

// FireReminders implements store.Reminders in one transaction: one
// guarded UPDATE for the whole batch (rules.ReminderFireSQL, the fires'
// values as one JSON array), then, in reminder id order, the enqueue of
// each applied fire through the code path of Enqueue. Any error rolls
// all of it back.
func (s *Store) FireReminders(ctx context.Context, owner string, fires []store.ReminderFire, now time.Time) ([]store.FireResult, error) {
	if err := store.CheckReminderFires(owner, fires, now); err != nil {
		return nil, err
	}
	batch := store.FireBatch(fires)
	values, err := fireValues(fires, batch)
	if err != nil {
		return nil, err
	}
	var args []any
	source := func(m rules.Marker) string {
		return `(SELECT value ->> 0 AS reminder_id, value ->> 1 AS claimed_version, value ->> 2 AS sends, value ->> 3 AS notification_id,
		value ->> 4 AS stop_reason, value ->> 5 AS next_at, value ->> 6 AS next_occurrence
	FROM json_each(` + m(values) + `)) AS x`
	}
	update := rules.ReminderFireSQL("reminders", source, owner, now, mark(&args))
	index := store.NewFireIndex(fires, batch)
	var results []store.FireResult
	err = s.inTx(ctx, func(tx *writeTx) error {
		results = make([]store.FireResult, len(fires))
		for i, f := range fires {
			results[i].ID = f.ID
		}
		if err := s.applyFires(ctx, tx, update, args, fires, index, results); err != nil {
			return err
		}
		for _, i := range batch {
			f := fires[i]
			if !results[i].Applied || f.Enqueue == nil {
				continue
			}
			var err error
			if results[i].Result, err = s.enqueue(ctx, tx, *f.Enqueue); err != nil {
				return err
			}
			if err := s.replayedNotification(ctx, tx, f, f.Enqueue.Notifications[0].ID, results[i].Result); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return results, nil
}

// applyFires runs the batch's guarded UPDATE and marks the applied fires
// in results.
func (s *Store) applyFires(ctx context.Context, tx *writeTx, update string, args []any, fires []store.ReminderFire,
	index store.FireIndex, results []store.FireResult) error {
	rows, err := s.query(ctx, tx, update, args...)
	if err != nil {
		return formatError(err, "reminders")
	}
	defer rows.Close()
	for rows.Next() {
		var id string
		var version int64
		if err := rows.Scan(&id, &version); err != nil {
			return formatError(err, "reminders")
		}
		if i, ok := index.Applied(fires, id, version); ok {
			results[i].Applied = true
		}
	}
	return formatError(rows.Err(), "reminders")
}

// fireValues encodes the fires of batch as the JSON array the fire's
// UPDATE reads: per fire [id, version, sends, notification id, stop
// reason, next_at, next_occurrence], times in microseconds (null: none).
func fireValues(fires []store.ReminderFire, batch []int) (string, error) {
	vs := make([][7]any, len(batch))
	for j, i := range batch {
		f := fires[i]
		nid := ""
		if f.Enqueue != nil {
			nid = f.Enqueue.Notifications[0].ID
		}
		vs[j] = [7]any{f.ID, f.Version, f.Sends, nid, f.StopReason, jsonMicros(f.NextAt), jsonMicros(f.NextOccurrence)}
	}
	b, err := json.Marshal(vs)
	if err != nil {
		return "", fmt.Errorf("sqlite: reminder fires: %w", err)
	}
	return string(b), nil
}

// jsonMicros is t in microseconds, or nil (JSON null) for the zero time.
func jsonMicros(t time.Time) any {
	if t.IsZero() {
		return nil
	}
	return micros(t)
}

// replayedNotification points a sent reminder at the notification its
// occurrence's idempotency key had already produced, when the enqueue
// was a replay of it rather than the notification the fire proposed.
func (s *Store) replayedNotification(ctx context.Context, tx *writeTx, f store.ReminderFire, proposed string, res store.EnqueueResult) error {
	if f.Sends == 0 || !res.Replayed || len(res.Notifications) == 0 || res.Notifications[0].ID == proposed {
		return nil
	}
	_, err := s.exec(ctx, tx, `UPDATE reminders SET last_notification_id = ? WHERE id = ?`, res.Notifications[0].ID, f.ID)
	return formatError(err, "reminder "+quote(f.ID))
}

// ReleaseReminders implements store.Reminders.
func (s *Store) ReleaseReminders(ctx context.Context, owner string, ids []string) error {
	if err := store.CheckReleaseReminders(owner); err != nil {
		return err
	}
	return s.inTx(ctx, func(tx *writeTx) error {
		return inLists(ids, func(in []any) error {
			_, err := s.exec(ctx, tx, `UPDATE reminders SET lease_owner = '', lease_until = NULL
WHERE lease_owner = ? AND id IN (`+marks(len(in))+`)`, append([]any{owner}, in...)...)
			return formatError(err, "reminders")
		})
	})
}

// NextReminderAt implements store.Reminders: the earliest next_at of an
// unleased active reminder, or the earliest end of a lease (a claimed
// reminder is claimable again when its lease ends, and a claim's lease
// always ends after the reminder's next_at).
func (s *Store) NextReminderAt(ctx context.Context) (time.Time, bool, error) {
	var next sql.NullInt64
	err := s.read.QueryRowContext(ctx, `SELECT min(t) FROM (
	SELECT min(next_at) AS t FROM reminders WHERE state = 'active' AND lease_until IS NULL
	UNION ALL
	SELECT min(max(next_at, lease_until)) FROM reminders WHERE state = 'active' AND lease_until IS NOT NULL)`).Scan(&next)
	if err != nil {
		return time.Time{}, false, formatError(err, "reminders")
	}
	return timeOf(next), next.Valid, nil
}

// PruneReminders implements store.Reminders.
func (s *Store) PruneReminders(ctx context.Context, cutoff time.Time, limit int) (int, error) {
	if err := store.CheckPruneReminders(limit); err != nil {
		return 0, err
	}
	var n int
	err := s.inTx(ctx, func(tx *writeTx) error {
		res, err := s.exec(ctx, tx, `DELETE FROM reminders WHERE id IN (
	SELECT id FROM reminders WHERE state = 'stopped' AND stopped_at < ? ORDER BY stopped_at, id LIMIT ?)`,
			micros(cutoff), limit)
		n, err = affected(res, err, "reminders")
		return err
	})
	return n, err
}
