package postgres

import (
	"context"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/heraldhq/herald/heraldtype"
	"github.com/heraldhq/herald/store"
	"github.com/heraldhq/herald/store/rules"
)

// The outbound webhook endpoints and messages (issue 35 item 4;
// store/webhooks.go).

const webhookEndpointColumns = `id, url, description, events, enabled, disabled_reason, failing_since, secret,
	previous_secret, previous_until, created_at, updated_at`

func scanWebhookEndpoint(row pgx.Row) (store.WebhookEndpoint, error) {
	var (
		e      store.WebhookEndpoint
		events string
	)
	err := row.Scan(&e.ID, &e.URL, &e.Description, &events, &e.Enabled, &e.DisabledReason, &e.FailingSince,
		&e.Secret, &e.PreviousSecret, &e.PreviousSecretUntil, &e.CreatedAt, &e.UpdatedAt)
	if err != nil {
		return store.WebhookEndpoint{}, err
	}
	e.Events = strings.Fields(events)
	e.FailingSince, e.PreviousSecretUntil = utcPtr(e.FailingSince), utcPtr(e.PreviousSecretUntil)
	e.CreatedAt, e.UpdatedAt = utc(e.CreatedAt), utc(e.UpdatedAt)
	return e, nil
}

// CreateWebhookEndpoint implements store.WebhookEndpoints.
func (s *Store) CreateWebhookEndpoint(ctx context.Context, e store.WebhookEndpoint) error {
	_, err := s.pool.Exec(ctx, s.q(`INSERT INTO {s}.webhook_endpoints (`+webhookEndpointColumns+`)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)`),
		e.ID, e.URL, e.Description, strings.Join(e.Events, " "), e.Enabled, e.DisabledReason, e.FailingSince,
		e.Secret, e.PreviousSecret, e.PreviousSecretUntil, e.CreatedAt, e.UpdatedAt)
	return formatError(err, "webhook endpoint "+quote(e.ID))
}

// GetWebhookEndpoint implements store.WebhookEndpoints.
func (s *Store) GetWebhookEndpoint(ctx context.Context, id string) (store.WebhookEndpoint, error) {
	e, err := scanWebhookEndpoint(s.pool.QueryRow(ctx, s.q(`SELECT `+webhookEndpointColumns+`
FROM {s}.webhook_endpoints WHERE id = $1`), id))
	return e, formatError(err, "webhook endpoint "+quote(id))
}

// ListWebhookEndpoints implements store.WebhookEndpoints.
func (s *Store) ListWebhookEndpoints(ctx context.Context) ([]store.WebhookEndpoint, error) {
	rows, err := s.pool.Query(ctx, s.q(`SELECT `+webhookEndpointColumns+` FROM {s}.webhook_endpoints ORDER BY created_at, id`))
	if err != nil {
		return nil, formatError(err, "webhook endpoints")
	}
	es, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (store.WebhookEndpoint, error) { return scanWebhookEndpoint(r) })
	if err != nil {
		return nil, formatError(err, "webhook endpoints")
	}
	if es == nil {
		es = []store.WebhookEndpoint{}
	}
	return es, nil
}

// UpdateWebhookEndpoint implements store.WebhookEndpoints. Enabling
// clears the disabled reason and failing_since; disabling keeps them.
func (s *Store) UpdateWebhookEndpoint(ctx context.Context, id string, u store.WebhookEndpointUpdate, now time.Time) (store.WebhookEndpoint, error) {
	var events *string
	if u.Events != nil {
		j := strings.Join(*u.Events, " ")
		events = &j
	}
	e, err := scanWebhookEndpoint(s.pool.QueryRow(ctx, s.q(`UPDATE {s}.webhook_endpoints SET
	url = coalesce($2, url), description = coalesce($3, description), events = coalesce($4, events),
	enabled = coalesce($5, enabled),
	disabled_reason = CASE WHEN $5 THEN '' ELSE disabled_reason END,
	failing_since = CASE WHEN $5 THEN NULL ELSE failing_since END,
	updated_at = $6
WHERE id = $1 RETURNING `+webhookEndpointColumns), id, u.URL, u.Description, events, u.Enabled, now))
	return e, formatError(err, "webhook endpoint "+quote(id))
}

// DeleteWebhookEndpoint implements store.WebhookEndpoints: its messages
// go with it in the same statement (no foreign key: migration 0037 says
// why, and PruneWebhookMessages deletes the rare orphan).
func (s *Store) DeleteWebhookEndpoint(ctx context.Context, id string) error {
	var n int
	err := s.pool.QueryRow(ctx, s.q(`WITH e AS (
	DELETE FROM {s}.webhook_endpoints WHERE id = $1 RETURNING id
), m AS (
	DELETE FROM {s}.webhook_messages WHERE endpoint_id = $1 AND EXISTS (SELECT 1 FROM e)
), l AS (
	DELETE FROM {s}.webhook_events WHERE endpoint_id = $1 AND EXISTS (SELECT 1 FROM e)
)
SELECT count(*) FROM e`), id).Scan(&n)
	return affectedOne(int64(n), err, "webhook endpoint "+quote(id))
}

// RotateWebhookSecret implements store.WebhookEndpoints.
func (s *Store) RotateWebhookSecret(ctx context.Context, id, secret string, previousUntil, now time.Time) (store.WebhookEndpoint, error) {
	e, err := scanWebhookEndpoint(s.pool.QueryRow(ctx, s.q(`UPDATE {s}.webhook_endpoints SET
	previous_secret = secret, previous_until = $3, secret = $2, updated_at = $4
WHERE id = $1 RETURNING `+webhookEndpointColumns), id, secret, previousUntil, now))
	return e, formatError(err, "webhook endpoint "+quote(id))
}

// AddWebhookEvents implements store.WebhookEndpoints: one INSERT … SELECT
// over the events joined with the endpoints that get them.
func (s *Store) AddWebhookEvents(ctx context.Context, events []store.WebhookEvent) (int, error) {
	if err := store.CheckWebhookEvents(events); err != nil {
		return 0, err
	}
	if len(events) == 0 {
		return 0, nil
	}
	k := len(events)
	ids, types, keys, data, endpoints := make([]string, k), make([]string, k), make([]string, k), make([]string, k), make([]string, k)
	at := make([]time.Time, k)
	for i, e := range events {
		ids[i], types[i], keys[i], data[i], endpoints[i], at[i] = e.EventID, e.Type, e.OrderingKey, string(e.Data), e.EndpointID, e.At
	}
	tag, err := s.pool.Exec(ctx, s.q(`INSERT INTO {s}.webhook_events (`+rules.WebhookEventColumns+`)
SELECT w.id, v.event_id, v.type, v.ordering_key, v.payload, v.at
FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::timestamptz[])
	WITH ORDINALITY AS v (event_id, type, ordering_key, payload, endpoint_id, at, ord)
JOIN {s}.webhook_endpoints w ON CASE WHEN v.endpoint_id <> '' THEN w.id = v.endpoint_id
	ELSE `+rules.WebhookSubscribed("w", "v.type")+` END
ORDER BY v.ord, w.id`), ids, types, keys, data, endpoints, at)
	return int(tag.RowsAffected()), formatError(err, "webhook messages")
}

// webhookMessageColumns are read by scanWebhookMessage, prefixed m.
const webhookMessageColumns = `m.seq, m.endpoint_id, m.event_id, m.type, m.ordering_key, m.payload, m.state, m.attempt,
	m.run_at, m.occurred_at, m.first_at, m.last_status, m.last_error, m.finished_at`

func scanWebhookMessage(row pgx.Row, extra ...any) (heraldtype.WebhookMessage, error) {
	var (
		m       heraldtype.WebhookMessage
		payload string
	)
	err := row.Scan(append([]any{&m.Seq, &m.EndpointID, &m.EventID, &m.Type, &m.OrderingKey, &payload, &m.State,
		&m.Attempt, &m.RunAt, &m.OccurredAt, &m.FirstAt, &m.LastStatus, &m.LastError, &m.FinishedAt}, extra...)...)
	if err != nil {
		return heraldtype.WebhookMessage{}, err
	}
	m.Data = []byte(payload)
	m.RunAt, m.OccurredAt, m.FirstAt, m.FinishedAt = utc(m.RunAt), utc(m.OccurredAt), utc(m.FirstAt), utcPtr(m.FinishedAt)
	return m, nil
}

// ClaimWebhookMessages implements store.WebhookEndpoints: FOR UPDATE SKIP
// LOCKED over the due index, as the delivery claim does, so instances
// claim side by side. The NOT EXISTS keeps a message behind an earlier
// unfinished one of its endpoint and ordering key (webhook_messages_order),
// which also means one claim takes at most one message of a key. The
// lease's end becomes run_at: an instance that dies holding it leaves it
// due again then, with no reaper.
func (s *Store) ClaimWebhookMessages(ctx context.Context, p store.WebhookClaim) ([]store.WebhookJob, error) {
	if err := store.CheckWebhookClaim(p); err != nil {
		return nil, err
	}
	// The candidates are locked (SKIP LOCKED, so instances claim side by
	// side) before the cap per endpoint is counted over them: PostgreSQL
	// allows no window function beside FOR UPDATE. A candidate the cap
	// leaves out stays locked only until this statement ends.
	skip := p.Skip
	if skip == nil {
		skip = []string{}
	}
	rows, err := s.pool.Query(ctx, s.q(`WITH d AS (
	SELECT m.seq, m.endpoint_id, m.run_at FROM {s}.webhook_messages m JOIN {s}.webhook_endpoints e ON e.id = m.endpoint_id AND e.enabled
	WHERE m.state IN ('pending', 'leased') AND m.run_at <= $1 AND NOT (m.endpoint_id = ANY ($5::text[]))
		AND NOT EXISTS (SELECT 1 FROM {s}.webhook_messages p WHERE p.endpoint_id = m.endpoint_id
			AND p.ordering_key = m.ordering_key AND p.seq < m.seq AND p.state IN ('pending', 'leased'))
	ORDER BY m.run_at, m.seq LIMIT $4
	FOR UPDATE OF m SKIP LOCKED
), c AS (
	SELECT seq FROM (SELECT seq, row_number() OVER (PARTITION BY endpoint_id ORDER BY run_at, seq) AS n FROM d) r
	WHERE $6 = 0 OR n <= $6
)
UPDATE {s}.webhook_messages m SET state = 'leased', lease_owner = $2, lease_until = $3, run_at = $3,
	attempt = m.attempt + 1
FROM c, {s}.webhook_endpoints e WHERE m.seq = c.seq AND e.id = m.endpoint_id
RETURNING `+webhookMessageColumns+`, e.url, e.secret, CASE WHEN e.previous_until > $1 THEN e.previous_secret ELSE '' END,
	e.failing_since`), p.Now, p.Owner, p.LeaseUntil, p.Limit, skip, p.PerEndpoint)
	if err != nil {
		return nil, formatError(err, "webhook messages")
	}
	jobs, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (store.WebhookJob, error) {
		var (
			j                store.WebhookJob
			secret, previous string
			failing          *time.Time
		)
		m, err := scanWebhookMessage(r, &j.URL, &secret, &previous, &failing)
		j.WebhookMessage, j.FailingSince = m, utcPtr(failing)
		j.Secrets = []string{secret}
		if previous != "" {
			j.Secrets = append(j.Secrets, previous)
		}
		return j, err
	})
	if err != nil {
		return nil, formatError(err, "webhook messages")
	}
	store.SortWebhookJobs(jobs)
	return jobs, nil
}

// FinishWebhookMessage implements store.WebhookEndpoints: the message's
// update and its endpoint's in one statement, the endpoint's only when the
// message's guard held.
func (s *Store) FinishWebhookMessage(ctx context.Context, f store.WebhookFinish) (bool, bool, error) {
	if err := store.CheckWebhookFinish(f); err != nil {
		return false, false, err
	}
	var runAt, finished *time.Time
	if f.State == heraldtype.WebhookPending {
		runAt = &f.RunAt
	} else {
		finished = &f.At
	}
	var applied, disabled int
	err := s.pool.QueryRow(ctx, s.q(`WITH m AS (
	UPDATE {s}.webhook_messages SET state = $4, run_at = coalesce($5, run_at), lease_owner = '', lease_until = NULL,
		last_status = $6, last_error = $7, finished_at = $8
	WHERE seq = $1 AND state = 'leased' AND lease_owner = $2 AND attempt = $3
	RETURNING endpoint_id
), e AS (
	UPDATE {s}.webhook_endpoints w SET
		failing_since = CASE WHEN $4 = 'sent' THEN NULL ELSE coalesce(w.failing_since, $9) END,
		enabled = w.enabled AND NOT (`+webhookDisable+`),
		disabled_reason = CASE WHEN w.enabled AND `+webhookDisable+` THEN
			CASE WHEN $10 <> '' THEN $10 ELSE $12 END ELSE w.disabled_reason END,
		updated_at = $9
	FROM m WHERE w.id = m.endpoint_id AND (`+webhookEndpointChanges+`)
	RETURNING `+webhookDisable+` AS off
)
SELECT (SELECT count(*) FROM m), (SELECT count(*) FROM e WHERE off)`),
		f.Seq, f.Owner, f.Attempt, string(f.State), runAt, f.Status, f.Error, finished, f.At, f.Disable,
		nullTime(f.DisableFailingSince), f.FailingReason).Scan(&applied, &disabled)
	if err != nil {
		return false, false, formatError(err, "webhook message")
	}
	return applied == 1, disabled == 1, nil
}

// webhookEndpointChanges is FinishWebhookMessage's condition for writing
// the endpoint w at all: a success that clears failing_since, the first
// failure that sets it, or a failure that disables it. Every other outcome
// — the usual one, a success of an endpoint that is not failing — leaves
// the row alone: each message's outcome used to update it, and 100 sends
// at once queued on its lock and wrote a row version each (herald bench
// --webhooks, issue 35 item 5).
const webhookEndpointChanges = `($4 = 'sent' AND w.failing_since IS NOT NULL) OR ($4 <> 'sent' AND w.failing_since IS NULL)
		OR (w.enabled AND ` + webhookDisable + `)`

// webhookDisable is FinishWebhookMessage's condition for disabling the
// endpoint w: a failure that asks for it ($10, 410 Gone), or one while
// the endpoint has been failing since $11 or earlier.
// (A NULL $11, no disable_after, never disables.)
const webhookDisable = `coalesce($4 <> 'sent' AND ($10 <> '' OR coalesce(w.failing_since, $9) <= $11), false)`

// ListWebhookMessages implements store.WebhookEndpoints.
func (s *Store) ListWebhookMessages(ctx context.Context, f store.WebhookMessageFilter) ([]heraldtype.WebhookMessage, error) {
	if err := store.CheckWebhookMessageFilter(f); err != nil {
		return nil, err
	}
	var out []heraldtype.WebhookMessage
	err := s.inTx(ctx, func(tx pgx.Tx) error {
		var one int
		if err := tx.QueryRow(ctx, s.q(`SELECT 1 FROM {s}.webhook_endpoints WHERE id = $1`), f.EndpointID).Scan(&one); err != nil {
			return formatError(err, "webhook endpoint "+quote(f.EndpointID))
		}
		// The retry table's messages and the log's events not copied
		// there — sent when the cursor has passed them, pending before —
		// merged in log order, newest first.
		rows, err := tx.Query(ctx, s.q(`SELECT * FROM (
	(SELECT `+webhookMessageColumns+`, m.txid::text AS txid FROM {s}.webhook_messages m
	WHERE m.endpoint_id = $1 AND ($2 = '' OR m.state = $2) AND ($3 <= 0 OR (m.txid, m.seq) < ($5::text::xid8, $3))
	ORDER BY m.txid DESC, m.seq DESC LIMIT $4)
	UNION ALL
	(SELECT e.seq, e.endpoint_id, e.event_id, e.type, e.ordering_key, e.payload, l.state,
		CASE WHEN l.state = 'sent' THEN 1 ELSE 0 END, e.occurred_at, e.occurred_at, e.occurred_at, 0, '', NULL::timestamptz, e.txid::text
	FROM {s}.webhook_events e JOIN {s}.webhook_endpoints w ON w.id = e.endpoint_id,
		LATERAL (SELECT CASE WHEN (e.txid, e.seq) <= (w.cursor_txid, w.cursor_seq) THEN 'sent' ELSE 'pending' END AS state) l
	WHERE e.endpoint_id = $1 AND ($3 <= 0 OR (e.txid, e.seq) < ($5::text::xid8, $3))
		AND ($2 = '' OR l.state = $2)
		AND NOT EXISTS (SELECT 1 FROM {s}.webhook_messages c WHERE c.seq = e.seq)
	ORDER BY e.txid DESC, e.seq DESC LIMIT $4)
) x ORDER BY txid::xid8 DESC, seq DESC LIMIT $4`), f.EndpointID, string(f.State), f.Before, f.Limit,
			strconv.FormatUint(f.BeforeTxid, 10))
		if err != nil {
			return err
		}
		out, err = pgx.CollectRows(rows, func(r pgx.CollectableRow) (heraldtype.WebhookMessage, error) {
			var txid string
			m, err := scanWebhookMessage(r, &txid)
			if err == nil {
				m.Txid, err = strconv.ParseUint(txid, 10, 64)
			}
			return m, err
		})
		return err
	})
	if err != nil {
		return nil, formatError(err, "webhook messages")
	}
	if out == nil {
		out = []heraldtype.WebhookMessage{}
	}
	return out, nil
}

// ReplayWebhookMessages implements store.WebhookEndpoints.
func (s *Store) ReplayWebhookMessages(ctx context.Context, endpointID string, seqs []int64, now time.Time) (int, error) {
	if seqs == nil {
		seqs = []int64{} // an empty array, not NULL: every dead message
	}
	var n int
	err := s.inTx(ctx, func(tx pgx.Tx) error {
		var one int
		if err := tx.QueryRow(ctx, s.q(`SELECT 1 FROM {s}.webhook_endpoints WHERE id = $1`), endpointID).Scan(&one); err != nil {
			return formatError(err, "webhook endpoint "+quote(endpointID))
		}
		tag, err := tx.Exec(ctx, s.q(`UPDATE {s}.webhook_messages SET state = 'pending', attempt = 0, run_at = $3,
	first_at = $3, finished_at = NULL, lease_owner = '', lease_until = NULL
WHERE endpoint_id = $1 AND state = 'dead' AND (cardinality($2::bigint[]) = 0 OR seq = ANY ($2::bigint[]))`),
			endpointID, seqs, now)
		n = int(tag.RowsAffected())
		return err
	})
	return n, formatError(err, "webhook messages")
}

// PruneWebhookMessages implements store.WebhookEndpoints through the
// partial index of finished messages, deletes the log's events the
// endpoint's cursor has passed that occurred before cutoff (a range of
// webhook_events_stream per endpoint) and those of an endpoint that is
// gone, and deletes the orphan messages: messages
// of an endpoint deleted while the statement that wrote them ran
// (DeleteWebhookEndpoint), whatever their age — an endpoint commits before
// any message joins it, so one missing now is gone for good —, at most
// orphanBatch of them each time, found along the claim's index of
// unfinished messages, where they would otherwise stay.
func (s *Store) PruneWebhookMessages(ctx context.Context, cutoff time.Time) (int, error) {
	var n int
	err := s.pool.QueryRow(ctx, s.q(`WITH f AS (
	DELETE FROM {s}.webhook_messages WHERE state IN ('sent', 'dead') AND finished_at < $1 RETURNING 1
), o AS (
	DELETE FROM {s}.webhook_messages WHERE seq IN (
		SELECT m.seq FROM {s}.webhook_messages m WHERE m.state IN ('pending', 'leased')
			AND NOT EXISTS (SELECT 1 FROM {s}.webhook_endpoints e WHERE e.id = m.endpoint_id)
		ORDER BY m.run_at, m.seq LIMIT $2)
	RETURNING 1
), l AS (
	DELETE FROM {s}.webhook_events e USING {s}.webhook_endpoints w
	WHERE e.endpoint_id = w.id AND (e.txid, e.seq) <= (w.cursor_txid, w.cursor_seq) AND e.occurred_at < $1
	RETURNING 1
), ids AS (
	-- The log's endpoints, one index probe each (a loose index scan).
	WITH RECURSIVE r AS (
		(SELECT endpoint_id FROM {s}.webhook_events ORDER BY endpoint_id LIMIT 1)
		UNION ALL
		SELECT (SELECT e.endpoint_id FROM {s}.webhook_events e WHERE e.endpoint_id > r.endpoint_id ORDER BY e.endpoint_id LIMIT 1)
		FROM r WHERE r.endpoint_id IS NOT NULL
	)
	SELECT endpoint_id FROM r WHERE endpoint_id IS NOT NULL
), lo AS (
	DELETE FROM {s}.webhook_events e WHERE e.endpoint_id IN (SELECT i.endpoint_id FROM ids i
		WHERE NOT EXISTS (SELECT 1 FROM {s}.webhook_endpoints w WHERE w.id = i.endpoint_id))
	RETURNING 1
)
SELECT (SELECT count(*) FROM f) + (SELECT count(*) FROM o) + (SELECT count(*) FROM l) + (SELECT count(*) FROM lo)`),
		cutoff, orphanBatch).Scan(&n)
	return n, formatError(err, "webhook messages")
}

// orphanBatch bounds the orphans one PruneWebhookMessages deletes.
const orphanBatch = 1000

// FinishWebhooksSent implements store.WebhookEndpoints in one statement:
// the guarded UPDATE of the messages over unnest(…), and the endpoints of
// those it applied that were failing cleared — a healthy endpoint is not
// written (webhookEndpointChanges).
func (s *Store) FinishWebhooksSent(ctx context.Context, fs []store.WebhookFinish) (int, error) {
	if err := store.CheckWebhooksSent(fs); err != nil {
		return 0, err
	}
	if len(fs) == 0 {
		return 0, nil
	}
	seqs, attempts, statuses := make([]int64, len(fs)), make([]int32, len(fs)), make([]int32, len(fs))
	owners, ats := make([]string, len(fs)), make([]time.Time, len(fs))
	for i, f := range fs {
		seqs[i], owners[i], attempts[i], statuses[i], ats[i] = f.Seq, f.Owner, int32(f.Attempt), int32(f.Status), f.At
	}
	var applied int
	err := s.pool.QueryRow(ctx, s.q(`WITH f AS (
	SELECT * FROM unnest($1::bigint[], $2::text[], $3::int[], $4::int[], $5::timestamptz[]) AS f (seq, owner, attempt, status, at)
), m AS (
	UPDATE {s}.webhook_messages w SET state = 'sent', lease_owner = '', lease_until = NULL, last_status = f.status,
		last_error = '', finished_at = f.at
	FROM f WHERE w.seq = f.seq AND w.state = 'leased' AND w.lease_owner = f.owner AND w.attempt = f.attempt
	RETURNING w.endpoint_id, f.at
), e AS (
	UPDATE {s}.webhook_endpoints w SET failing_since = NULL, updated_at = x.at
	FROM (SELECT endpoint_id, max(at) AS at FROM m GROUP BY endpoint_id) x
	WHERE w.id = x.endpoint_id AND w.failing_since IS NOT NULL
)
SELECT count(*) FROM m`), seqs, owners, attempts, statuses, ats).Scan(&applied)
	if err != nil {
		return 0, formatError(err, "webhook messages")
	}
	return applied, nil
}

// CountWebhookMessagesPending implements store.WebhookEndpoints: a count
// stopped at max over the due index (webhook_messages_due), whose rows
// are exactly the pending and leased messages.
func (s *Store) CountWebhookMessagesPending(ctx context.Context, max int) (int, error) {
	if max < 1 {
		return 0, heraldtype.FieldErrorf("max", "must be positive")
	}
	var n int
	err := s.pool.QueryRow(ctx, s.q(`SELECT count(*) FROM (
	(SELECT 1 FROM {s}.webhook_messages WHERE state IN ('pending', 'leased') ORDER BY run_at, seq LIMIT $1)
	UNION ALL
	(SELECT 1 FROM {s}.webhook_endpoints w JOIN LATERAL (SELECT 1 FROM {s}.webhook_events e
		WHERE e.endpoint_id = w.id AND (e.txid, e.seq) > (w.cursor_txid, w.cursor_seq) LIMIT $1) e ON true
	LIMIT $1)
) c`), max).Scan(&n)
	n = min(n, max)
	if err != nil {
		return 0, formatError(err, "webhook messages")
	}
	return n, nil
}
