package postgres

import (
	"context"
	"errors"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/heraldhq/herald/heraldtype"
	"github.com/heraldhq/herald/store"
	"github.com/heraldhq/herald/store/rules"
)

// Dead events: store.DeadEvents (issue 20 item 5).

const deadEventColumns = `id, topic, partition, "offset", kind, key, value, value IS NULL, record_timestamp, payload, error, attempts,
	created_at, replayed_at, replay_error`

func scanDeadEvent(row interface{ Scan(...any) error }) (heraldtype.DeadEvent, error) {
	var d heraldtype.DeadEvent
	var payload []byte
	var recordTS *time.Time
	err := row.Scan(&d.ID, &d.Topic, &d.Partition, &d.Offset, &d.Kind, &d.Key, &d.Value, &d.Tombstone, &recordTS, &payload,
		&d.Error, &d.Attempts, &d.CreatedAt, &d.ReplayedAt, &d.ReplayError)
	if len(payload) > 0 {
		d.Payload = payload
	}
	if !d.Tombstone && d.Value == nil {
		d.Value = []byte{}
	}
	if recordTS != nil {
		d.RecordTimestamp = recordTS.UTC()
	}
	d.CreatedAt = utc(d.CreatedAt)
	if d.ReplayedAt != nil {
		t := d.ReplayedAt.UTC()
		d.ReplayedAt = &t
	}
	return d, err
}

// PutDeadEvent implements store.DeadEvents.
func (s *Store) PutDeadEvent(ctx context.Context, d heraldtype.DeadEvent, now time.Time) (int64, error) {
	if err := store.CheckDeadEvent(d); err != nil {
		return 0, err
	}
	var payload any
	if len(d.Payload) > 0 {
		payload = string(d.Payload)
	}
	var recordTS *time.Time
	if !d.RecordTimestamp.IsZero() {
		recordTS = &d.RecordTimestamp
	}
	// A record kept for the first time writes its dead_letter.created
	// messages (issue 35 item 4) in the same statement; one kept before
	// writes neither.
	var id int64
	err := s.pool.QueryRow(ctx, s.q(`WITH ins AS (
	INSERT INTO {s}.dead_events (topic, partition, "offset", kind, key, value, record_timestamp, fingerprint, payload, error,
		attempts, created_at)
	VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9::jsonb, $10, $11, $12)
	ON CONFLICT (fingerprint) DO NOTHING RETURNING `+rules.DeadEventColumns+`
), w AS (
	`+rules.DeadEventCreatedSQL(rules.WebhookPostgres, "ins x")+` ORDER BY e.id
)
SELECT id FROM ins UNION ALL
SELECT id FROM {s}.dead_events WHERE fingerprint = $8 LIMIT 1`),
		d.Topic, d.Partition, d.Offset, d.Kind, d.Key, store.DeadEventValue(d), recordTS, store.DeadEventFingerprint(d), payload,
		d.Error, d.Attempts, now).Scan(&id)
	return id, formatError(err, "dead event")
}

// GetDeadEvent implements store.DeadEvents.
func (s *Store) GetDeadEvent(ctx context.Context, id int64) (heraldtype.DeadEvent, error) {
	d, err := scanDeadEvent(s.pool.QueryRow(ctx, s.q(`SELECT `+deadEventColumns+` FROM {s}.dead_events WHERE id = $1`), id))
	return d, formatError(err, "dead event")
}

// ListDeadEvents implements store.DeadEvents.
func (s *Store) ListDeadEvents(ctx context.Context, f heraldtype.DeadEventFilter) ([]heraldtype.DeadEvent, string, error) {
	limit, before, err := store.CheckDeadEventFilter(f)
	if err != nil {
		return nil, "", err
	}
	rows, err := s.pool.Query(ctx, s.q(`SELECT `+deadEventColumns+` FROM {s}.dead_events
WHERE ($1 = 0 OR id < $1) AND ($2 = '' OR topic = $2) AND ($3 = '' OR kind = $3)
	AND ($4 = '' OR ($4 = 'yes') = (replayed_at IS NOT NULL))
	AND ($6::timestamptz IS NULL OR created_at >= $6) AND ($7::timestamptz IS NULL OR created_at < $7)
ORDER BY id DESC LIMIT $5`), before, f.Topic, f.Kind, f.Replayed, limit+1, nullTime(f.From), nullTime(f.To))
	if err != nil {
		return nil, "", formatError(err, "dead events")
	}
	ds, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (heraldtype.DeadEvent, error) { return scanDeadEvent(r) })
	if err != nil {
		return nil, "", formatError(err, "dead events")
	}
	if ds == nil {
		ds = []heraldtype.DeadEvent{}
	}
	ds, next := store.DeadEventPage(ds, limit)
	return ds, next, nil
}

// MarkDeadEventReplayed implements store.DeadEvents.
func (s *Store) MarkDeadEventReplayed(ctx context.Context, id int64, replayErr string, now time.Time) error {
	tag, err := s.pool.Exec(ctx, s.q(`UPDATE {s}.dead_events SET
	replayed_at = CASE WHEN $2 = '' THEN $3 ELSE replayed_at END, replay_error = $2 WHERE id = $1`), id, replayErr, now)
	if err == nil && tag.RowsAffected() == 0 {
		err = pgx.ErrNoRows
	}
	if errors.Is(err, pgx.ErrNoRows) {
		return heraldtype.Errorf(heraldtype.ENOTFOUND, "dead event %d not found", id)
	}
	return formatError(err, "dead event")
}
