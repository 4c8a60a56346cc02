package postgres

import (
	"context"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/heraldhq/herald/heraldtype"
	"github.com/heraldhq/herald/store"
)

// The event log's stream (store/webhookstream.go; migration 0038). A txid
// travels as text: pgx has no xid8 type, and a uint64 prints and parses
// exactly.

// visible is the condition that event e's transaction ended before every
// running one began: nothing can later commit behind it.
const visible = `e.txid < pg_snapshot_xmin(pg_current_snapshot())`

// streamClaimSQL leases the least recently streamed enabled endpoint with
// a visible event past its cursor ($1 now, $2 owner, $3 lease end, $4 the
// endpoints to skip). The cursor is compared as (txid, seq) after the
// equality on endpoint_id, so that the index scan starts at the cursor:
// written as one row comparison over all three columns, PostgreSQL kept
// the equality as the scan's start and the row comparison as a filter,
// and walked every event of the endpoint still in the log (its retention)
// on each call — 4.5 ms for 50 events behind 60,000, growing with the log
// (TestStreamReadStartsAtTheCursor).
const streamClaimSQL = `WITH c AS (
	SELECT w.id FROM {s}.webhook_endpoints w
	WHERE w.enabled AND w.id <> ALL ($4::text[])
		AND (w.stream_owner = '' OR w.stream_until <= $1)
		AND EXISTS (SELECT 1 FROM {s}.webhook_events e WHERE e.endpoint_id = w.id
			AND (e.txid, e.seq) > (w.cursor_txid, w.cursor_seq) AND ` + visible + `)
	ORDER BY w.stream_until NULLS FIRST, w.id LIMIT 1
	FOR UPDATE SKIP LOCKED
)
UPDATE {s}.webhook_endpoints w SET stream_owner = $2, stream_until = $3
FROM c WHERE w.id = c.id
RETURNING w.id, w.url, w.secret, CASE WHEN w.previous_until > $1 THEN w.previous_secret ELSE '' END,
	w.failing_since, w.cursor_txid::text, w.cursor_seq`

// streamReadSQL reads endpoint $1's visible events past the cursor ($2
// txid as text, $3 seq), $4 at most, in log order, from the cursor's
// place in webhook_events_stream (streamClaimSQL says why the comparison
// is on (txid, seq)).
const streamReadSQL = `SELECT e.seq, e.txid::text, e.event_id, e.type, e.ordering_key, e.payload, e.occurred_at
FROM {s}.webhook_events e
WHERE e.endpoint_id = $1 AND (e.txid, e.seq) > ($2::text::xid8, $3) AND ` + visible + `
ORDER BY e.txid, e.seq LIMIT $4`

// ClaimWebhookStream implements store.WebhookStreams: the endpoint's
// lease in one statement (FOR UPDATE SKIP LOCKED over the endpoints, the
// least recently streamed first), then its events past the cursor along
// webhook_events_stream, and the held keys along the retry table's order
// index.
func (s *Store) ClaimWebhookStream(ctx context.Context, p store.WebhookStreamClaim) (*store.WebhookStream, error) {
	if err := store.CheckWebhookStreamClaim(p); err != nil {
		return nil, err
	}
	skip := p.Skip
	if skip == nil {
		skip = []string{}
	}
	var (
		st           store.WebhookStream
		secret, prev string
		cursorTxid   string
		cursorSeq    int64
		failing      *time.Time
	)
	// The claim and the read run under indexPlans: the log grows from
	// empty between ANALYZEs, and on stale statistics PostgreSQL read every
	// event past the cursor by a bitmap scan and sorted them for a page of
	// 50 (26 ms for 20,000 events; pg_stat_statements put the read at
	// 3.4 ms a call and the claim at 1.2 ms in herald bench --webhooks),
	// where the index's order stops at the page.
	found := false
	err := s.indexedQuery(ctx, "webhook stream", streamClaimSQL, func(rows pgx.Rows) error {
		if !rows.Next() {
			return rows.Err()
		}
		found = true
		return rows.Scan(&st.EndpointID, &st.URL, &secret, &prev, &failing, &cursorTxid, &cursorSeq)
	}, p.Now, p.Owner, p.LeaseUntil, skip)
	if err != nil || !found {
		return nil, err
	}
	st.FailingSince = utcPtr(failing)
	st.Secrets = []string{secret}
	if prev != "" {
		st.Secrets = append(st.Secrets, prev)
	}
	err = s.indexedQuery(ctx, "webhook events", streamReadSQL, func(rows pgx.Rows) (err error) {
		st.Events, err = pgx.CollectRows(rows, readLogEvent(st.EndpointID))
		return err
	}, st.EndpointID, cursorTxid, cursorSeq, p.Limit)
	if err != nil {
		return nil, err
	}
	keys := make([]string, 0, len(st.Events))
	for _, e := range st.Events {
		keys = append(keys, e.OrderingKey)
	}
	rows, err := s.pool.Query(ctx, s.q(`SELECT DISTINCT ordering_key FROM {s}.webhook_messages
WHERE endpoint_id = $1 AND ordering_key = ANY ($2::text[]) AND state IN ('pending', 'leased')`), st.EndpointID, keys)
	if err != nil {
		return nil, formatError(err, "webhook messages")
	}
	held, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return nil, formatError(err, "webhook messages")
	}
	st.Held = make(map[string]bool, len(held))
	for _, k := range held {
		st.Held[k] = true
	}
	return &st, nil
}

// AdvanceWebhookStream implements store.WebhookStreams in one statement:
// the endpoint's row, guarded by the lease, and the moves, written only
// when the guard held.
func (s *Store) AdvanceWebhookStream(ctx context.Context, a store.WebhookStreamAdvance) (bool, bool, error) {
	if err := store.CheckWebhookStreamAdvance(a); err != nil {
		return false, false, err
	}
	k := len(a.Moves)
	seqs, attempts, statuses := make([]int64, k), make([]int32, k), make([]int32, k)
	txids, ids, types, keys, payloads, states, errs := make([]string, k), make([]string, k), make([]string, k),
		make([]string, k), make([]string, k), make([]string, k), make([]string, k)
	runAts, occurred, firsts := make([]time.Time, k), make([]time.Time, k), make([]time.Time, k)
	finished := make([]*time.Time, k)
	for i, m := range a.Moves {
		e := m.Event
		seqs[i], txids[i], ids[i], types[i], keys[i], payloads[i] = e.Seq, strconv.FormatUint(e.Txid, 10), e.EventID, e.Type,
			e.OrderingKey, string(e.Data)
		states[i], attempts[i], statuses[i], errs[i] = string(m.State), int32(m.Attempt), int32(m.LastStatus), m.LastError
		runAts[i], occurred[i], firsts[i] = m.RunAt, e.OccurredAt, m.FirstAt
		if m.State == heraldtype.WebhookDead {
			runAts[i], finished[i] = a.At, &a.At
		}
	}
	var applied, disabled int
	err := s.pool.QueryRow(ctx, s.q(`WITH w AS (
	UPDATE {s}.webhook_endpoints w SET
		stream_owner = '', stream_until = $3,
		cursor_txid = $4::text::xid8, cursor_seq = $5,
		failing_since = CASE WHEN $6 THEN NULL WHEN $7 THEN coalesce(w.failing_since, $3) ELSE w.failing_since END,
		enabled = w.enabled AND NOT (`+streamDisable+`),
		disabled_reason = CASE WHEN w.enabled AND `+streamDisable+` THEN
			CASE WHEN $8 <> '' THEN $8 ELSE $10 END ELSE w.disabled_reason END,
		updated_at = CASE WHEN ($6 AND w.failing_since IS NOT NULL) OR ($7 AND NOT $6 AND w.failing_since IS NULL)
			OR (w.enabled AND `+streamDisable+`) THEN $3 ELSE w.updated_at END
	WHERE w.id = $1 AND w.stream_owner = $2
	RETURNING `+streamDisable+` AS off
), m AS (
	INSERT INTO {s}.webhook_messages (seq, txid, endpoint_id, event_id, type, ordering_key, payload, state, attempt,
		run_at, occurred_at, first_at, last_status, last_error, finished_at) OVERRIDING SYSTEM VALUE
	SELECT v.seq, v.txid::xid8, $1, v.event_id, v.type, v.ordering_key, v.payload, v.state, v.attempt,
		v.run_at, v.occurred_at, v.first_at, v.status, v.error, v.finished
	FROM unnest($11::bigint[], $12::text[], $13::text[], $14::text[], $15::text[], $16::text[], $17::text[], $18::int[],
		$19::timestamptz[], $20::timestamptz[], $21::timestamptz[], $22::int[], $23::text[], $24::timestamptz[])
		AS v (seq, txid, event_id, type, ordering_key, payload, state, attempt, run_at, occurred_at, first_at, status, error, finished)
	WHERE EXISTS (SELECT 1 FROM w)
	ON CONFLICT (seq) DO NOTHING
)
SELECT (SELECT count(*) FROM w), (SELECT count(*) FROM w WHERE off)`),
		a.EndpointID, a.Owner, a.At, strconv.FormatUint(a.Through.Txid, 10), a.Through.Seq, a.Sent, a.Failed,
		a.Disable, nullTime(a.DisableFailingSince), a.FailingReason,
		seqs, txids, ids, types, keys, payloads, states, attempts, runAts, occurred, firsts, statuses, errs, finished).
		Scan(&applied, &disabled)
	if err != nil {
		return false, false, formatError(err, "webhook stream")
	}
	return applied == 1, disabled == 1, nil
}

// streamDisable is AdvanceWebhookStream's condition for disabling the
// endpoint w: an answer that asks for it ($8, 410 Gone), or a batch with
// a failure and no success while the endpoint has been failing since $9
// or earlier (a NULL $9, no disable_after, never disables).
const streamDisable = `coalesce($8 <> '' OR ($7 AND NOT $6 AND coalesce(w.failing_since, $3) <= $9), false)`

// CountWebhookBacklog implements store.WebhookStreams along
// webhook_events_stream.
func (s *Store) CountWebhookBacklog(ctx context.Context, endpointID string, max int) (int, error) {
	if max < 1 {
		return 0, heraldtype.FieldErrorf("max", "must be positive")
	}
	var n int
	err := s.pool.QueryRow(ctx, s.q(`SELECT count(*) FROM (SELECT 1 FROM {s}.webhook_endpoints w
	JOIN {s}.webhook_events e ON e.endpoint_id = w.id AND (e.txid, e.seq) > (w.cursor_txid, w.cursor_seq)
	WHERE w.id = $1 LIMIT $2) c`), endpointID, max).Scan(&n)
	return n, formatError(err, "webhook events")
}

// WaitWebhookEventsVisible waits until every webhook event committed
// before the call can be streamed — until no transaction that began
// before it is still open anywhere on the server — or ctx ends. The
// dispatcher does not need it (it streams what is visible and comes back);
// tests and tools that must see their own events at once do.
func (s *Store) WaitWebhookEventsVisible(ctx context.Context) error {
	var horizon string
	if err := s.pool.QueryRow(ctx, `SELECT pg_snapshot_xmax(pg_current_snapshot())::text`).Scan(&horizon); err != nil {
		return formatError(err, "webhook events")
	}
	for {
		var ok bool
		if err := s.pool.QueryRow(ctx, `SELECT pg_snapshot_xmin(pg_current_snapshot()) >= $1::text::xid8`, horizon).Scan(&ok); err != nil {
			return formatError(err, "webhook events")
		}
		if ok {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(5 * time.Millisecond):
		}
	}
}

// readLogEvent reads one event of ClaimWebhookStream's page of the
// endpoint's log.
func readLogEvent(endpointID string) pgx.RowToFunc[store.WebhookLogEvent] {
	return func(r pgx.CollectableRow) (store.WebhookLogEvent, error) {
		var (
			e             store.WebhookLogEvent
			txid, payload string
		)
		err := r.Scan(&e.Seq, &txid, &e.EventID, &e.Type, &e.OrderingKey, &payload, &e.OccurredAt)
		if err != nil {
			return e, err
		}
		e.Txid, err = strconv.ParseUint(txid, 10, 64)
		e.EndpointID, e.Data, e.State = endpointID, []byte(payload), heraldtype.WebhookPending
		e.OccurredAt = e.OccurredAt.UTC()
		e.RunAt, e.FirstAt = e.OccurredAt, e.OccurredAt
		return e, err
	}
}
