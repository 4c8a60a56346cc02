package postgres

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/heraldhq/herald/heraldtype"
	"github.com/heraldhq/herald/store"
	"github.com/heraldhq/herald/store/rules"
)

// Enqueue implements store.Store in one transaction of a few statements
// whatever the trigger's size: the idempotency record, one INSERT …
// SELECT FROM unnest for the notifications, one INSERT … SELECT joining
// them to the users' devices for the deliveries. The statements are
// pipelined: one round trip for the whole transaction, two with an
// idempotency key (the key is settled before anything is written). Each
// round trip is a pair of context switches and loopback packets on both
// sides; six of them per trigger held single-recipient triggers to ~900/s
// (docs/PERFORMANCE.md). Other instances are woken after the commit.
// Concurrent calls beyond Options.EnqueueConcurrency are committed
// together (enqueuebatch.go).
func (s *Store) Enqueue(ctx context.Context, p store.EnqueueParams) (store.EnqueueResult, error) {
	if err := store.CheckEnqueue(p); err != nil {
		return store.EnqueueResult{}, err
	}
	if p.Digest != nil {
		return s.enqueueDigestAlone(ctx, p)
	}
	if s.batcher.max > 0 {
		return s.enqueueBatched(ctx, p)
	}
	return s.enqueueAlone(ctx, p)
}

// enqueueAlone writes one checked trigger in a transaction of its own.
func (s *Store) enqueueAlone(ctx context.Context, p store.EnqueueParams) (store.EnqueueResult, error) {
	conn, err := s.pool.Acquire(ctx)
	if err != nil {
		return store.EnqueueResult{}, formatError(err, "connection")
	}
	defer conn.Release()
	c := conn.Conn()
	res, w, err := s.enqueuePipelined(ctx, c, p)
	if err != nil {
		if !c.IsClosed() && c.PgConn().TxStatus() != 'I' {
			// Hand the connection back idle; the pool closes one left
			// inside a transaction.
			_, _ = c.Exec(ctx, "ROLLBACK")
		}
		return store.EnqueueResult{}, err
	}
	// Not a NOTIFY inside the transaction: PostgreSQL serialises the
	// commits of every transaction that notified, WAL flush included,
	// under one global lock.
	s.waker.post(w)
	return res, nil
}

// enqueuePipelined runs one checked trigger on c in its own transaction,
// committed when it returns nil.
//
// With an idempotency key, the record goes first in the same pipeline as
// a plain INSERT: the first use of a key (the common case) costs no
// round trip of its own. A key already taken fails that INSERT with a
// unique violation (after waiting for a transaction that holds it
// uncommitted), PostgreSQL skips the writes after it, and the replay is
// settled in a second transaction as EnqueueTx settles it. (PostgreSQL
// logs that violation: one log line per replayed request.)
func (s *Store) enqueuePipelined(ctx context.Context, c *pgx.Conn, p store.EnqueueParams) (store.EnqueueResult, wake, error) {
	var st enqueueState
	writes, err := s.writeSteps(p, &st)
	if err != nil {
		return store.EnqueueResult{}, wake{}, err
	}
	begin, commit := step{sql: "BEGIN", what: "transaction"}, step{sql: "COMMIT", what: "transaction"}
	first := []step{begin, enqueuePlans}
	if p.IdempotencyKey != "" {
		first = append(first, s.triggerStep(p, nil))
	}
	err = runPipeline(ctx, c, slices.Concat(first, writes, []step{commit}))
	if err == nil {
		return st.result(p), st.wake(), nil
	}
	if !errors.Is(err, errKeyTaken) {
		return store.EnqueueResult{}, wake{}, err
	}
	if _, err := c.Exec(ctx, "ROLLBACK"); err != nil {
		return store.EnqueueResult{}, wake{}, formatError(err, "transaction")
	}
	if err := runPipeline(ctx, c, []step{begin}); err != nil {
		return store.EnqueueResult{}, wake{}, err
	}
	res, replayed, err := s.claimTrigger(ctx, pgxQuerier{c}, p)
	if err != nil {
		return store.EnqueueResult{}, wake{}, err
	}
	if replayed {
		return res, wake{}, runPipeline(ctx, c, []step{commit})
	}
	// The record vanished (pruned) in between and claimTrigger took the
	// key: write the trigger after all.
	st = enqueueState{}
	if writes, err = s.writeSteps(p, &st); err != nil {
		return store.EnqueueResult{}, wake{}, err
	}
	if err := runPipeline(ctx, c, append(writes, commit)); err != nil {
		return store.EnqueueResult{}, wake{}, err
	}
	return st.result(p), st.wake(), nil
}

// enqueuePlans, first in the enqueue transaction, makes its prepared
// statements run their generic plans, planned for index probes
// (indexPlans, as for the queue statements). Without it PostgreSQL
// re-plans the enqueue statements on every call — a custom plan, since a
// generic plan's cost, estimated for ten-element arrays, never beats the
// custom plans' average for one — 330 µs of planning per single-recipient
// trigger out of ≈ 1.1 ms (pg_stat_statements with track_planning,
// docs/PERFORMANCE.md). Every enqueue statement is written as index
// probes per array element (LATERAL, OFFSET 0), so its best plan does not
// depend on the values; the planner settings keep a generic plan made
// while the tables were new and empty from being a scan.
var enqueuePlans = step{what: "transaction", sql: indexPlans}

// errKeyTaken: the idempotency key of a pipelined enqueue was already
// taken.
var errKeyTaken = errors.New("postgres: the idempotency key is taken")

// EnqueueTx implements store.Store (S4.1). tx is a pgx.Tx (from any pgx
// connection or pool, Pool() included) or a *sql.Tx of pgx's stdlib
// driver; every statement names Herald's schema, so the connection's
// search_path does not matter. The enqueue runs inside a savepoint: a
// failed EnqueueTx (an unknown user, a duplicate id) leaves none of its
// rows and keeps the caller's transaction usable. Other instances are
// notified when the caller commits.
func (s *Store) EnqueueTx(ctx context.Context, tx any, p store.EnqueueParams) (store.EnqueueResult, error) {
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
		return store.EnqueueResult{}, heraldtype.Errorf(heraldtype.EINVALID,
			"postgres: EnqueueTx needs a pgx.Tx or a *sql.Tx of the pgx driver, not %T", tx)
	}
	if err := store.CheckEnqueue(p); err != nil {
		return store.EnqueueResult{}, err
	}
	if err := q.exec(ctx, `SAVEPOINT herald_enqueue`); err != nil {
		return store.EnqueueResult{}, formatError(err, "savepoint")
	}
	res, w, err := s.enqueue(ctx, q, p)
	if err == nil {
		// The caller's commit is not ours to see: the NOTIFY goes inside
		// its transaction, delivered if and when it commits.
		err = s.notifyInTx(ctx, q, w)
	}
	if err != nil {
		if rerr := q.exec(ctx, `ROLLBACK TO SAVEPOINT herald_enqueue`); rerr != nil {
			return store.EnqueueResult{}, fmt.Errorf("%w (and rollback to savepoint: %v)", err, rerr)
		}
		return store.EnqueueResult{}, err
	}
	if err := q.exec(ctx, `RELEASE SAVEPOINT herald_enqueue`); err != nil {
		return store.EnqueueResult{}, formatError(err, "savepoint")
	}
	return res, nil
}

// enqueue writes one checked trigger on q, statement by statement, and
// returns whom to wake once it commits.
func (s *Store) enqueue(ctx context.Context, q txQuerier, p store.EnqueueParams) (store.EnqueueResult, wake, error) {
	if p.IdempotencyKey != "" {
		res, replayed, err := s.claimTrigger(ctx, q, p)
		if err != nil || replayed {
			return res, wake{}, err
		}
	}
	if p.Digest != nil {
		return s.enqueueDigest(ctx, q, p)
	}
	var st enqueueState
	writes, err := s.writeSteps(p, &st)
	if err != nil {
		return store.EnqueueResult{}, wake{}, err
	}
	if err := runSteps(ctx, q, writes); err != nil {
		return store.EnqueueResult{}, wake{}, err
	}
	return st.result(p), st.wake(), nil
}

// enqueueState is what the write steps of one enqueue read back.
type enqueueState struct {
	counts map[string]int // deliveries per notification
	due    bool           // a pending delivery is due now
	inbox  []heraldtype.InboxItem
}

func (st *enqueueState) result(p store.EnqueueParams) store.EnqueueResult {
	res := store.EnqueueResult{Notifications: make([]store.EnqueuedNotification, len(p.Notifications)), Inbox: st.inbox}
	for i, n := range p.Notifications {
		res.Notifications[i] = store.EnqueuedNotification{ID: n.ID, UserID: n.UserID, Deliveries: st.counts[n.ID]}
	}
	return res
}

func (st *enqueueState) wake() wake {
	return wake{deliveries: st.due, inboxUsers: inboxUsers(st.inbox)}
}

// readCounts reads rows of (notification id, due now) of inserted
// deliveries into st.
func (st *enqueueState) readCounts(rows txRows) error {
	for rows.Next() {
		var id string
		var now bool
		if err := rows.Scan(&id, &now); err != nil {
			return err
		}
		st.counts[id]++
		st.due = st.due || now
	}
	return nil
}

// writeSteps are the statements that write a checked trigger whose
// idempotency key (if any) is taken: every one is built from p alone, so
// they can be pipelined. A missing user fails the first (checkUsers) with
// a clear error, in PostgreSQL: the transaction is aborted there, so the
// inserts after it never run and it writes nothing.
func (s *Store) writeSteps(p store.EnqueueParams, st *enqueueState) ([]step, error) {
	st.counts = make(map[string]int, len(p.Notifications))
	notifications, err := s.insertNotifications(p)
	if err != nil {
		return nil, err
	}
	steps := []step{s.checkUsers(p.Notifications), notifications}
	escalations, err := s.insertEscalations(p)
	if err != nil {
		return nil, err
	}
	if escalations != nil {
		steps = append(steps, *escalations)
	}
	plan := rules.PlanEnqueue(p)
	if len(plan.Push) > 0 {
		steps = append(steps, s.insertDeliveries(p, plan.Push, st))
	}
	return append(steps, s.insertChannels(p, plan, st)...), nil
}

// claimTrigger takes the idempotency key first: INSERT … ON CONFLICT DO
// NOTHING waits for a concurrent trigger holding the key to commit or roll
// back, so of two triggers with one key exactly one writes, and the other
// then reads the winner's record. replayed is true when the key was taken
// with the same request hash: res holds the original notifications.
func (s *Store) claimTrigger(ctx context.Context, q txQuerier, p store.EnqueueParams) (res store.EnqueueResult, replayed bool, err error) {
	// A record pruned between the INSERT and the SELECT is taken on the
	// second round.
	for range 2 {
		inserted := false
		if err := runSteps(ctx, q, []step{s.triggerStep(p, &inserted)}); err != nil {
			return res, false, err
		}
		if inserted {
			return res, false, nil
		}
		res, found, err := s.readTrigger(ctx, q, p)
		if err != nil || found {
			return res, found, err
		}
	}
	return res, false, fmt.Errorf("postgres: trigger %q: the idempotency record keeps vanishing", p.IdempotencyKey)
}

// triggerStep inserts the idempotency record. With inserted, a taken key
// is left alone (ON CONFLICT DO NOTHING) and *inserted says whether the
// record was written; without, a taken key fails the step with
// errKeyTaken (the pipelined enqueue, whose later writes must not run).
func (s *Store) triggerStep(p store.EnqueueParams, inserted *bool) step {
	ids := notificationIDs(p)
	st := step{what: "trigger " + quote(p.IdempotencyKey),
		sql: s.q(`INSERT INTO {s}.triggers (namespace, idempotency_key, request_hash, notification_ids, created_at)
VALUES ($1, $2, $3, $4, $5)`),
		args: []any{p.IdempotencyNamespace, p.IdempotencyKey, p.RequestHash, ids, p.Now}}
	if inserted != nil {
		st.sql += ` ON CONFLICT DO NOTHING RETURNING 1`
		st.read = func(rows txRows) error {
			*inserted = rows.Next()
			return nil
		}
		return st
	}
	st.mapErr = func(err error) error {
		if pe := (*pgconn.PgError)(nil); errors.As(err, &pe) && pe.Code == "23505" {
			return errKeyTaken
		}
		return err
	}
	return st
}

// triggersStep inserts the idempotency records of several triggers in
// one statement (each with a key), leaving a taken key alone (ON CONFLICT
// DO NOTHING, which waits for a transaction that holds it uncommitted);
// taken[i] reports that ps[i]'s key was taken, by an earlier trigger or
// by an earlier one of ps. FireReminders settles those one by one, as
// claimTrigger does.
func (s *Store) triggersStep(ps []store.EnqueueParams, taken []bool) step {
	k := len(ps)
	namespace, key, hash, ids, created := make([]string, k), make([]string, k), make([]string, k), make([]string, k),
		make([]time.Time, k)
	for i, p := range ps {
		taken[i] = true
		b, _ := json.Marshal(notificationIDs(p))
		namespace[i], key[i], hash[i], ids[i], created[i] = p.IdempotencyNamespace, p.IdempotencyKey, p.RequestHash, string(b), p.Now
	}
	// The notification ids travel as JSON arrays: unnest cannot take an
	// array of arrays of different lengths.
	return step{what: "triggers", sql: s.q(`INSERT INTO {s}.triggers (namespace, idempotency_key, request_hash, notification_ids, created_at)
SELECT x.namespace, x.key, x.hash, ARRAY(SELECT jsonb_array_elements_text(x.ids::jsonb)), x.created
FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::timestamptz[]) WITH ORDINALITY
	AS x (namespace, key, hash, ids, created, ord)
ORDER BY x.ord
ON CONFLICT DO NOTHING
RETURNING namespace, idempotency_key`),
		args: []any{namespace, key, hash, ids, created},
		read: func(rows txRows) error {
			index := make(map[[2]string][]int, k)
			for i := range ps {
				index[[2]string{namespace[i], key[i]}] = append(index[[2]string{namespace[i], key[i]}], i)
			}
			for rows.Next() {
				var ns, key string
				if err := rows.Scan(&ns, &key); err != nil {
					return err
				}
				// Of several triggers with one key, the first inserted it.
				if i := index[[2]string{ns, key}]; len(i) > 0 {
					taken[i[0]] = false
				}
			}
			return nil
		}}
}

// notificationIDs are the ids of p's notifications, in order.
func notificationIDs(p store.EnqueueParams) []string {
	ids := make([]string, len(p.Notifications))
	for i, n := range p.Notifications {
		ids[i] = n.ID
	}
	return ids
}

// readTrigger returns the original notifications of an existing trigger,
// or ECONFLICT if its request hash differs. found is false if there is
// no record.
func (s *Store) readTrigger(ctx context.Context, q txQuerier, p store.EnqueueParams) (res store.EnqueueResult, found bool, err error) {
	// A trigger of a digest type that joined a digest has no
	// notification: its item names it, and the digest its user.
	rows, err := q.query(ctx, s.q(`SELECT t.request_hash, x.id, coalesce(n.user_id, g.user_id, ''),
	(SELECT count(*) FROM {s}.deliveries d WHERE d.notification_id = x.id), coalesce(g.id, '')
FROM {s}.triggers t CROSS JOIN LATERAL unnest(t.notification_ids) WITH ORDINALITY AS x (id, ord)
LEFT JOIN {s}.notifications n ON n.id = x.id
LEFT JOIN LATERAL (SELECT g.id, g.user_id FROM {s}.digest_items i JOIN {s}.digests g ON g.id = i.digest_id
	WHERE n.id IS NULL AND i.item_id = x.id LIMIT 1) g ON true
WHERE t.namespace = $1 AND t.idempotency_key = $2 ORDER BY x.ord`), p.IdempotencyNamespace, p.IdempotencyKey)
	if err != nil {
		return res, false, formatError(err, "trigger "+quote(p.IdempotencyKey))
	}
	defer rows.Close()
	var hash string
	for rows.Next() {
		// A notification removed by retention since is reported by id only.
		var e store.EnqueuedNotification
		if err := rows.Scan(&hash, &e.ID, &e.UserID, &e.Deliveries, &e.Digest); err != nil {
			return res, false, formatError(err, "trigger "+quote(p.IdempotencyKey))
		}
		res.Notifications = append(res.Notifications, e)
	}
	if err := rows.Err(); err != nil {
		return res, false, formatError(err, "trigger "+quote(p.IdempotencyKey))
	}
	if len(res.Notifications) == 0 {
		return store.EnqueueResult{}, false, nil
	}
	if hash != p.RequestHash {
		return store.EnqueueResult{}, false, heraldtype.Errorf(heraldtype.ECONFLICT,
			"idempotency key %q was already used with a different request", p.IdempotencyKey)
	}
	res.Replayed = true
	return res, true, nil
}

// checkUsers fails with ENOTFOUND naming the first unknown user in
// notification order. It fails in PostgreSQL (user_not_found raises,
// migration 0009), so the transaction is aborted there: the statements
// pipelined after it are skipped and its COMMIT rolls back, even if the
// user is created before they would have run. It KEY SHARE locks every
// user it finds, as the notifications' foreign key did per row before
// migration 0019, so no user is deleted before the trigger commits.
func (s *Store) checkUsers(ns []heraldtype.Notification) step {
	var ids []string
	seen := make(map[string]bool, len(ns))
	for _, n := range ns {
		if !seen[n.UserID] {
			seen[n.UserID] = true
			ids = append(ids, n.UserID)
		}
	}
	return step{what: "users", sql: s.q(`SELECT {s}.user_not_found(m.id) FROM (
	SELECT u.id FROM unnest($1::text[]) WITH ORDINALITY AS u (id, ord)
	WHERE NOT EXISTS (SELECT 1 FROM {s}.users x WHERE x.id = u.id FOR KEY SHARE) ORDER BY u.ord LIMIT 1
) m`), args: []any{ids},
		read: func(rows txRows) error {
			if rows.Next() {
				// user_not_found never returns: a row here means the
				// function did not raise.
				return fmt.Errorf("postgres: the users check returned instead of failing")
			}
			return nil
		},
		mapErr: mapUserNotFound}
}

// userNotFoundCode is the SQLSTATE user_not_found raises.
const userNotFoundCode = "HR404"

// mapUserNotFound turns user_not_found's error into ENOTFOUND.
func mapUserNotFound(err error) error {
	var pe *pgconn.PgError
	if errors.As(err, &pe) && pe.Code == userNotFoundCode {
		return heraldtype.Errorf(heraldtype.ENOTFOUND, "user %q not found", pe.Detail)
	}
	return err
}

// insertNotifications writes the notifications in one INSERT … SELECT
// FROM unnest.
func (s *Store) insertNotifications(p store.EnqueueParams) (step, error) {
	k := len(p.Notifications)
	id, user, typ, title, body := make([]string, k), make([]string, k), make([]string, k), make([]string, k), make([]string, k)
	data, channels := make([]string, k), make([]string, k)
	priority, mode, guarantee, key := make([]string, k), make([]string, k), make([]string, k), make([]string, k)
	sendAt, created, dedupe, source := make([]*time.Time, k), make([]time.Time, k), make([]string, k), make([]string, k)
	traceParent, cancelKey, version := make([]string, k), make([]string, k), make([]int32, k)
	for i, n := range p.Notifications {
		src, err := store.SourceJSON(n.Source)
		if err != nil {
			return step{}, err
		}
		source[i], traceParent[i] = src, n.TraceParent
		dedupe[i], cancelKey[i], version[i] = n.DedupeKey, n.CancellationKey, int32(n.TemplateVersion)
		id[i], user[i], typ[i], title[i], body[i] = n.ID, n.UserID, n.Type, n.Title, n.Body
		if len(n.Data) > 0 {
			b, err := json.Marshal(n.Data)
			if err != nil {
				return step{}, fmt.Errorf("postgres: notification %q: data: %w", n.ID, err)
			}
			data[i] = string(b)
		}
		ch := n.Channels
		if ch == nil {
			ch = []heraldtype.Channel{}
		}
		b, err := json.Marshal(ch)
		if err != nil {
			return step{}, fmt.Errorf("postgres: notification %q: channels: %w", n.ID, err)
		}
		channels[i] = string(b)
		priority[i], mode[i], guarantee[i] = string(n.Priority), string(n.PayloadMode), string(n.Guarantee)
		key[i] = n.IdempotencyKey
		if key[i] == "" {
			key[i] = p.IdempotencyKey
		}
		sendAt[i], created[i] = nullTime(n.SendAt), n.CreatedAt
	}
	// Channels travel as JSON arrays: unnest cannot take an array of
	// arrays of different lengths.
	return step{what: "notification", sql: s.q(`INSERT INTO {s}.notifications (id, user_id, type, title, body, data, channels, priority,
	payload_mode, guarantee, idempotency_key, send_at, created_at, dedupe_key, source, trace_parent, cancellation_key,
	template_version)
SELECT x.id, x.user_id, x.type, x.title, x.body, NULLIF(x.data, '')::jsonb,
	ARRAY(SELECT jsonb_array_elements_text(x.channels::jsonb)), x.priority, x.mode, x.guarantee, x.key, x.send_at, x.created,
	x.dedupe, NULLIF(x.source, '')::jsonb, NULLIF(x.trace_parent, ''), x.cancel_key, x.template_version
FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[], $8::text[],
	$9::text[], $10::text[], $11::text[], $12::timestamptz[], $13::timestamptz[], $14::text[], $15::text[], $16::text[],
	$17::text[], $18::integer[])
	AS x (id, user_id, type, title, body, data, channels, priority, mode, guarantee, key, send_at, created, dedupe, source,
		trace_parent, cancel_key, template_version)`),
		args: []any{id, user, typ, title, body, data, channels, priority, mode, guarantee, key, sendAt, created, dedupe, source,
			traceParent, cancelKey, version},
	}, nil
}

// insertDeliveries fans the push notifications of the plan out to the
// devices that qualify (rules.PushDeviceSQL) in one INSERT … SELECT,
// which counts the deliveries per notification into st.
func (s *Store) insertDeliveries(p store.EnqueueParams, push []rules.Route, st *enqueueState) step {
	k := len(push)
	nid, uid, typ, guarantee, runAt := make([]string, k), make([]string, k), make([]string, k), make([]string, k),
		make([]time.Time, k)
	for i, r := range push {
		nid[i], uid[i], typ[i], guarantee[i], runAt[i] = r.N.ID, r.N.UserID, r.N.Type, string(r.N.Guarantee), r.RunAt
	}
	platforms, providers := rules.PushRoutes(p.PushProviders)
	// The devices are looked up per recipient (LATERAL, kept from being
	// flattened into a plain join by OFFSET 0), so the user_id index is
	// used whatever the table's statistics say: with a join, a devices
	// table filled since its last ANALYZE was scanned in full for every
	// trigger (215-358 ms instead of ~1 ms for 100 recipients of 10,000
	// users, measured with EXPLAIN ANALYZE).
	return step{what: "deliveries", sql: s.q(`INSERT INTO {s}.deliveries (notification_id, user_id, type, channel, provider,
	device_id, state, guarantee, attempt, max_attempts, run_at, created_at, updated_at)
SELECT n.id, n.user_id, n.type, 'push', r.provider, d.id, 'pending', n.guarantee, 0, $8, n.run_at, $9, $9
FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::timestamptz[]) WITH ORDINALITY
	AS n (id, user_id, type, guarantee, run_at, ord)
CROSS JOIN LATERAL (SELECT d.id, d.platform, d.status, d.push_opt_in, d.token FROM {s}.devices d
	WHERE d.user_id = n.user_id OFFSET 0) d
JOIN unnest($6::text[], $7::text[]) AS r (platform, provider) ON ` + rules.PushDeviceSQL + `
ORDER BY n.ord, d.id
RETURNING notification_id, run_at <= $9`),
		args: []any{nid, uid, typ, guarantee, runAt, platforms, providers, p.MaxAttempts, p.Now},
		read: st.readCounts}
}

// PruneTriggers implements store.Store.
func (s *Store) PruneTriggers(ctx context.Context, cutoff time.Time) (int, error) {
	tag, err := s.pool.Exec(ctx, s.q(`DELETE FROM {s}.triggers WHERE created_at < $1`), cutoff)
	return int(tag.RowsAffected()), formatError(err, "triggers")
}

const notificationColumns = `id, user_id, type, title, body, data, channels, priority, payload_mode,
	guarantee, idempotency_key, send_at, created_at, dedupe_key, cancellation_key, template_version`

// GetNotification implements store.Store.
func (s *Store) GetNotification(ctx context.Context, id string) (heraldtype.Notification, error) {
	row := s.pool.QueryRow(ctx, s.q(`SELECT `+notificationColumns+`, source FROM {s}.notifications WHERE id = $1`), id)
	var src []byte
	n, err := scanNotification(row, &src)
	if err == nil {
		n.Source, err = store.ParseSource(src)
	}
	return n, formatError(err, "notification "+quote(id))
}

// scanNotification scans notificationColumns, then extra.
func scanNotification(row pgx.Row, extra ...any) (heraldtype.Notification, error) {
	var n heraldtype.Notification
	var data []byte
	var channels []string
	var sendAt *time.Time
	err := row.Scan(append([]any{&n.ID, &n.UserID, &n.Type, &n.Title, &n.Body, &data, &channels, &n.Priority, &n.PayloadMode,
		&n.Guarantee, &n.IdempotencyKey, &sendAt, &n.CreatedAt, &n.DedupeKey, &n.CancellationKey, &n.TemplateVersion}, extra...)...)
	if err != nil {
		return n, err
	}
	return n, fillNotification(&n, data, channels, sendAt)
}

// fillNotification sets the fields that need decoding.
func fillNotification(n *heraldtype.Notification, data []byte, channels []string, sendAt *time.Time) error {
	n.CreatedAt = utc(n.CreatedAt)
	if sendAt != nil {
		n.SendAt = sendAt.UTC()
	}
	if len(data) > 0 {
		if err := json.Unmarshal(data, &n.Data); err != nil {
			return fmt.Errorf("postgres: notification %q: data: %w", n.ID, err)
		}
	}
	n.Channels = make([]heraldtype.Channel, len(channels))
	for i, c := range channels {
		n.Channels[i] = heraldtype.Channel(c)
	}
	return nil
}
