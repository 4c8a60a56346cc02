package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"strings"
	"time"

	"github.com/heraldhq/herald/heraldtype"
	"github.com/heraldhq/herald/store"
	"github.com/heraldhq/herald/store/rules"
)

// The outbound webhook endpoints and messages (issue 35 item 4;
// store/webhooks.go).

const webhookEndpointColumns = `id, url, description, events, enabled, disabled_reason, failing_since, secret,
	previous_secret, previous_until, created_at, updated_at`

func scanWebhookEndpoint(row interface{ Scan(...any) error }) (store.WebhookEndpoint, error) {
	var (
		e                store.WebhookEndpoint
		events           string
		failing, prev    sql.NullInt64
		created, updated int64
	)
	err := row.Scan(&e.ID, &e.URL, &e.Description, &events, &e.Enabled, &e.DisabledReason, &failing,
		&e.Secret, &e.PreviousSecret, &prev, &created, &updated)
	if err != nil {
		return store.WebhookEndpoint{}, err
	}
	e.Events = strings.Fields(events)
	e.FailingSince, e.PreviousSecretUntil = fromNullMicros(failing), fromNullMicros(prev)
	e.CreatedAt, e.UpdatedAt = fromMicros(created), fromMicros(updated)
	return e, nil
}

func nullTimePtr(t *time.Time) sql.NullInt64 {
	if t == nil {
		return sql.NullInt64{}
	}
	return nullMicros(*t)
}

// CreateWebhookEndpoint implements store.WebhookEndpoints.
func (s *Store) CreateWebhookEndpoint(ctx context.Context, e store.WebhookEndpoint) error {
	return s.inTx(ctx, func(tx *writeTx) error {
		_, err := s.exec(ctx, tx, `INSERT INTO webhook_endpoints (`+webhookEndpointColumns+`)
VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
			e.ID, e.URL, e.Description, strings.Join(e.Events, " "), e.Enabled, e.DisabledReason, nullTimePtr(e.FailingSince),
			e.Secret, e.PreviousSecret, nullTimePtr(e.PreviousSecretUntil), micros(e.CreatedAt), micros(e.UpdatedAt))
		return formatError(err, "webhook endpoint "+quote(e.ID))
	})
}

// GetWebhookEndpoint implements store.WebhookEndpoints.
func (s *Store) GetWebhookEndpoint(ctx context.Context, id string) (store.WebhookEndpoint, error) {
	e, err := scanWebhookEndpoint(s.read.QueryRowContext(ctx, `SELECT `+webhookEndpointColumns+`
FROM webhook_endpoints WHERE id = ?`, id))
	return e, formatError(err, "webhook endpoint "+quote(id))
}

// ListWebhookEndpoints implements store.WebhookEndpoints.
func (s *Store) ListWebhookEndpoints(ctx context.Context) ([]store.WebhookEndpoint, error) {
	rows, err := s.read.QueryContext(ctx, `SELECT `+webhookEndpointColumns+` FROM webhook_endpoints ORDER BY created_at, id`)
	if err != nil {
		return nil, formatError(err, "webhook endpoints")
	}
	defer rows.Close()
	es := []store.WebhookEndpoint{}
	for rows.Next() {
		e, err := scanWebhookEndpoint(rows)
		if err != nil {
			return nil, formatError(err, "webhook endpoints")
		}
		es = append(es, e)
	}
	return es, formatError(rows.Err(), "webhook endpoints")
}

// UpdateWebhookEndpoint implements store.WebhookEndpoints. Enabling
// clears the disabled reason and failing_since; disabling keeps them.
func (s *Store) UpdateWebhookEndpoint(ctx context.Context, id string, u store.WebhookEndpointUpdate, now time.Time) (store.WebhookEndpoint, error) {
	var url, desc, events sql.NullString
	var enabled sql.NullBool
	if u.URL != nil {
		url = sql.NullString{String: *u.URL, Valid: true}
	}
	if u.Description != nil {
		desc = sql.NullString{String: *u.Description, Valid: true}
	}
	if u.Events != nil {
		events = sql.NullString{String: strings.Join(*u.Events, " "), Valid: true}
	}
	if u.Enabled != nil {
		enabled = sql.NullBool{Bool: *u.Enabled, Valid: true}
	}
	var e store.WebhookEndpoint
	err := s.inTx(ctx, func(tx *writeTx) error {
		var err error
		e, err = scanWebhookEndpoint(tx.QueryRowContext(ctx, `UPDATE webhook_endpoints SET
	url = coalesce(?2, url), description = coalesce(?3, description), events = coalesce(?4, events),
	enabled = coalesce(?5, enabled),
	disabled_reason = CASE WHEN ?5 THEN '' ELSE disabled_reason END,
	failing_since = CASE WHEN ?5 THEN NULL ELSE failing_since END,
	updated_at = ?6
WHERE id = ?1 RETURNING `+webhookEndpointColumns, id, url, desc, events, enabled, micros(now)))
		return formatError(err, "webhook endpoint "+quote(id))
	})
	return e, err
}

// DeleteWebhookEndpoint implements store.WebhookEndpoints: its messages
// go with it (ON DELETE CASCADE).
func (s *Store) DeleteWebhookEndpoint(ctx context.Context, id string) error {
	return s.inTx(ctx, func(tx *writeTx) error {
		res, err := s.exec(ctx, tx, `DELETE FROM webhook_endpoints WHERE id = ?`, id)
		if err := affectedOne(res, err, "webhook endpoint "+quote(id)); err != nil {
			return err
		}
		// Its messages go by the foreign key; its events here.
		_, err = s.exec(ctx, tx, `DELETE FROM webhook_events WHERE endpoint_id = ?`, id)
		return formatError(err, "webhook events")
	})
}

// RotateWebhookSecret implements store.WebhookEndpoints.
func (s *Store) RotateWebhookSecret(ctx context.Context, id, secret string, previousUntil, now time.Time) (store.WebhookEndpoint, error) {
	var e store.WebhookEndpoint
	err := s.inTx(ctx, func(tx *writeTx) error {
		var err error
		e, err = scanWebhookEndpoint(tx.QueryRowContext(ctx, `UPDATE webhook_endpoints SET
	previous_secret = secret, previous_until = ?3, secret = ?2, updated_at = ?4
WHERE id = ?1 RETURNING `+webhookEndpointColumns, id, secret, micros(previousUntil), micros(now)))
		return formatError(err, "webhook endpoint "+quote(id))
	})
	return e, err
}

// AddWebhookEvents implements store.WebhookEndpoints: one INSERT … SELECT
// per event, in one transaction.
func (s *Store) AddWebhookEvents(ctx context.Context, events []store.WebhookEvent) (int, error) {
	if err := store.CheckWebhookEvents(events); err != nil {
		return 0, err
	}
	n := 0
	err := s.inTx(ctx, func(tx *writeTx) error {
		n = 0
		for _, e := range events {
			at := micros(e.At)
			res, err := s.exec(ctx, tx, `INSERT INTO webhook_events (`+rules.WebhookEventColumns+`)
SELECT w.id, ?1, ?2, ?3, ?4, ?5 FROM webhook_endpoints w
WHERE CASE WHEN ?6 <> '' THEN w.id = ?6 ELSE `+rules.WebhookSubscribed("w", "?2")+` END
ORDER BY w.id`, e.EventID, e.Type, e.OrderingKey, string(e.Data), at, e.EndpointID)
			k, err := affected(res, err, "webhook events")
			if err != nil {
				return err
			}
			n += k
		}
		return nil
	})
	return n, err
}

// webhookMessageColumns are read by scanWebhookMessage.
const webhookMessageColumns = `seq, endpoint_id, event_id, type, ordering_key, payload, state, attempt,
	run_at, occurred_at, first_at, last_status, last_error, finished_at`

func scanWebhookMessage(row interface{ Scan(...any) error }, extra ...any) (heraldtype.WebhookMessage, error) {
	var (
		m                      heraldtype.WebhookMessage
		payload                string
		runAt, occurred, first int64
		finished               sql.NullInt64
	)
	err := row.Scan(append([]any{&m.Seq, &m.EndpointID, &m.EventID, &m.Type, &m.OrderingKey, &payload, &m.State,
		&m.Attempt, &runAt, &occurred, &first, &m.LastStatus, &m.LastError, &finished}, extra...)...)
	if err != nil {
		return heraldtype.WebhookMessage{}, err
	}
	m.Data = []byte(payload)
	m.RunAt, m.OccurredAt, m.FirstAt, m.FinishedAt = fromMicros(runAt), fromMicros(occurred), fromMicros(first), fromNullMicros(finished)
	return m, nil
}

// ClaimWebhookMessages implements store.WebhookEndpoints. SQLite has one
// writer, so the transaction alone keeps two claims apart; the rest is
// PostgreSQL's claim: due messages of enabled endpoints, none behind an
// earlier unfinished one of its endpoint and ordering key, the lease's end
// as run_at.
func (s *Store) ClaimWebhookMessages(ctx context.Context, p store.WebhookClaim) ([]store.WebhookJob, error) {
	if err := store.CheckWebhookClaim(p); err != nil {
		return nil, err
	}
	// Every instance's dispatcher claims every poll interval: a read on
	// the read pool first, so an idle one never takes the single write
	// connection for nothing.
	var due bool
	if err := s.read.QueryRowContext(ctx, `SELECT EXISTS (SELECT 1 FROM webhook_messages
WHERE state IN ('pending', 'leased') AND run_at <= ?)`, micros(p.Now)).Scan(&due); err != nil || !due {
		return nil, formatError(err, "webhook messages")
	}
	// The endpoints to leave out, as a JSON array json_each reads.
	skipList := p.Skip
	if skipList == nil {
		skipList = []string{}
	}
	skip, err := json.Marshal(skipList)
	if err != nil {
		return nil, err
	}
	var jobs []store.WebhookJob
	err = s.inTx(ctx, func(tx *writeTx) error {
		jobs = nil
		rows, err := s.query(ctx, tx, `UPDATE webhook_messages SET state = 'leased', lease_owner = ?2, lease_until = ?3,
	run_at = ?3, attempt = attempt + 1
WHERE seq IN (SELECT seq FROM (
	SELECT seq, row_number() OVER (PARTITION BY endpoint_id ORDER BY run_at, seq) AS n FROM (
		SELECT m.seq, m.endpoint_id, m.run_at FROM webhook_messages m JOIN webhook_endpoints e ON e.id = m.endpoint_id AND e.enabled
		WHERE m.state IN ('pending', 'leased') AND m.run_at <= ?1
			AND m.endpoint_id NOT IN (SELECT value FROM json_each(?5))
			AND NOT EXISTS (SELECT 1 FROM webhook_messages p WHERE p.endpoint_id = m.endpoint_id
				AND p.ordering_key = m.ordering_key AND p.seq < m.seq AND p.state IN ('pending', 'leased'))
		ORDER BY m.run_at, m.seq LIMIT ?4))
	WHERE ?6 = 0 OR n <= ?6)
RETURNING `+webhookMessageColumns+`,
	(SELECT url FROM webhook_endpoints e WHERE e.id = endpoint_id),
	(SELECT secret FROM webhook_endpoints e WHERE e.id = endpoint_id),
	(SELECT CASE WHEN previous_until > ?1 THEN previous_secret ELSE '' END FROM webhook_endpoints e WHERE e.id = endpoint_id),
	(SELECT failing_since FROM webhook_endpoints e WHERE e.id = endpoint_id)`,
			micros(p.Now), p.Owner, micros(p.LeaseUntil), p.Limit, string(skip), p.PerEndpoint)
		if err != nil {
			return formatError(err, "webhook messages")
		}
		defer rows.Close()
		for rows.Next() {
			var (
				j                store.WebhookJob
				secret, previous string
				failing          sql.NullInt64
			)
			m, err := scanWebhookMessage(rows, &j.URL, &secret, &previous, &failing)
			if err != nil {
				return formatError(err, "webhook messages")
			}
			j.WebhookMessage, j.FailingSince, j.Secrets = m, fromNullMicros(failing), []string{secret}
			if previous != "" {
				j.Secrets = append(j.Secrets, previous)
			}
			jobs = append(jobs, j)
		}
		return formatError(rows.Err(), "webhook messages")
	})
	if err != nil {
		return nil, err
	}
	store.SortWebhookJobs(jobs)
	return jobs, nil
}

// FinishWebhookMessage implements store.WebhookEndpoints: the endpoint's
// update first (guarded by the message's lease, which the message's own
// update then ends), in one transaction.
func (s *Store) FinishWebhookMessage(ctx context.Context, f store.WebhookFinish) (bool, bool, error) {
	if err := store.CheckWebhookFinish(f); err != nil {
		return false, false, err
	}
	var runAt, finished sql.NullInt64
	if f.State == heraldtype.WebhookPending {
		runAt = nullMicros(f.RunAt)
	} else {
		finished = nullMicros(f.At)
	}
	var applied, disabled bool
	err := s.inTx(ctx, func(tx *writeTx) error {
		applied, disabled = false, false
		const guard = `seq = ?1 AND state = 'leased' AND lease_owner = ?2 AND attempt = ?3`
		var endpoint string
		err := tx.QueryRowContext(ctx, `SELECT endpoint_id FROM webhook_messages WHERE `+guard, f.Seq, f.Owner, f.Attempt).Scan(&endpoint)
		if err == sql.ErrNoRows {
			return nil
		}
		if err != nil {
			return formatError(err, "webhook message")
		}
		// ?6 is the disable condition (410 Gone, or failing since
		// ?5 = f.DisableFailingSince or earlier); a NULL ?5 never disables.
		// The endpoint is written only when the outcome changes it (a
		// success clearing failing_since, the first failure setting it, a
		// disabling one), as PostgreSQL's webhookEndpointChanges.
		const off = `(?1 <> 'sent' AND (?3 <> '' OR coalesce(coalesce(failing_since, ?2) <= ?4, 0)))`
		err = tx.QueryRowContext(ctx, `UPDATE webhook_endpoints SET
	failing_since = CASE WHEN ?1 = 'sent' THEN NULL ELSE coalesce(failing_since, ?2) END,
	disabled_reason = CASE WHEN enabled AND `+off+` THEN CASE WHEN ?3 <> '' THEN ?3 ELSE ?5 END ELSE disabled_reason END,
	enabled = enabled AND NOT `+off+`,
	updated_at = ?2
WHERE id = ?6 AND ((?1 = 'sent' AND failing_since IS NOT NULL) OR (?1 <> 'sent' AND failing_since IS NULL) OR (enabled AND `+off+`))
RETURNING `+off, string(f.State), micros(f.At), f.Disable, nullMicros(f.DisableFailingSince),
			f.FailingReason, endpoint).Scan(&disabled)
		if err != nil && err != sql.ErrNoRows {
			return formatError(err, "webhook endpoint")
		}
		_, err = s.exec(ctx, tx, `UPDATE webhook_messages SET state = ?4, run_at = coalesce(?5, run_at), lease_owner = '',
	lease_until = NULL, last_status = ?6, last_error = ?7, finished_at = ?8 WHERE `+guard,
			f.Seq, f.Owner, f.Attempt, string(f.State), runAt, f.Status, f.Error, finished)
		applied = err == nil
		return formatError(err, "webhook message")
	})
	return applied, disabled, err
}

// ListWebhookMessages implements store.WebhookEndpoints.
func (s *Store) ListWebhookMessages(ctx context.Context, f store.WebhookMessageFilter) ([]heraldtype.WebhookMessage, error) {
	if err := store.CheckWebhookMessageFilter(f); err != nil {
		return nil, err
	}
	tx, err := s.read.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return nil, formatError(err, "webhook messages")
	}
	defer tx.Rollback()
	var one int
	if err := tx.QueryRowContext(ctx, `SELECT 1 FROM webhook_endpoints WHERE id = ?`, f.EndpointID).Scan(&one); err != nil {
		return nil, formatError(err, "webhook endpoint "+quote(f.EndpointID))
	}
	// The retry table's messages and the log's events not copied there —
	// sent when the cursor has passed them, pending before — in seq order
	// (the single writer's commit order), newest first.
	rows, err := tx.QueryContext(ctx, `SELECT * FROM (
	SELECT * FROM (SELECT `+webhookMessageColumns+` FROM webhook_messages
		WHERE endpoint_id = ?1 AND (?2 = '' OR state = ?2) AND (?3 <= 0 OR seq < ?3) ORDER BY seq DESC LIMIT ?4)
	UNION ALL
	SELECT * FROM (SELECT e.seq, e.endpoint_id, e.event_id, e.type, e.ordering_key, e.payload,
			CASE WHEN e.seq <= w.cursor_seq THEN 'sent' ELSE 'pending' END AS state,
			CASE WHEN e.seq <= w.cursor_seq THEN 1 ELSE 0 END, e.occurred_at, e.occurred_at, e.occurred_at, 0, '', NULL
		FROM webhook_events e JOIN webhook_endpoints w ON w.id = e.endpoint_id
		WHERE e.endpoint_id = ?1 AND (?3 <= 0 OR e.seq < ?3)
			AND (?2 = '' OR ?2 = CASE WHEN e.seq <= w.cursor_seq THEN 'sent' ELSE 'pending' END)
			AND NOT EXISTS (SELECT 1 FROM webhook_messages c WHERE c.seq = e.seq)
		ORDER BY e.seq DESC LIMIT ?4)
) ORDER BY seq DESC LIMIT ?4`, f.EndpointID, string(f.State), f.Before, f.Limit)
	if err != nil {
		return nil, formatError(err, "webhook messages")
	}
	defer rows.Close()
	out := []heraldtype.WebhookMessage{}
	for rows.Next() {
		m, err := scanWebhookMessage(rows)
		if err != nil {
			return nil, formatError(err, "webhook messages")
		}
		out = append(out, m)
	}
	return out, formatError(rows.Err(), "webhook messages")
}

// ReplayWebhookMessages implements store.WebhookEndpoints.
func (s *Store) ReplayWebhookMessages(ctx context.Context, endpointID string, seqs []int64, now time.Time) (int, error) {
	n := 0
	err := s.inTx(ctx, func(tx *writeTx) error {
		n = 0
		var one int
		if err := tx.QueryRowContext(ctx, `SELECT 1 FROM webhook_endpoints WHERE id = ?`, endpointID).Scan(&one); err != nil {
			return formatError(err, "webhook endpoint "+quote(endpointID))
		}
		const replay = `UPDATE webhook_messages SET state = 'pending', attempt = 0, run_at = ?2, first_at = ?2,
	finished_at = NULL, lease_owner = '', lease_until = NULL WHERE endpoint_id = ?1 AND state = 'dead'`
		if len(seqs) == 0 {
			res, err := s.exec(ctx, tx, replay, endpointID, micros(now))
			n, err = affected(res, err, "webhook messages")
			return err
		}
		return inLists(seqs, func(args []any) error {
			res, err := tx.ExecContext(ctx, replay+` AND seq IN (`+marks(len(args))+`)`,
				append([]any{endpointID, micros(now)}, args...)...)
			k, err := affected(res, err, "webhook messages")
			n += k
			return err
		})
	})
	return n, err
}

// PruneWebhookMessages implements store.WebhookEndpoints through the
// partial index of finished messages.
func (s *Store) PruneWebhookMessages(ctx context.Context, cutoff time.Time) (int, error) {
	n := 0
	err := s.inTx(ctx, func(tx *writeTx) error {
		res, err := s.exec(ctx, tx, `DELETE FROM webhook_messages WHERE state IN ('sent', 'dead') AND finished_at < ?`, micros(cutoff))
		n, err = affected(res, err, "webhook messages")
		if err != nil {
			return err
		}
		// The log's events the endpoint's cursor has passed.
		res, err = s.exec(ctx, tx, `DELETE FROM webhook_events AS e WHERE e.occurred_at < ?
	AND e.seq <= (SELECT w.cursor_seq FROM webhook_endpoints w WHERE w.id = e.endpoint_id)`, micros(cutoff))
		k, err := affected(res, err, "webhook events")
		n += k
		return err
	})
	return n, err
}

// FinishWebhooksSent implements store.WebhookEndpoints in one write
// transaction: each message still leased by its owner for its attempt is
// sent, and the failing endpoints among theirs are failing no more.
func (s *Store) FinishWebhooksSent(ctx context.Context, fs []store.WebhookFinish) (int, error) {
	if err := store.CheckWebhooksSent(fs); err != nil {
		return 0, err
	}
	if len(fs) == 0 {
		return 0, nil
	}
	applied := 0
	err := s.inTx(ctx, func(tx *writeTx) error {
		applied = 0
		for _, f := range fs {
			var endpoint string
			err := tx.QueryRowContext(ctx, `UPDATE webhook_messages SET state = 'sent', lease_owner = '', lease_until = NULL,
	last_status = ?4, last_error = '', finished_at = ?5
WHERE seq = ?1 AND state = 'leased' AND lease_owner = ?2 AND attempt = ?3 RETURNING endpoint_id`,
				f.Seq, f.Owner, f.Attempt, f.Status, micros(f.At)).Scan(&endpoint)
			if err == sql.ErrNoRows {
				continue
			}
			if err != nil {
				return formatError(err, "webhook message")
			}
			applied++
			if _, err := s.exec(ctx, tx, `UPDATE webhook_endpoints SET failing_since = NULL, updated_at = ?2
WHERE id = ?1 AND failing_since IS NOT NULL`, endpoint, micros(f.At)); err != nil {
				return formatError(err, "webhook endpoint")
			}
		}
		return nil
	})
	return applied, err
}

// CountWebhookMessagesPending implements store.WebhookEndpoints: a count
// stopped at max over the due index, on the read pool.
func (s *Store) CountWebhookMessagesPending(ctx context.Context, max int) (int, error) {
	if max < 1 {
		return 0, heraldtype.FieldErrorf("max", "must be positive")
	}
	var n int
	err := s.read.QueryRowContext(ctx, `SELECT (SELECT count(*) FROM (SELECT 1 FROM webhook_messages
WHERE state IN ('pending', 'leased') ORDER BY run_at, seq LIMIT ?1)) + (SELECT count(*) FROM (SELECT 1
FROM webhook_endpoints w JOIN webhook_events e ON e.endpoint_id = w.id AND e.seq > w.cursor_seq LIMIT ?1))`, max).Scan(&n)
	n = min(n, max)
	if err != nil {
		return 0, formatError(err, "webhook messages")
	}
	return n, nil
}
