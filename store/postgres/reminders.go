package postgres

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/heraldhq/herald/heraldtype"
	"github.com/heraldhq/herald/store"
	"github.com/heraldhq/herald/store/rules"
)

// The reminders (issue 19, S2.1-S2.6): store.Reminders on PostgreSQL.
// The claim takes due rows with FOR UPDATE SKIP LOCKED, so schedulers on
// many instances never wait for, nor take, each other's reminders
// (S2.4). A fire locks its reminder row first (the guarded UPDATE) and
// only then enqueues, so a stop, an update or a delete either committed
// before it — and the guarded UPDATE changes nothing — or waits for the
// fire's commit and applies after it. Writes that lock several
// reminders (a fire batch, a bulk stop) lock them in id order, so two of
// them never deadlock.

// reminderColumnsOf is the reminder's columns, each prefixed by alias
// (e.g. "r."); channels is read as JSON so that a *sql.Tx of the pgx
// driver scans it as well as pgx does.
func reminderColumnsOf(alias string) string {
	return strings.ReplaceAll(`{a}id, {a}key, {a}user_id, {a}type, {a}title, {a}body, {a}data,
	array_to_json({a}channels), {a}priority, {a}data_only, {a}schedule, {a}max_sends, {a}expires_at, {a}on_event,
	{a}match, {a}quiet_hours, {a}state, {a}stop_reason, {a}stopped_at, {a}next_at, {a}sent_count,
	{a}last_notification_id, {a}last_sent_at, {a}version, {a}created_at, {a}updated_at, {a}schedule_start,
	{a}next_occurrence`, "{a}", alias)
}

var reminderColumns = reminderColumnsOf("")

// reminderPutSQL writes a reminder by its key: created with version 1,
// or updated by rules.ReminderUpdateSQL, whose version is then above 1.
var reminderPutSQL = `INSERT INTO {s}.reminders (id, key, user_id, type, title, body, data, channels, priority,
	data_only, schedule, max_sends, expires_at, on_event, match, quiet_hours, state, next_at, version, created_at,
	updated_at, schedule_start, next_occurrence)
VALUES ($1, $2, $3, $4, $5, $6, $7::jsonb, $8::text[], $9, $10, $11::jsonb, $12, $13, $14, $15::jsonb, $16, 'active',
	$17, 1, $18, $18, $18, $19)
ON CONFLICT (key) DO UPDATE SET ` + rules.ReminderUpdateSQL + `
RETURNING ` + reminderColumns

// marker is a rules.Marker for PostgreSQL: "$n" markers, NULL for the
// zero time.
func marker(args *[]any) rules.Marker {
	return func(v any) string {
		if t, ok := v.(time.Time); ok {
			v = nullTime(t)
		}
		*args = append(*args, v)
		return "$" + strconv.Itoa(len(*args))
	}
}

func scanReminder(row interface{ Scan(...any) error }, extra ...any) (heraldtype.Reminder, error) {
	var r heraldtype.Reminder
	var data, channels, schedule, match []byte
	var expires, stopped, next, lastSent, nominal *time.Time
	dest := append([]any{&r.ID, &r.Key, &r.UserID, &r.Type, &r.Title, &r.Body, &data, &channels, &r.Priority,
		&r.DataOnly, &schedule, &r.Stop.MaxSends, &expires, &r.Stop.OnEvent, &match, &r.QuietHours, &r.State,
		&r.StopReason, &stopped, &next, &r.SentCount, &r.LastNotificationID, &lastSent, &r.Version, &r.CreatedAt,
		&r.UpdatedAt, &r.ScheduleStart, &nominal}, extra...)
	if err := row.Scan(dest...); err != nil {
		return r, err
	}
	r.Stop.ExpiresAt, r.StoppedAt, r.NextAt, r.LastSentAt = timeOf(expires), timeOf(stopped), timeOf(next), timeOf(lastSent)
	r.CreatedAt, r.UpdatedAt = utc(r.CreatedAt), utc(r.UpdatedAt)
	r.ScheduleStart, r.NextOccurrence = utc(r.ScheduleStart), timeOf(nominal)
	if err := decodeReminder(&r, data, channels, schedule, match); err != nil {
		return r, fmt.Errorf("postgres: reminder %q: %w", r.Key, err)
	}
	return r, nil
}

// timeOf is a nullable time column in UTC: the zero time for NULL.
func timeOf(t *time.Time) time.Time {
	if t == nil {
		return time.Time{}
	}
	return t.UTC()
}

func decodeReminder(r *heraldtype.Reminder, data, channels, schedule, match []byte) error {
	if len(data) > 0 {
		if err := json.Unmarshal(data, &r.Data); err != nil {
			return fmt.Errorf("data: %w", err)
		}
	}
	var chs []heraldtype.Channel
	if err := json.Unmarshal(channels, &chs); err != nil {
		return fmt.Errorf("channels: %w", err)
	}
	if len(chs) > 0 {
		r.Channels = chs
	}
	if err := json.Unmarshal(schedule, &r.Schedule); err != nil {
		return fmt.Errorf("schedule: %w", err)
	}
	if len(match) > 0 {
		if err := json.Unmarshal(match, &r.Stop.Match); err != nil {
			return fmt.Errorf("match: %w", err)
		}
	}
	return nil
}

// reminderArgs are the arguments $1-$19 of reminderPutSQL: data and
// match are NULL when empty.
func reminderArgs(r heraldtype.Reminder, now time.Time) ([]any, error) {
	var data, match any
	if len(r.Data) > 0 {
		b, err := json.Marshal(r.Data)
		if err != nil {
			return nil, fmt.Errorf("postgres: reminder %q: data: %w", r.Key, err)
		}
		data = string(b)
	}
	if len(r.Stop.Match) > 0 {
		b, err := json.Marshal(r.Stop.Match)
		if err != nil {
			return nil, fmt.Errorf("postgres: reminder %q: match: %w", r.Key, err)
		}
		match = string(b)
	}
	schedule, err := json.Marshal(r.Schedule)
	if err != nil {
		return nil, fmt.Errorf("postgres: reminder %q: schedule: %w", r.Key, err)
	}
	channels := make([]string, len(r.Channels))
	for i, c := range r.Channels {
		channels[i] = string(c)
	}
	return []any{r.ID, r.Key, r.UserID, r.Type, r.Title, r.Body, data, channels, string(r.Priority), r.DataOnly,
		string(schedule), r.Stop.MaxSends, nullTime(r.Stop.ExpiresAt), r.Stop.OnEvent, match, r.QuietHours, r.NextAt,
		now, nullTime(r.NextOccurrence)}, nil
}

// PutReminder implements store.Reminders.
func (s *Store) PutReminder(ctx context.Context, r heraldtype.Reminder, now time.Time) (heraldtype.Reminder, bool, error) {
	if err := store.CheckReminder(r, now); err != nil {
		return heraldtype.Reminder{}, false, err
	}
	var out heraldtype.Reminder
	err := s.inTx(ctx, func(tx pgx.Tx) error {
		var err error
		out, err = s.putReminder(ctx, pgxQuerier{tx}, r, now)
		return err
	})
	if err != nil {
		return heraldtype.Reminder{}, false, err
	}
	return out, out.Version == 1, nil
}

// PutReminderTx implements store.Reminders on the caller's transaction
// (a pgx.Tx or a *sql.Tx of the pgx driver, as EnqueueTx), inside a
// savepoint: a failure leaves nothing of it and the transaction usable.
func (s *Store) PutReminderTx(ctx context.Context, tx any, r heraldtype.Reminder, now time.Time) (heraldtype.Reminder, bool, error) {
	if err := store.CheckReminder(r, now); err != nil {
		return heraldtype.Reminder{}, false, err
	}
	var out heraldtype.Reminder
	err := inCallerTx(ctx, tx, "PutReminderTx", func(q txQuerier) error {
		var err error
		out, err = s.putReminder(ctx, q, r, now)
		return err
	})
	if err != nil {
		return heraldtype.Reminder{}, false, err
	}
	return out, out.Version == 1, nil
}

// inCallerTx runs fn on the caller's transaction inside a savepoint.
func inCallerTx(ctx context.Context, tx any, method string, fn func(q txQuerier) error) error {
	var q txQuerier
	switch t := tx.(type) {
	case pgx.Tx:
		if t != nil {
			q = pgxQuerier{t}
		}
	case *sql.Tx:
		if t != nil {
			q = sqlQuerier{t}
		}
	}
	if q == nil {
		return heraldtype.Errorf(heraldtype.EINVALID, "postgres: %s needs a pgx.Tx or a *sql.Tx of the pgx driver, not %T", method, tx)
	}
	if err := q.exec(ctx, `SAVEPOINT herald_reminder`); err != nil {
		return formatError(err, "savepoint")
	}
	if err := fn(q); err != nil {
		if rerr := q.exec(ctx, `ROLLBACK TO SAVEPOINT herald_reminder`); rerr != nil {
			return fmt.Errorf("%w (and rollback to savepoint: %v)", err, rerr)
		}
		return err
	}
	return formatError(q.exec(ctx, `RELEASE SAVEPOINT herald_reminder`), "savepoint")
}

func (s *Store) putReminder(ctx context.Context, q txQuerier, r heraldtype.Reminder, now time.Time) (heraldtype.Reminder, error) {
	args, err := reminderArgs(r, now)
	if err != nil {
		return heraldtype.Reminder{}, err
	}
	rows, err := q.query(ctx, s.q(`SELECT 1 FROM {s}.users WHERE id = $1`), r.UserID)
	if err != nil {
		return heraldtype.Reminder{}, formatError(err, "user "+quote(r.UserID))
	}
	found := rows.Next()
	rows.Close()
	if err := rows.Err(); err != nil {
		return heraldtype.Reminder{}, formatError(err, "user "+quote(r.UserID))
	}
	if !found {
		return heraldtype.Reminder{}, store.ReminderUserNotFound(r.UserID)
	}
	var out heraldtype.Reminder
	err = queryOne(ctx, q, s.q(reminderPutSQL), args, func(rows txRows) (err error) {
		out, err = scanReminder(rows)
		return err
	})
	return out, formatError(err, "reminder "+quote(r.Key))
}

// queryOne runs a statement that returns one row and hands it to scan;
// no row is pgx.ErrNoRows.
func queryOne(ctx context.Context, q txQuerier, query string, args []any, scan func(txRows) error) error {
	rows, err := q.query(ctx, query, args...)
	if err != nil {
		return err
	}
	defer rows.Close()
	if !rows.Next() {
		if err := rows.Err(); err != nil {
			return err
		}
		return pgx.ErrNoRows
	}
	if err := scan(rows); err != nil {
		return err
	}
	rows.Close()
	return rows.Err()
}

// GetReminder implements store.Reminders.
func (s *Store) GetReminder(ctx context.Context, key string) (heraldtype.Reminder, error) {
	r, err := scanReminder(s.pool.QueryRow(ctx, s.q(`SELECT `+reminderColumns+` FROM {s}.reminders WHERE key = $1`), key))
	if errors.Is(err, pgx.ErrNoRows) {
		return r, store.ReminderNotFound(key)
	}
	return r, formatError(err, "reminder "+quote(key))
}

// DeleteReminder implements store.Reminders. The DELETE waits for a fire
// that holds the row; a fire that comes after it finds no row and
// enqueues nothing.
func (s *Store) DeleteReminder(ctx context.Context, key string) error {
	return s.inTx(ctx, func(tx pgx.Tx) error { return s.deleteReminder(ctx, pgxQuerier{tx}, key) })
}

// DeleteReminderTx implements store.Reminders on the caller's transaction.
func (s *Store) DeleteReminderTx(ctx context.Context, tx any, key string) error {
	return inCallerTx(ctx, tx, "DeleteReminderTx", func(q txQuerier) error { return s.deleteReminder(ctx, q, key) })
}

func (s *Store) deleteReminder(ctx context.Context, q txQuerier, key string) error {
	var id string
	err := queryOne(ctx, q, s.q(`DELETE FROM {s}.reminders WHERE key = $1 RETURNING id`), []any{key},
		func(rows txRows) error { return rows.Scan(&id) })
	if errors.Is(err, pgx.ErrNoRows) {
		return store.ReminderNotFound(key)
	}
	return formatError(err, "reminder "+quote(key))
}

// ListReminders implements store.Reminders. The user is looked up only
// when the page is empty (a reminder cannot exist without its user).
func (s *Store) ListReminders(ctx context.Context, f heraldtype.ReminderFilter) ([]heraldtype.Reminder, string, error) {
	limit, after, err := store.CheckReminderFilter(f)
	if err != nil {
		return nil, "", err
	}
	var args []any
	m := marker(&args)
	where := `key > ` + m(after)
	if f.UserID != "" {
		where += ` AND user_id = ` + m(f.UserID)
	}
	if f.Type != "" {
		where += ` AND type = ` + m(f.Type)
	}
	if f.State != "" {
		where += ` AND state = ` + m(string(f.State))
	}
	if !f.DueBefore.IsZero() {
		where += ` AND state = 'active' AND next_at < ` + m(f.DueBefore)
	}
	query := s.q(`SELECT ` + reminderColumns + ` FROM {s}.reminders WHERE ` + where + ` ORDER BY key LIMIT ` + m(limit+1))
	rows, err := s.pool.Query(ctx, query, args...)
	if err != nil {
		return nil, "", formatError(err, "reminders")
	}
	rs, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (heraldtype.Reminder, error) { return scanReminder(r) })
	if err != nil {
		return nil, "", formatError(err, "reminders")
	}
	if len(rs) == 0 && f.UserID != "" {
		var one int
		err := s.pool.QueryRow(ctx, s.q(`SELECT 1 FROM {s}.users WHERE id = $1`), f.UserID).Scan(&one)
		if err != nil {
			return nil, "", formatError(err, "user "+quote(f.UserID))
		}
	}
	rs, next := store.ReminderPage(rs, limit)
	return rs, next, nil
}

// StopReminders implements store.Reminders: the selected active
// reminders are locked in id order; with an event, rules.EventStops
// decides which of them (the candidates of that user and event name) it
// stops. All in one transaction.
func (s *Store) StopReminders(ctx context.Context, sel store.ReminderSelector, reason string, now time.Time) (int, error) {
	if err := store.CheckReminderSelector(sel, reason, now); err != nil {
		return 0, err
	}
	// The selection's condition, its values marked after the SET list's.
	selected := func(m rules.Marker) string {
		cond := `state = 'active'`
		if sel.UserID != "" {
			cond += ` AND user_id = ` + m(sel.UserID)
		}
		if sel.Type != "" {
			cond += ` AND type = ` + m(sel.Type)
		}
		if sel.Event != "" {
			cond += ` AND on_event = ` + m(sel.Event)
		}
		return cond
	}
	var args []any
	set := rules.ReminderStopSet(reason, now, marker(&args))
	if sel.Event == "" {
		cond := selected(marker(&args))
		tag, err := s.pool.Exec(ctx, s.q(`UPDATE {s}.reminders SET `+set+` WHERE id IN (
	SELECT id FROM {s}.reminders WHERE `+cond+` ORDER BY id FOR UPDATE) AND state = 'active'`), args...)
		return int(tag.RowsAffected()), formatError(err, "reminders")
	}
	var condArgs []any
	cond := selected(marker(&condArgs))
	var stopped int
	err := s.inTx(ctx, func(tx pgx.Tx) error {
		rows, err := tx.Query(ctx, s.q(`SELECT id, match FROM {s}.reminders WHERE `+cond+` ORDER BY id FOR UPDATE`), condArgs...)
		if err != nil {
			return formatError(err, "reminders")
		}
		var ids []string
		for rows.Next() {
			var id string
			var match []byte
			if err := rows.Scan(&id, &match); err != nil {
				rows.Close()
				return formatError(err, "reminders")
			}
			stop := heraldtype.ReminderStop{OnEvent: sel.Event}
			if len(match) > 0 {
				if err := json.Unmarshal(match, &stop.Match); err != nil {
					rows.Close()
					return fmt.Errorf("postgres: reminder %q: match: %w", id, err)
				}
			}
			if rules.EventStops(stop, sel.Event, sel.Data) {
				ids = append(ids, id)
			}
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return formatError(err, "reminders")
		}
		if len(ids) == 0 {
			return nil
		}
		stop := s.q(`UPDATE {s}.reminders SET ` + set + ` WHERE id = ANY(` + marker(&args)(ids) + `) AND state = 'active'`)
		tag, err := tx.Exec(ctx, stop, args...)
		stopped = int(tag.RowsAffected())
		return formatError(err, "reminders")
	})
	return stopped, err
}

// ClaimReminders implements store.Reminders in one statement: the due
// reminders FOR UPDATE SKIP LOCKED (S2.4), leased, and returned with
// their user's time zone and the user's latest send from another
// reminder (the collision gap, S2.5) — no query per reminder. It runs
// under indexPlans, as the queue's claim does: planned on statistics, the
// lease UPDATE hash-joined the batch to a sequential scan of every
// reminder (6 ms of a 19 ms claim at 20,000 rows, and growing with the
// table; auto_explain, docs/PERFORMANCE.md session 9). indexPlans also
// turns JIT off: the generic plan's guess of a tenth of the table priced
// the claim above jit_above_cost, 16 ms of JIT per batch of 500 at a
// million reminders (session 10).
func (s *Store) ClaimReminders(ctx context.Context, p store.ReminderClaimParams) ([]store.ReminderClaim, error) {
	if err := store.CheckReminderClaim(p); err != nil {
		return nil, err
	}
	var args []any
	m := marker(&args)
	due := rules.ReminderDueSQL(p.Now, m)
	query := s.q(`WITH c AS (
	SELECT id, lease_owner <> '' AS rescued FROM {s}.reminders WHERE ` + due + `
	ORDER BY next_at, id LIMIT ` + m(p.Limit) + ` FOR UPDATE SKIP LOCKED),
l AS (
	UPDATE {s}.reminders r SET lease_owner = ` + m(p.Owner) + `, lease_until = ` + m(p.LeaseUntil) + `
	FROM c WHERE r.id = c.id
	RETURNING r.*, c.rescued)
SELECT ` + reminderColumnsOf("l.") + `, l.rescued, coalesce(u.timezone, ''),
	(SELECT max(o.last_sent_at) FROM {s}.reminders o WHERE o.user_id = l.user_id AND o.id <> l.id AND o.last_sent_at IS NOT NULL)
FROM l LEFT JOIN {s}.users u ON u.id = l.user_id
ORDER BY l.next_at, l.id`)
	var claims []store.ReminderClaim
	err := s.indexedQueries(ctx, "reminders", indexed{sql: query, args: args, read: func(rows pgx.Rows) (err error) {
		claims, err = pgx.CollectRows(rows, func(r pgx.CollectableRow) (store.ReminderClaim, error) {
			var c store.ReminderClaim
			var last *time.Time
			var err error
			c.Reminder, err = scanReminder(r, &c.Rescued, &c.UserTimeZone, &last)
			c.UserLastSentAt = timeOf(last)
			return c, err
		})
		return err
	}})
	if err != nil {
		return nil, err
	}
	return claims, nil
}

// FireReminders implements store.Reminders in one transaction, with a
// number of statements that does not grow with the batch (issue 19 item
// 10):
//
//  1. the batch's reminder rows are locked in id order (the lock order of
//     every write of several reminders), and one guarded UPDATE
//     (rules.ReminderFireSQL) advances those whose version, lease and
//     state still match the claim, returning them — pipelined, one round
//     trip;
//  2. the idempotency records of the applied fires' occurrences are
//     inserted in one statement; a key already taken (a replay, rare) is
//     settled on its own, as EnqueueTx settles one;
//  3. the other applied fires' notifications are written together by the
//     statements of the group commit (writeBatch: one statement per
//     table for the lot), with the last-notification fix of any replay —
//     pipelined, one round trip.
//
// A fire refused by the guard enqueues nothing. Any error rolls all of it
// back. The dispatchers are woken after the commit, as Enqueue wakes them.
func (s *Store) FireReminders(ctx context.Context, owner string, fires []store.ReminderFire, now time.Time) ([]store.FireResult, error) {
	if err := store.CheckReminderFires(owner, fires, now); err != nil {
		return nil, err
	}
	batch := store.FireBatch(fires)
	var results []store.FireResult
	var woken []wake
	err := s.inTx(ctx, func(tx pgx.Tx) error {
		results = make([]store.FireResult, len(fires))
		for i, f := range fires {
			results[i].ID = f.ID
		}
		var err error
		woken, err = s.fire(ctx, tx, owner, fires, batch, now, results)
		return err
	})
	if err != nil {
		return nil, err
	}
	for _, w := range woken {
		s.waker.post(w)
	}
	return results, nil
}

// fire writes the fires of batch on tx into results and returns whom to
// wake once tx commits.
func (s *Store) fire(ctx context.Context, tx pgx.Tx, owner string, fires []store.ReminderFire, batch []int, now time.Time,
	results []store.FireResult) ([]wake, error) {
	c := tx.Conn()
	steps := []step{enqueuePlans, s.lockReminders(fires, batch), s.fireStep(owner, fires, batch, now, results)}
	if err := runPipeline(ctx, c, steps); err != nil {
		return nil, err
	}
	// The applied fires that enqueue, in id order; keyed: those of them
	// with an idempotency key (every occurrence has one).
	var enqueue, keyed []int
	var keyedParams []store.EnqueueParams
	for _, i := range batch {
		if results[i].Applied && fires[i].Enqueue != nil {
			enqueue = append(enqueue, i)
			if p := *fires[i].Enqueue; p.IdempotencyKey != "" {
				keyed, keyedParams = append(keyed, i), append(keyedParams, p)
			}
		}
	}
	if len(enqueue) == 0 {
		return nil, nil
	}
	replayed := map[int]bool{}
	if len(keyed) > 0 {
		taken := make([]bool, len(keyed))
		if err := runPipeline(ctx, c, []step{s.triggersStep(keyedParams, taken)}); err != nil {
			return nil, err
		}
		for j, i := range keyed {
			if !taken[j] {
				continue
			}
			res, replay, err := s.claimTrigger(ctx, pgxQuerier{tx}, keyedParams[j])
			if err != nil {
				return nil, err
			}
			if replay {
				replayed[i], results[i].Result = true, res
			}
			// Not a replay: the record vanished (pruned) in between and
			// claimTrigger took the key; the trigger is written below.
		}
	}
	var write []int
	var ps []store.EnqueueParams
	var fixes []step
	for _, i := range enqueue {
		if !replayed[i] {
			write, ps = append(write, i), append(ps, *fires[i].Enqueue)
			continue
		}
		// The occurrence's key had already produced a notification: the
		// reminder points at that one.
		res, f := results[i].Result, fires[i]
		if f.Sends > 0 && len(res.Notifications) > 0 && res.Notifications[0].ID != f.Enqueue.Notifications[0].ID {
			fixes = append(fixes, step{what: "reminder " + quote(f.ID),
				sql:  s.q(`UPDATE {s}.reminders SET last_notification_id = $1 WHERE id = $2`),
				args: []any{res.Notifications[0].ID, f.ID}})
		}
	}
	var done func() ([]store.EnqueueResult, []wake)
	if len(ps) > 0 {
		writes, d, err := s.writeBatch(ps)
		if err != nil {
			return nil, err
		}
		fixes, done = append(writes, fixes...), d
	}
	if len(fixes) > 0 {
		if err := runPipeline(ctx, c, fixes); err != nil {
			return nil, err
		}
	}
	if done == nil {
		return nil, nil
	}
	res, woken := done()
	for j, i := range write {
		results[i].Result = res[j]
	}
	return woken, nil
}

// lockReminders locks the reminder rows of the batch in id order, the
// order every write of several reminders locks them in, so that a fire
// batch and a bulk stop never wait for each other in a cycle. The fire's
// UPDATE that follows then finds each row as the last commit left it.
func (s *Store) lockReminders(fires []store.ReminderFire, batch []int) step {
	ids := make([]string, len(batch))
	for j, i := range batch {
		ids[j] = fires[i].ID
	}
	return step{what: "reminders", sql: s.q(`SELECT id FROM {s}.reminders WHERE id = ANY($1::text[]) ORDER BY id FOR UPDATE`),
		args: []any{ids}, read: func(rows txRows) error {
			for rows.Next() {
			}
			return nil
		}}
}

// fireStep is the batch's guarded UPDATE (rules.ReminderFireSQL), the
// fires' values as arrays; it marks the applied fires in results.
func (s *Store) fireStep(owner string, fires []store.ReminderFire, batch []int, now time.Time, results []store.FireResult) step {
	k := len(batch)
	id, nid, stop := make([]string, k), make([]string, k), make([]string, k)
	version, sends := make([]int64, k), make([]int32, k)
	next, nominal := make([]*time.Time, k), make([]*time.Time, k)
	for j, i := range batch {
		f := fires[i]
		id[j], version[j], sends[j], stop[j] = f.ID, f.Version, int32(f.Sends), f.StopReason
		next[j], nominal[j] = nullTime(f.NextAt), nullTime(f.NextOccurrence)
		if f.Enqueue != nil {
			nid[j] = f.Enqueue.Notifications[0].ID
		}
	}
	var args []any
	m := marker(&args)
	source := func(m rules.Marker) string {
		return `unnest(` + m(id) + `::text[], ` + m(version) + `::bigint[], ` + m(sends) + `::int[], ` + m(nid) + `::text[], ` +
			m(stop) + `::text[], ` + m(next) + `::timestamptz[], ` + m(nominal) + `::timestamptz[])
	AS x (reminder_id, claimed_version, sends, notification_id, stop_reason, next_at, next_occurrence)`
	}
	index := store.NewFireIndex(fires, batch)
	return step{what: "reminders", sql: s.q(rules.ReminderFireSQL("{s}.reminders", source, owner, now, m)), args: args,
		read: func(rows txRows) error {
			for rows.Next() {
				var id string
				var version int64
				if err := rows.Scan(&id, &version); err != nil {
					return err
				}
				if i, ok := index.Applied(fires, id, version); ok {
					results[i].Applied = true
				}
			}
			return nil
		}}
}

// ReleaseReminders implements store.Reminders.
func (s *Store) ReleaseReminders(ctx context.Context, owner string, ids []string) error {
	if err := store.CheckReleaseReminders(owner); err != nil {
		return err
	}
	if len(ids) == 0 {
		return nil
	}
	_, err := s.pool.Exec(ctx, s.q(`UPDATE {s}.reminders SET lease_owner = '', lease_until = NULL
WHERE lease_owner = $1 AND id = ANY($2)`), owner, ids)
	return formatError(err, "reminders")
}

// NextReminderAt implements store.Reminders: the earliest next_at of an
// unleased active reminder, or the earliest end of a lease (a claimed
// reminder is claimable again when its lease ends).
//
// Both are read through reminders_due, the index of active reminders by
// next_at: no index names a lease column, so that a claim is a HOT update
// (migration 0021). A claim leaves next_at alone and its lease ends after
// it, so a leased reminder can come before the earliest unleased one
// (next_at u) only if its own next_at is before u: the second probe walks
// just the leased reminders due before u, those in schedulers' hands.
// It runs under indexPlans: u is known only when the statement runs, and
// planned on a guess the range probe could become a scan of the table.
// The same guess (a third of the table) prices it above jit_above_cost:
// JIT compiling the two index probes took 16 ms per call at a million
// reminders, on every poll of an idle scheduler (indexPlans turns it off).
func (s *Store) NextReminderAt(ctx context.Context) (time.Time, bool, error) {
	var next *time.Time
	err := s.indexedQueries(ctx, "reminders", indexed{sql: `WITH u AS (
	SELECT min(next_at) AS at FROM {s}.reminders WHERE state = 'active' AND lease_until IS NULL)
SELECT least((SELECT at FROM u),
	(SELECT min(greatest(next_at, lease_until)) FROM {s}.reminders
	WHERE state = 'active' AND lease_until IS NOT NULL AND next_at < coalesce((SELECT at FROM u), 'infinity')))`,
		read: func(rows pgx.Rows) error {
			if !rows.Next() {
				return pgx.ErrNoRows
			}
			return rows.Scan(&next)
		}})
	if err != nil {
		return time.Time{}, false, err
	}
	return timeOf(next), next != nil, nil
}

// PruneReminders implements store.Reminders.
func (s *Store) PruneReminders(ctx context.Context, cutoff time.Time, limit int) (int, error) {
	if err := store.CheckPruneReminders(limit); err != nil {
		return 0, err
	}
	tag, err := s.pool.Exec(ctx, s.q(`DELETE FROM {s}.reminders WHERE id IN (
	SELECT id FROM {s}.reminders WHERE state = 'stopped' AND stopped_at < $1 ORDER BY stopped_at, id LIMIT $2)`),
		cutoff, limit)
	return int(tag.RowsAffected()), formatError(err, "reminders")
}
