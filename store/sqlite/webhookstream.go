package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"

	"github.com/heraldhq/herald/heraldtype"
	"github.com/heraldhq/herald/store"
)

// The event log's stream (store/webhookstream.go; migration 0030). The
// single writer commits in seq order, so the cursor is a seq and every
// event past it is final.

// ClaimWebhookStream implements store.WebhookStreams in one write
// transaction, after a read that finds nothing to do without taking the
// writer (every instance asks every poll interval).
func (s *Store) ClaimWebhookStream(ctx context.Context, p store.WebhookStreamClaim) (*store.WebhookStream, error) {
	if err := store.CheckWebhookStreamClaim(p); err != nil {
		return nil, err
	}
	skipList := p.Skip
	if skipList == nil {
		skipList = []string{}
	}
	skip, err := json.Marshal(skipList)
	if err != nil {
		return nil, err
	}
	const candidates = `FROM webhook_endpoints w
WHERE w.enabled AND w.id NOT IN (SELECT value FROM json_each(?2))
	AND (w.stream_owner = '' OR w.stream_until <= ?1)
	AND EXISTS (SELECT 1 FROM webhook_events e WHERE e.endpoint_id = w.id AND e.seq > w.cursor_seq)`
	var any bool
	if err := s.read.QueryRowContext(ctx, `SELECT EXISTS (SELECT 1 `+candidates+`)`, micros(p.Now), string(skip)).Scan(&any); err != nil || !any {
		return nil, formatError(err, "webhook stream")
	}
	var st *store.WebhookStream
	err = s.inTx(ctx, func(tx *writeTx) error {
		st = nil
		var (
			c            store.WebhookStream
			secret, prev string
			failing      sql.NullInt64
			cursor       int64
		)
		err := tx.QueryRowContext(ctx, `UPDATE webhook_endpoints SET stream_owner = ?3, stream_until = ?4
WHERE id = (SELECT w.id `+candidates+` ORDER BY w.stream_until NULLS FIRST, w.id LIMIT 1)
RETURNING id, url, secret, CASE WHEN previous_until > ?1 THEN previous_secret ELSE '' END, failing_since,
	cursor_seq`, micros(p.Now), string(skip), p.Owner, micros(p.LeaseUntil)).
			Scan(&c.EndpointID, &c.URL, &secret, &prev, &failing, &cursor)
		if err == sql.ErrNoRows {
			return nil
		}
		if err != nil {
			return formatError(err, "webhook stream")
		}
		c.FailingSince, c.Secrets = fromNullMicros(failing), []string{secret}
		if prev != "" {
			c.Secrets = append(c.Secrets, prev)
		}
		rows, err := tx.QueryContext(ctx, `SELECT seq, event_id, type, ordering_key, payload, occurred_at FROM webhook_events
WHERE endpoint_id = ?1 AND seq > ?2 ORDER BY seq LIMIT ?3`, c.EndpointID, cursor, p.Limit)
		if err != nil {
			return formatError(err, "webhook events")
		}
		defer rows.Close()
		var keys []string
		for rows.Next() {
			var (
				e        store.WebhookLogEvent
				payload  string
				occurred int64
			)
			if err := rows.Scan(&e.Seq, &e.EventID, &e.Type, &e.OrderingKey, &payload, &occurred); err != nil {
				return formatError(err, "webhook events")
			}
			e.EndpointID, e.Data, e.State = c.EndpointID, []byte(payload), heraldtype.WebhookPending
			e.OccurredAt = fromMicros(occurred)
			e.RunAt, e.FirstAt = e.OccurredAt, e.OccurredAt
			c.Events = append(c.Events, e)
			keys = append(keys, e.OrderingKey)
		}
		if err := rows.Err(); err != nil {
			return formatError(err, "webhook events")
		}
		c.Held, err = s.heldKeys(ctx, tx, c.EndpointID, keys)
		st = &c
		return err
	})
	return st, err
}

// heldKeys returns those of keys with an unfinished message of the
// endpoint in the retry table (webhook_messages_order).
func (s *Store) heldKeys(ctx context.Context, tx *writeTx, endpoint string, keys []string) (map[string]bool, error) {
	list, err := json.Marshal(keys)
	if err != nil {
		return nil, err
	}
	rows, err := tx.QueryContext(ctx, `SELECT DISTINCT ordering_key FROM webhook_messages
WHERE endpoint_id = ?1 AND ordering_key IN (SELECT value FROM json_each(?2)) AND state IN ('pending', 'leased')`, endpoint, string(list))
	if err != nil {
		return nil, formatError(err, "webhook messages")
	}
	defer rows.Close()
	held := map[string]bool{}
	for rows.Next() {
		var k string
		if err := rows.Scan(&k); err != nil {
			return nil, formatError(err, "webhook messages")
		}
		held[k] = true
	}
	return held, formatError(rows.Err(), "webhook messages")
}

// AdvanceWebhookStream implements store.WebhookStreams in one write
// transaction: the endpoint's row guarded by the lease, then the moves.
func (s *Store) AdvanceWebhookStream(ctx context.Context, a store.WebhookStreamAdvance) (bool, bool, error) {
	if err := store.CheckWebhookStreamAdvance(a); err != nil {
		return false, false, err
	}
	var applied, disabled bool
	err := s.inTx(ctx, func(tx *writeTx) error {
		applied, disabled = false, false
		var disableSince sql.NullInt64
		if !a.DisableFailingSince.IsZero() {
			disableSince = sql.NullInt64{Int64: micros(a.DisableFailingSince), Valid: true}
		}
		const off = `coalesce(?7 <> '' OR (?6 AND NOT ?5 AND coalesce(failing_since, ?3) <= ?8), 0)`
		var was bool
		err := tx.QueryRowContext(ctx, `SELECT enabled FROM webhook_endpoints WHERE id = ?1 AND stream_owner = ?2`,
			a.EndpointID, a.Owner).Scan(&was)
		if err == sql.ErrNoRows {
			return nil // the lease was lost: another instance streams it now
		}
		if err != nil {
			return formatError(err, "webhook stream")
		}
		var now bool
		err = tx.QueryRowContext(ctx, `UPDATE webhook_endpoints SET
	stream_owner = '', stream_until = ?3,
	cursor_seq = ?4,
	failing_since = CASE WHEN ?5 THEN NULL WHEN ?6 THEN coalesce(failing_since, ?3) ELSE failing_since END,
	enabled = enabled AND NOT `+off+`,
	disabled_reason = CASE WHEN enabled AND `+off+` THEN CASE WHEN ?7 <> '' THEN ?7 ELSE ?9 END ELSE disabled_reason END,
	updated_at = CASE WHEN (?5 AND failing_since IS NOT NULL) OR (?6 AND NOT ?5 AND failing_since IS NULL)
		OR (enabled AND `+off+`) THEN ?3 ELSE updated_at END
WHERE id = ?1 AND stream_owner = ?2
RETURNING enabled`,
			a.EndpointID, a.Owner, micros(a.At), a.Through.Seq, a.Sent, a.Failed, a.Disable, disableSince,
			a.FailingReason).Scan(&now)
		if err != nil {
			return formatError(err, "webhook stream")
		}
		applied, disabled = true, was && !now
		for _, m := range a.Moves {
			e := m.Event
			runAt, finished := micros(m.RunAt), sql.NullInt64{}
			if m.State == heraldtype.WebhookDead {
				runAt, finished = micros(a.At), sql.NullInt64{Int64: micros(a.At), Valid: true}
			}
			if _, err := s.exec(ctx, tx, `INSERT INTO webhook_messages (seq, endpoint_id, event_id, type, ordering_key, payload,
	state, attempt, run_at, occurred_at, first_at, last_status, last_error, finished_at)
VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14) ON CONFLICT (seq) DO NOTHING`,
				e.Seq, a.EndpointID, e.EventID, e.Type, e.OrderingKey, string(e.Data), string(m.State), m.Attempt, runAt,
				micros(e.OccurredAt), micros(m.FirstAt), m.LastStatus, m.LastError, finished); err != nil {
				return formatError(err, "webhook messages")
			}
		}
		return nil
	})
	return applied, disabled, err
}

// CountWebhookBacklog implements store.WebhookStreams along
// webhook_events_stream.
func (s *Store) CountWebhookBacklog(ctx context.Context, endpointID string, max int) (int, error) {
	if max < 1 {
		return 0, heraldtype.FieldErrorf("max", "must be positive")
	}
	var n int
	err := s.read.QueryRowContext(ctx, `SELECT count(*) FROM (SELECT 1 FROM webhook_endpoints w
	JOIN webhook_events e ON e.endpoint_id = w.id AND e.seq > w.cursor_seq WHERE w.id = ?1 LIMIT ?2)`, endpointID, max).Scan(&n)
	return n, formatError(err, "webhook events")
}
