package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/heraldhq/herald/heraldtype"
	"github.com/heraldhq/herald/store"
	"github.com/heraldhq/herald/store/rules"
)

// Enqueue implements store.Store: the idempotency record, the
// notifications and their deliveries in one IMMEDIATE transaction, so two
// triggers with one key are serialised and the second sees the first.
func (s *Store) Enqueue(ctx context.Context, p store.EnqueueParams) (store.EnqueueResult, error) {
	if err := store.CheckEnqueue(p); err != nil {
		return store.EnqueueResult{}, err
	}
	var res store.EnqueueResult
	err := s.inTx(ctx, func(tx *writeTx) error {
		var err error
		res, err = s.enqueue(ctx, tx, p)
		return err
	})
	if err != nil {
		return store.EnqueueResult{}, err
	}
	return res, nil
}

// EnqueueTx implements store.Store (S4.1). tx must be a *sql.Tx on this
// database file. SQLite has one writer: the caller's transaction holds the
// write lock from its first write (or from BEGIN, if it was begun on DB(),
// whose transactions begin IMMEDIATE) until it ends, so every statement of
// the enqueue runs on tx itself — asking the Store's own write connection
// for anything while the caller holds the lock would wait for the caller,
// who waits for EnqueueTx. The best choice is a transaction begun on DB():
// the business change and the enqueue then share Herald's one write
// connection instead of contending for the file lock.
//
// The enqueue runs inside a savepoint, so a failed EnqueueTx (an unknown
// user, a duplicate id) leaves none of its rows in tx and the caller's
// transaction usable.
func (s *Store) EnqueueTx(ctx context.Context, tx any, p store.EnqueueParams) (store.EnqueueResult, error) {
	stx, ok := tx.(*sql.Tx)
	if !ok || stx == nil {
		return store.EnqueueResult{}, heraldtype.Errorf(heraldtype.EINVALID,
			"sqlite: EnqueueTx needs a *sql.Tx on the store's database, not %T", tx)
	}
	if err := store.CheckEnqueue(p); err != nil {
		return store.EnqueueResult{}, err
	}
	wtx := &writeTx{Tx: stx}
	if _, err := wtx.ExecContext(ctx, `SAVEPOINT herald_enqueue`); err != nil {
		return store.EnqueueResult{}, formatError(err, "savepoint")
	}
	res, err := s.enqueue(ctx, wtx, p)
	if err != nil {
		return store.EnqueueResult{}, rollbackSavepoint(ctx, wtx, err)
	}
	if _, err := wtx.ExecContext(ctx, `RELEASE herald_enqueue`); err != nil {
		return store.EnqueueResult{}, formatError(err, "savepoint")
	}
	return res, nil
}

// rollbackSavepoint undoes what a failed EnqueueTx wrote and returns its
// error, joined with the rollback's if that failed too.
func rollbackSavepoint(ctx context.Context, tx *writeTx, err error) error {
	_, rerr := tx.ExecContext(ctx, `ROLLBACK TO herald_enqueue`)
	if rerr == nil {
		_, rerr = tx.ExecContext(ctx, `RELEASE herald_enqueue`)
	}
	if rerr != nil {
		return errors.Join(err, formatError(rerr, "savepoint"))
	}
	return err
}

// enqueue writes one checked trigger in tx.
func (s *Store) enqueue(ctx context.Context, tx *writeTx, p store.EnqueueParams) (store.EnqueueResult, error) {
	var res store.EnqueueResult
	if p.IdempotencyKey != "" {
		replayed, ok, err := s.replayTrigger(ctx, tx, p)
		if err != nil || ok {
			return replayed, err
		}
	}
	if p.Digest != nil {
		return s.enqueueDigest(ctx, tx, p)
	}
	if err := s.checkUsers(ctx, tx, p.Notifications); err != nil {
		return res, err
	}
	res, err := s.enqueueWrites(ctx, tx, p)
	if err != nil {
		return res, err
	}
	if p.IdempotencyKey != "" {
		if err := s.insertTrigger(ctx, tx, p); err != nil {
			return res, err
		}
	}
	return res, nil
}

// enqueueWrites writes the notifications of a checked trigger whose users
// exist, their deliveries and inbox items, in tx.
func (s *Store) enqueueWrites(ctx context.Context, tx *writeTx, p store.EnqueueParams) (store.EnqueueResult, error) {
	var res store.EnqueueResult
	if err := s.insertNotifications(ctx, tx, p); err != nil {
		return res, err
	}
	if err := s.insertEscalations(ctx, tx, p); err != nil {
		return res, err
	}
	plan := rules.PlanEnqueue(p)
	counts := make(map[string]int, len(p.Notifications))
	if err := s.insertDeliveries(ctx, tx, p, plan.Push, counts); err != nil {
		return res, err
	}
	var err error
	if res.Inbox, err = s.insertChannels(ctx, tx, p, plan, counts); err != nil {
		return res, err
	}
	res.Notifications = make([]store.EnqueuedNotification, len(p.Notifications))
	for i, n := range p.Notifications {
		res.Notifications[i] = store.EnqueuedNotification{ID: n.ID, UserID: n.UserID, Deliveries: counts[n.ID]}
	}
	return res, nil
}

// replayTrigger looks the idempotency key up. ok is true when the trigger
// exists and the request matches: res holds the original notifications.
func (s *Store) replayTrigger(ctx context.Context, tx *writeTx, p store.EnqueueParams) (res store.EnqueueResult, ok bool, err error) {
	st, err := s.stmt(ctx, tx, `SELECT request_hash, notification_ids FROM triggers WHERE namespace = ? AND idempotency_key = ?`)
	if err != nil {
		return res, false, err
	}
	var hash, idsJSON string
	err = st.QueryRowContext(ctx, p.IdempotencyNamespace, p.IdempotencyKey).Scan(&hash, &idsJSON)
	if errors.Is(err, sql.ErrNoRows) {
		return res, false, nil
	}
	if err != nil {
		return res, false, formatError(err, "trigger")
	}
	if hash != p.RequestHash {
		return res, false, heraldtype.Errorf(heraldtype.ECONFLICT,
			"idempotency key %q was already used with a different request", p.IdempotencyKey)
	}
	var ids []string
	if err := json.Unmarshal([]byte(idsJSON), &ids); err != nil {
		return res, false, fmt.Errorf("sqlite: trigger %q: notification ids: %w", p.IdempotencyKey, err)
	}
	found := make(map[string]store.EnqueuedNotification, len(ids))
	err = inLists(ids, func(args []any) error {
		rows, err := s.query(ctx, tx, `SELECT n.id, n.user_id,
	(SELECT count(*) FROM deliveries d WHERE d.notification_id = n.id)
FROM notifications n WHERE n.id IN (`+marks(len(args))+`)`, args...)
		if err != nil {
			return formatError(err, "notifications")
		}
		defer rows.Close()
		for rows.Next() {
			var e store.EnqueuedNotification
			if err := rows.Scan(&e.ID, &e.UserID, &e.Deliveries); err != nil {
				return formatError(err, "notifications")
			}
			found[e.ID] = e
		}
		return formatError(rows.Err(), "notifications")
	})
	if err != nil {
		return res, false, err
	}
	if err := s.replayDigestItems(ctx, tx, ids, found); err != nil {
		return res, false, err
	}
	res.Replayed = true
	res.Notifications = make([]store.EnqueuedNotification, len(ids))
	for i, id := range ids {
		// A notification removed by retention since is reported by id only.
		e, ok := found[id]
		if !ok {
			e = store.EnqueuedNotification{ID: id}
		}
		res.Notifications[i] = e
	}
	return res, true, nil
}

// checkUsers returns ENOTFOUND naming the first unknown user in
// notification order.
func (s *Store) checkUsers(ctx context.Context, tx *writeTx, ns []heraldtype.Notification) error {
	var ids []string
	seen := make(map[string]bool, len(ns))
	for _, n := range ns {
		if !seen[n.UserID] {
			seen[n.UserID] = true
			ids = append(ids, n.UserID)
		}
	}
	exists := make(map[string]bool, len(ids))
	err := inLists(ids, func(args []any) error {
		rows, err := s.query(ctx, tx, `SELECT id FROM users WHERE id IN (`+marks(len(args))+`)`, args...)
		if err != nil {
			return formatError(err, "users")
		}
		defer rows.Close()
		for rows.Next() {
			var id string
			if err := rows.Scan(&id); err != nil {
				return formatError(err, "users")
			}
			exists[id] = true
		}
		return formatError(rows.Err(), "users")
	})
	if err != nil {
		return err
	}
	for _, id := range ids {
		if !exists[id] {
			return heraldtype.Errorf(heraldtype.ENOTFOUND, "user %q not found", id)
		}
	}
	return nil
}

const notificationColumns = `id, user_id, type, title, body, data, channels, priority, payload_mode,
	guarantee, idempotency_key, send_at, created_at, dedupe_key, source, trace_parent, cancellation_key, template_version`

const notificationColumnCount = 18

func (s *Store) insertNotifications(ctx context.Context, tx *writeTx, p store.EnqueueParams) error {
	return insertBatches(p.Notifications, func(ns []heraldtype.Notification) error {
		args := make([]any, 0, len(ns)*notificationColumnCount)
		for _, n := range ns {
			data, channels, err := encodeNotification(n)
			if err != nil {
				return err
			}
			src, err := store.SourceJSON(n.Source)
			if err != nil {
				return err
			}
			key := n.IdempotencyKey
			if key == "" {
				key = p.IdempotencyKey
			}
			args = append(args, n.ID, n.UserID, n.Type, n.Title, n.Body, data, channels, string(n.Priority),
				string(n.PayloadMode), string(n.Guarantee), key, nullMicros(n.SendAt), micros(n.CreatedAt), n.DedupeKey, nullString(src),
				nullString(n.TraceParent), n.CancellationKey, n.TemplateVersion)
		}
		_, err := s.exec(ctx, tx, `INSERT INTO notifications (`+notificationColumns+`) VALUES `+
			rowMarks(len(ns), notificationColumnCount), args...)
		return formatError(err, "notification")
	})
}

func encodeNotification(n heraldtype.Notification) (data, channels string, err error) {
	if len(n.Data) > 0 {
		b, err := json.Marshal(n.Data)
		if err != nil {
			return "", "", fmt.Errorf("sqlite: notification %q: data: %w", n.ID, err)
		}
		data = string(b)
	}
	ch := n.Channels
	if ch == nil {
		ch = []heraldtype.Channel{}
	}
	b, err := json.Marshal(ch)
	if err != nil {
		return "", "", fmt.Errorf("sqlite: notification %q: channels: %w", n.ID, err)
	}
	return data, string(b), nil
}

// insertDeliveries fans the push notifications of the plan out to the
// devices that qualify (rules.PushDeviceSQL) with one INSERT … SELECT
// per chunk of notifications, and counts the deliveries per
// notification into counts.
func (s *Store) insertDeliveries(ctx context.Context, tx *writeTx, p store.EnqueueParams, push []rules.Route,
	counts map[string]int) error {
	if len(push) == 0 {
		return nil
	}
	// The routing table as the rows of r (platform, provider), sorted, so
	// the statement text, and its cache entry, is stable for one table.
	// CROSS JOIN keeps r inside the device loop (SQLite does not reorder
	// it): with r outside, each user's devices were searched once per
	// routed platform.
	platforms, providers := rules.PushRoutes(p.PushProviders)
	routeArgs := make([]any, 0, 2*len(platforms))
	for i := range platforms {
		routeArgs = append(routeArgs, platforms[i], providers[i])
	}
	routes := rowMarks(len(platforms), 2)
	now := micros(p.Now)
	return insertBatches(push, func(rs []rules.Route) error {
		args := make([]any, 0, len(rs)*6+len(routeArgs)+3)
		for i, r := range rs {
			args = append(args, i, r.N.ID, r.N.UserID, r.N.Type, string(r.N.Guarantee), micros(r.RunAt))
		}
		args = append(args, routeArgs...)
		args = append(args, p.MaxAttempts, now, now)
		rows, err := s.query(ctx, tx, `WITH n (ord, nid, uid, type, guarantee, run_at) AS (VALUES `+rowMarks(len(rs), 6)+`),
r (platform, provider) AS (VALUES `+routes+`)
INSERT INTO deliveries (notification_id, user_id, type, channel, provider, device_id, state, guarantee,
	attempt, max_attempts, run_at, created_at, updated_at)
SELECT n.nid, n.uid, n.type, 'push', r.provider, d.id, 'pending', n.guarantee, 0, ?, n.run_at, ?, ?
FROM n JOIN devices d ON d.user_id = n.uid CROSS JOIN r WHERE `+rules.PushDeviceSQL+`
ORDER BY n.ord, d.id
RETURNING notification_id`, args...)
		return countDeliveries(rows, err, counts)
	})
}

func (s *Store) insertTrigger(ctx context.Context, tx *writeTx, p store.EnqueueParams) error {
	ids := make([]string, len(p.Notifications))
	for i, n := range p.Notifications {
		ids[i] = n.ID
	}
	b, err := json.Marshal(ids)
	if err != nil {
		return fmt.Errorf("sqlite: trigger: %w", err)
	}
	_, err = s.exec(ctx, tx, `INSERT INTO triggers (namespace, idempotency_key, request_hash, notification_ids, created_at)
VALUES (?, ?, ?, ?, ?)`, p.IdempotencyNamespace, p.IdempotencyKey, p.RequestHash, string(b), micros(p.Now))
	return formatError(err, "trigger "+quote(p.IdempotencyKey))
}

// PruneTriggers implements store.Store.
func (s *Store) PruneTriggers(ctx context.Context, cutoff time.Time) (int, error) {
	var n int
	err := s.inTx(ctx, func(tx *writeTx) error {
		res, err := s.exec(ctx, tx, `DELETE FROM triggers WHERE created_at < ?`, micros(cutoff))
		n, err = affected(res, err, "triggers")
		return err
	})
	return n, err
}

// GetNotification implements store.Store.
func (s *Store) GetNotification(ctx context.Context, id string) (heraldtype.Notification, error) {
	row := s.read.QueryRowContext(ctx, `SELECT `+notificationColumns+` FROM notifications WHERE id = ?`, id)
	n, err := scanNotification(row)
	return n, formatError(err, "notification "+quote(id))
}

func scanNotification(sc interface{ Scan(...any) error }) (heraldtype.Notification, error) {
	var n heraldtype.Notification
	var data, channels string
	var sendAt sql.NullInt64
	var created int64
	var src, traceParent sql.NullString
	err := sc.Scan(&n.ID, &n.UserID, &n.Type, &n.Title, &n.Body, &data, &channels, &n.Priority, &n.PayloadMode,
		&n.Guarantee, &n.IdempotencyKey, &sendAt, &created, &n.DedupeKey, &src, &traceParent, &n.CancellationKey, &n.TemplateVersion)
	if err != nil {
		return n, err
	}
	n.TraceParent = traceParent.String
	if n.Source, err = store.ParseSource([]byte(src.String)); err != nil {
		return n, err
	}
	n.CreatedAt = fromMicros(created)
	if sendAt.Valid {
		n.SendAt = fromMicros(sendAt.Int64)
	}
	if data != "" {
		if err := json.Unmarshal([]byte(data), &n.Data); err != nil {
			return n, fmt.Errorf("sqlite: notification %q: data: %w", n.ID, err)
		}
	}
	if err := json.Unmarshal([]byte(channels), &n.Channels); err != nil {
		return n, fmt.Errorf("sqlite: notification %q: channels: %w", n.ID, err)
	}
	return n, nil
}

// countDeliveries counts, per notification, the deliveries an INSERT …
// RETURNING notification_id wrote (rows, err are the query's answer),
// and closes rows.
func countDeliveries(rows *sql.Rows, err error, counts map[string]int) error {
	if err != nil {
		return formatError(err, "deliveries")
	}
	defer rows.Close()
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			return formatError(err, "deliveries")
		}
		counts[id]++
	}
	return formatError(rows.Err(), "deliveries")
}
