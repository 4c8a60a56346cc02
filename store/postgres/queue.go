package postgres

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/heraldhq/herald/heraldtype"
	"github.com/heraldhq/herald/store"
)

// maxClaim bounds one claim batch.
const maxClaim = 1000

const deliveryColumns = `id, notification_id, user_id, type, channel, provider, device_id, state, guarantee,
	attempt, max_attempts, run_at, lease_owner, lease_until, last_error_code, last_error, provider_message_id,
	replay_count, last_replay_at, last_replay_result, created_at, updated_at, finished_at, address`

// deliveryDest returns the scan destinations of deliveryColumns in d.
func deliveryDest(d *heraldtype.Delivery) []any {
	return []any{&d.ID, &d.NotificationID, &d.UserID, &d.Type, &d.Channel, &d.Provider, &d.DeviceID, &d.State,
		&d.Guarantee, &d.Attempt, &d.MaxAttempts, &d.RunAt, &d.LeaseOwner, &d.LeaseUntil, &d.LastErrorCode,
		&d.LastError, &d.ProviderMessageID, &d.ReplayCount, &d.LastReplayAt, &d.LastReplayResult, &d.CreatedAt,
		&d.UpdatedAt, &d.FinishedAt, &d.Address}
}

// fixDelivery puts a scanned delivery's times in UTC.
func fixDelivery(d *heraldtype.Delivery) {
	d.RunAt, d.CreatedAt, d.UpdatedAt = utc(d.RunAt), utc(d.CreatedAt), utc(d.UpdatedAt)
	d.LeaseUntil, d.LastReplayAt, d.FinishedAt = utcPtr(d.LeaseUntil), utcPtr(d.LastReplayAt), utcPtr(d.FinishedAt)
}

// Claim implements store.Store with one statement in its own transaction,
// in one round trip (indexedQueries): the CTE picks due rows
// with FOR UPDATE SKIP LOCKED (a row another instance is claiming is
// passed over, not waited for, S2.4, S4.2), the UPDATE leases them, and
// the outer SELECT joins each to its notification and its device as they
// are in the same snapshot. The device join requires the device to still
// belong to the delivery's user, so a device that moved to another user
// comes back as nil. Devices are looked up per job (LATERAL, fenced by
// OFFSET 0) so the primary key is used even when the planner's statistics
// are stale; a hash join scanned the whole devices table per claim.
func (s *Store) Claim(ctx context.Context, p store.ClaimParams) ([]heraldtype.Job, error) {
	jobs, _, _, err := s.claim(ctx, p, false)
	return jobs, err
}

// ClaimNext implements store.NextClaimer: Claim, and NextRunAt's query in
// the same transaction and round trip, after the claim (so the rows it
// claimed are leased by then).
func (s *Store) ClaimNext(ctx context.Context, p store.ClaimParams) ([]heraldtype.Job, time.Time, bool, error) {
	return s.claim(ctx, p, true)
}

// nextRunAtSQL is the earliest run_at of a pending delivery; the partial
// pending index answers it.
const nextRunAtSQL = `SELECT min(run_at) FROM {s}.deliveries WHERE state = 'pending'`

// scanNextRunAt reads the one row of nextRunAtSQL.
func scanNextRunAt(row interface{ Scan(...any) error }) (time.Time, bool, error) {
	var t *time.Time
	if err := row.Scan(&t); err != nil || t == nil {
		return time.Time{}, false, err
	}
	return t.UTC(), true, nil
}

func (s *Store) claim(ctx context.Context, p store.ClaimParams, withNext bool) (jobs []heraldtype.Job, next time.Time, hasNext bool, err error) {
	if p.Owner == "" {
		return nil, next, false, heraldtype.FieldErrorf("owner", "must not be empty")
	}
	if p.Limit < 1 || p.Limit > maxClaim {
		return nil, next, false, heraldtype.FieldErrorf("limit", "must be between 1 and %d", maxClaim)
	}
	if !p.LeaseUntil.After(p.Now) {
		return nil, next, false, heraldtype.FieldErrorf("lease_until", "must be after now")
	}
	excluded := p.ExcludeProviders
	if excluded == nil {
		excluded = []string{}
	}
	// One pipelined round trip: BEGIN, the planner settings, the claim,
	// (the next run_at,) COMMIT (see indexPlans). The jobs count only once
	// the COMMIT succeeded: before that, the leases are not taken.
	notifications := make(map[string]*heraldtype.Notification)
	qs := []indexed{{sql: `WITH c AS (
	SELECT id FROM {s}.deliveries
	WHERE state = 'pending' AND run_at <= $1 AND provider <> ALL ($2::text[])
	ORDER BY run_at, id LIMIT $3 FOR UPDATE SKIP LOCKED
), u AS (
	UPDATE {s}.deliveries d SET state = 'leased', lease_owner = $4, lease_until = $5, attempt = d.attempt + 1,
		updated_at = $1
	FROM c WHERE d.id = c.id
	RETURNING d.*
)
SELECT u.id, u.notification_id, u.user_id, u.type, u.channel, u.provider, u.device_id, u.state, u.guarantee,
	u.attempt, u.max_attempts, u.run_at, u.lease_owner, u.lease_until, u.last_error_code, u.last_error,
	u.provider_message_id, u.replay_count, u.last_replay_at, u.last_replay_result, u.created_at, u.updated_at,
	u.finished_at, u.address,
	n.id, n.user_id, n.type, n.title, n.body, n.data, n.channels, n.priority, n.payload_mode, n.guarantee,
	n.idempotency_key, n.send_at, n.created_at, n.dedupe_key, n.source, n.trace_parent, n.template_version,
	v.id, v.user_id, v.platform, v.token, v.app_version, v.push_opt_in, v.status, v.fail_count, v.last_seen_at,
	v.invalidated_at, v.invalid_reason, v.created_at, v.updated_at, v.webpush_p256dh, v.webpush_auth
FROM u JOIN {s}.notifications n ON n.id = u.notification_id
LEFT JOIN LATERAL (SELECT * FROM {s}.devices v WHERE v.id = u.device_id AND v.user_id = u.user_id OFFSET 0) v ON true
ORDER BY u.run_at, u.id`, args: []any{p.Now, excluded, p.Limit, p.Owner, p.LeaseUntil},
		read: func(rows pgx.Rows) error {
			for rows.Next() {
				j, err := scanJob(rows, notifications)
				if err != nil {
					return err
				}
				jobs = append(jobs, j)
			}
			return nil
		}}}
	if withNext {
		qs = append(qs, indexed{sql: nextRunAtSQL, read: func(rows pgx.Rows) error {
			if !rows.Next() {
				return rows.Err()
			}
			var err error
			next, hasNext, err = scanNextRunAt(rows)
			return err
		}})
	}
	if err := s.indexedQueries(ctx, "claim", qs...); err != nil {
		return nil, time.Time{}, false, err
	}
	return jobs, next, hasNext, nil
}

// scanJob scans one row of Claim. Jobs of one notification share its
// *Notification, decoded once.
func scanJob(rows pgx.Rows, notifications map[string]*heraldtype.Notification) (heraldtype.Job, error) {
	var j heraldtype.Job
	var n heraldtype.Notification
	var data []byte
	var channels []string
	var sendAt *time.Time
	var source []byte
	// A NULL trace_parent (tracing off) scans into a nil pointer: the
	// claim allocates nothing for it.
	var traceParent *string
	var dev nullDevice
	dest := deliveryDest(&j.Delivery)
	// The source too: the daily cap counts what rules and campaigns
	// produce by default (issue 30 item 5), as SQLite's claim reads it.
	dest = append(dest, &n.ID, &n.UserID, &n.Type, &n.Title, &n.Body, &data, &channels, &n.Priority, &n.PayloadMode,
		&n.Guarantee, &n.IdempotencyKey, &sendAt, &n.CreatedAt, &n.DedupeKey, &source, &traceParent, &n.TemplateVersion)
	dest = append(dest, dev.dest()...)
	if err := rows.Scan(dest...); err != nil {
		return j, err
	}
	fixDelivery(&j.Delivery)
	if shared, ok := notifications[n.ID]; ok {
		j.Notification = shared
	} else {
		if err := fillNotification(&n, data, channels, sendAt); err != nil {
			return j, err
		}
		var err error
		if n.Source, err = store.ParseSource(source); err != nil {
			return j, fmt.Errorf("postgres: notification %q: %w", n.ID, err)
		}
		if traceParent != nil {
			n.TraceParent = *traceParent
		}
		notifications[n.ID] = &n
		j.Notification = &n
	}
	j.Device = dev.device()
	return j, nil
}

// nullDevice scans the device columns of an outer join.
type nullDevice struct {
	id, userID, platform, token, appVersion, status, invalidReason *string
	p256dh, auth                                                   *string
	pushOptIn                                                      *bool
	failCount                                                      *int
	lastSeen, invalidated, created, updated                        *time.Time
}

func (n *nullDevice) dest() []any {
	return []any{&n.id, &n.userID, &n.platform, &n.token, &n.appVersion, &n.pushOptIn, &n.status, &n.failCount,
		&n.lastSeen, &n.invalidated, &n.invalidReason, &n.created, &n.updated, &n.p256dh, &n.auth}
}

// device returns the device, nil when the join found none.
func (n *nullDevice) device() *heraldtype.Device {
	if n.id == nil {
		return nil
	}
	return &heraldtype.Device{
		ID: *n.id, UserID: *n.userID, Platform: heraldtype.Platform(*n.platform), Token: *n.token,
		AppVersion: *n.appVersion, PushOptIn: *n.pushOptIn, Status: heraldtype.DeviceStatus(*n.status),
		FailCount: *n.failCount, LastSeenAt: n.lastSeen.UTC(), InvalidatedAt: utcPtr(n.invalidated),
		InvalidReason: *n.invalidReason, CreatedAt: n.created.UTC(), UpdatedAt: n.updated.UTC(),
		WebPushP256DH: *n.p256dh, WebPushAuth: *n.auth,
	}
}

// ExtendLeases implements store.Store.
func (s *Store) ExtendLeases(ctx context.Context, owner string, ids []int64, until time.Time) ([]int64, error) {
	extended := []int64{}
	if len(ids) == 0 {
		return extended, nil
	}
	rows, err := s.pool.Query(ctx, s.q(`UPDATE {s}.deliveries SET lease_until = $1
WHERE state = 'leased' AND lease_owner = $2 AND id = ANY ($3::bigint[]) RETURNING id`), until, owner, ids)
	if err != nil {
		return nil, formatError(err, "leases")
	}
	got, err := pgx.CollectRows(rows, pgx.RowTo[int64])
	if err != nil {
		return nil, formatError(err, "leases")
	}
	extended = append(extended, got...)
	slices.Sort(extended)
	return extended, nil
}

// leaseExpired is the error text of a reaped lease.
const leaseExpired = `'lease expired before an outcome was recorded'`

// ReapExpiredLeases implements store.Store (S1.3) with one statement
// (after lockFinishing's, for the status events): the UPDATE moves
// at_least_once deliveries back to pending (attempt kept, so max_attempts
// still bounds them) and at_most_once ones to unknown, and the attempt
// rows and the webhook messages are inserted from what it returns. Row
// locks order it against a Complete of the same delivery: whichever comes
// second finds the row no longer leased and leaves it.
func (s *Store) ReapExpiredLeases(ctx context.Context, now time.Time) (store.ReapResult, error) {
	var res store.ReapResult
	// The notifications whose deliveries may become unknown are locked
	// first (lockFinishing), for their status events.
	lock := indexed{sql: lockFinishing(`d.state = 'leased' AND d.lease_until < $1 AND d.guarantee = 'at_most_once'`),
		args: []any{now}, read: func(pgx.Rows) error { return nil }}
	err := s.indexedQueries(ctx, "leases", lock, indexed{args: []any{now}, sql: `WITH u AS (
	UPDATE {s}.deliveries SET
		state = CASE guarantee WHEN 'at_most_once' THEN 'unknown' ELSE 'pending' END,
		run_at = CASE guarantee WHEN 'at_most_once' THEN run_at ELSE $1 END,
		finished_at = CASE guarantee WHEN 'at_most_once' THEN $1 END,
		last_replay_result = CASE WHEN guarantee = 'at_most_once' AND replay_count > 0 THEN 'unknown'
			ELSE last_replay_result END,
		lease_owner = '', lease_until = NULL, last_error_code = 'lease_expired', last_error = ` + leaseExpired + `,
		updated_at = $1
	WHERE state = 'leased' AND lease_until < $1
	RETURNING id, attempt, guarantee, notification_id, user_id, type AS ntype, channel, state, replay_count,
		last_error_code AS last_code, last_error AS last_err, $1::timestamptz AS at, id AS ord
), ` + outcomeEvents + `, a AS (
	INSERT INTO {s}.delivery_attempts (delivery_id, attempt, at, outcome, error_code, error)
	SELECT id, attempt, $1, CASE guarantee WHEN 'at_most_once' THEN 'unknown' ELSE 'lease_expired' END,
		'lease_expired', ` + leaseExpired + `
	FROM u ORDER BY id
)
SELECT count(*) FILTER (WHERE guarantee <> 'at_most_once'), count(*) FILTER (WHERE guarantee = 'at_most_once')
FROM u`, read: func(rows pgx.Rows) error {
		if !rows.Next() {
			return rows.Err()
		}
		return rows.Scan(&res.Requeued, &res.Unknown)
	}})
	if err != nil {
		return store.ReapResult{}, err
	}
	if res.Requeued > 0 {
		if _, err := s.pool.Exec(ctx, s.notifySQL()); err != nil {
			return res, formatError(err, "notify")
		}
	}
	return res, nil
}

// NextRunAt implements store.Store; the partial pending index answers it.
func (s *Store) NextRunAt(ctx context.Context) (time.Time, bool, error) {
	t, ok, err := scanNextRunAt(s.pool.QueryRow(ctx, s.q(nextRunAtSQL)))
	return t, ok, formatError(err, "deliveries")
}

// QueueStats implements store.Store. Each count is answered by the partial
// index of its state (deliveries_pending_run_at, deliveries_leased_until,
// deliveries_dead_letters), never by a scan of the table.
func (s *Store) QueueStats(ctx context.Context) (map[heraldtype.DeliveryState]int, error) {
	stats := map[heraldtype.DeliveryState]int{}
	for _, st := range store.QueueDepthStates {
		stats[st] = 0
	}
	err := s.indexedQuery(ctx, "deliveries", `SELECT 'pending', count(*) FROM {s}.deliveries WHERE state = 'pending'
UNION ALL SELECT 'leased', count(*) FROM {s}.deliveries WHERE lease_until IS NOT NULL AND state = 'leased'
UNION ALL SELECT state, count(*) FROM {s}.deliveries WHERE state IN ('dead', 'unknown') GROUP BY state`,
		func(rows pgx.Rows) error { return readStateCounts(rows, stats) })
	if err != nil {
		return nil, err
	}
	return stats, nil
}

// CountDeliveries implements store.Store with a scan of the whole table.
func (s *Store) CountDeliveries(ctx context.Context) (map[heraldtype.DeliveryState]int, error) {
	stats := map[heraldtype.DeliveryState]int{}
	for _, st := range store.DeliveryStates {
		stats[st] = 0
	}
	rows, err := s.pool.Query(ctx, s.q(`SELECT state, count(*) FROM {s}.deliveries GROUP BY state`))
	if err != nil {
		return nil, formatError(err, "deliveries")
	}
	defer rows.Close()
	if err := readStateCounts(rows, stats); err != nil {
		return nil, formatError(err, "deliveries")
	}
	return stats, formatError(rows.Err(), "deliveries")
}

// readStateCounts reads (state, count) rows into stats.
func readStateCounts(rows pgx.Rows, stats map[heraldtype.DeliveryState]int) error {
	for rows.Next() {
		var st string
		var n int
		if err := rows.Scan(&st, &n); err != nil {
			return err
		}
		stats[heraldtype.DeliveryState(st)] = n
	}
	return nil
}

// A table that claims walk is vacuumed when it holds at least
// vacuumMinRows dead row versions and they are at least 1/vacuumDeadShare
// of its live rows (a 1,000,000-row backlog is vacuumed every 50,000
// claims and outcomes, about 25,000 deliveries or reminder occurrences),
// or when at least vacuumMinRows rows and 1/vacuumInsertShare of the live
// ones were inserted since the last vacuum. The second rule is
// autovacuum's insert threshold: the first vacuum after a large enqueue
// visits every new page to mark it all-visible, and done once, over
// 1,000,000 fresh rows in the middle of the drain, it cut the send rate
// to about 1,200/s for half a minute; done as the rows arrive, it costs
// the same in small parts. An idle table is never vacuumed.
const (
	vacuumMinRows     = 10_000
	vacuumDeadShare   = 20
	vacuumInsertShare = 5
)

// vacuumTables are the tables whose claims walk the head of an index past
// the dead entries of the rows claimed before: the queue (the pending
// index) and the reminders (reminders_due: each fire moves a reminder's
// next_at and leaves a dead entry where it was due, 1,000,000 of them at
// the head of the index by the end of a million-reminder drain).
var vacuumTables = []string{"deliveries", "reminders"}

// VacuumQueue implements store.QueueVacuumer. It reads the dead, live and
// newly inserted row counts of each of vacuumTables from the statistics
// PostgreSQL keeps anyway, and runs VACUUM (ANALYZE) on each table that
// passes the thresholds above, one at a time: the dead entries at the
// head of its claim index go, and the planner learns how many rows are
// due. A manual VACUUM is not throttled by autovacuum's cost delay and
// takes no lock that blocks claims, outcomes, fires or enqueues.
func (s *Store) VacuumQueue(ctx context.Context) (bool, error) {
	rows, err := s.pool.Query(ctx, `SELECT relname, n_live_tup, n_dead_tup, n_ins_since_vacuum FROM pg_stat_user_tables
WHERE schemaname = $1 AND relname = ANY($2) ORDER BY relname`, s.schema, vacuumTables)
	if err != nil {
		return false, formatError(err, "vacuum")
	}
	var due []string
	for rows.Next() {
		var table string
		var live, dead, inserted int64
		if err := rows.Scan(&table, &live, &dead, &inserted); err != nil {
			rows.Close()
			return false, formatError(err, "vacuum")
		}
		deadEnough := dead >= vacuumMinRows && dead >= live/vacuumDeadShare
		newEnough := inserted >= vacuumMinRows && inserted >= live/vacuumInsertShare
		if deadEnough || newEnough {
			due = append(due, table)
		}
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return false, formatError(err, "vacuum")
	}
	for _, table := range due {
		if err := s.vacuumThrottled(ctx, s.q(`VACUUM (ANALYZE) {s}.`+table)); err != nil {
			return false, formatError(err, "vacuum "+table)
		}
	}
	return len(due) > 0, nil
}

// vacuumCostDelay throttles the leader's VACUUM as autovacuum throttles
// itself (autovacuum_vacuum_cost_delay is 2 ms): a manual VACUUM runs
// unthrottled by default and competed at full speed with the claims and
// triggers it is meant to help — on two cores its 0.4 s runs were stalls
// in trigger → send latency (docs/PERFORMANCE.md, session 4).
const vacuumCostDelay = "2ms"

// vacuumThrottled runs a VACUUM statement on a connection of its own with
// vacuumCostDelay set, and resets the setting before the connection goes
// back to the pool (a connection that cannot be reset is closed instead).
// VACUUM cannot run in a transaction, so SET LOCAL cannot scope it.
func (s *Store) vacuumThrottled(ctx context.Context, sql string) error {
	conn, err := s.pool.Acquire(ctx)
	if err != nil {
		return err
	}
	defer conn.Release()
	defer func() {
		rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		if _, err := conn.Exec(rctx, "RESET vacuum_cost_delay"); err != nil {
			_ = conn.Conn().Close(rctx)
		}
	}()
	if _, err := conn.Exec(ctx, "SET vacuum_cost_delay = '"+vacuumCostDelay+"'"); err != nil {
		return err
	}
	_, err = conn.Exec(ctx, sql)
	return err
}
