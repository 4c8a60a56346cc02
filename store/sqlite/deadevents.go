package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"time"

	"github.com/heraldhq/herald/heraldtype"
	"github.com/heraldhq/herald/store"
)

// Dead events: store.DeadEvents (issue 20 item 5).

const deadEventColumns = `id, topic, partition, "offset", kind, key, value, value IS NULL, record_timestamp, payload, error, attempts,
	created_at, replayed_at, replay_error`

func scanDeadEvent(row interface{ Scan(...any) error }) (heraldtype.DeadEvent, error) {
	var d heraldtype.DeadEvent
	var payload sql.NullString
	var created int64
	var recordTS, replayed sql.NullInt64
	if err := row.Scan(&d.ID, &d.Topic, &d.Partition, &d.Offset, &d.Kind, &d.Key, &d.Value, &d.Tombstone, &recordTS, &payload,
		&d.Error, &d.Attempts, &created, &replayed, &d.ReplayError); err != nil {
		return d, err
	}
	if payload.Valid {
		d.Payload = []byte(payload.String)
	}
	if !d.Tombstone && d.Value == nil {
		d.Value = []byte{}
	}
	if recordTS.Valid {
		d.RecordTimestamp = fromMicros(recordTS.Int64)
	}
	d.CreatedAt = fromMicros(created)
	d.ReplayedAt = fromNullMicros(replayed)
	return d, nil
}

// PutDeadEvent implements store.DeadEvents.
func (s *Store) PutDeadEvent(ctx context.Context, d heraldtype.DeadEvent, now time.Time) (int64, error) {
	if err := store.CheckDeadEvent(d); err != nil {
		return 0, err
	}
	var id int64
	err := s.inTx(ctx, func(tx *writeTx) error {
		payload := sql.NullString{String: string(d.Payload), Valid: len(d.Payload) > 0}
		recordTS := sql.NullInt64{Int64: micros(d.RecordTimestamp), Valid: !d.RecordTimestamp.IsZero()}
		fp := store.DeadEventFingerprint(d)
		n, err := s.execN(ctx, tx, "dead event", `INSERT INTO dead_events (topic, partition, "offset", kind, key, value, record_timestamp,
	fingerprint, payload, error, attempts, created_at)
VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (fingerprint) DO NOTHING`,
			d.Topic, d.Partition, d.Offset, d.Kind, d.Key, store.DeadEventValue(d), recordTS, fp, payload, d.Error, d.Attempts,
			micros(now))
		if err != nil {
			return err
		}
		if n == 1 {
			// Kept for the first time: its dead_letter.created messages
			// (issue 35 item 4) go with it; a record kept before writes
			// neither.
			if _, err := s.exec(ctx, tx, deadEventCreatedSQL, fp); err != nil {
				return formatError(err, "webhook messages")
			}
		}
		return tx.QueryRowContext(ctx, `SELECT id FROM dead_events WHERE fingerprint = ?`, fp).Scan(&id)
	})
	return id, formatError(err, "dead event")
}

// GetDeadEvent implements store.DeadEvents.
func (s *Store) GetDeadEvent(ctx context.Context, id int64) (heraldtype.DeadEvent, error) {
	d, err := scanDeadEvent(s.read.QueryRowContext(ctx, `SELECT `+deadEventColumns+` FROM dead_events WHERE id = ?`, id))
	if errors.Is(err, sql.ErrNoRows) {
		return d, heraldtype.Errorf(heraldtype.ENOTFOUND, "dead event %d not found", id)
	}
	return d, formatError(err, "dead event")
}

// ListDeadEvents implements store.DeadEvents.
func (s *Store) ListDeadEvents(ctx context.Context, f heraldtype.DeadEventFilter) ([]heraldtype.DeadEvent, string, error) {
	limit, before, err := store.CheckDeadEventFilter(f)
	if err != nil {
		return nil, "", err
	}
	rows, err := s.read.QueryContext(ctx, `SELECT `+deadEventColumns+` FROM dead_events
WHERE (? = 0 OR id < ?) AND (? = '' OR topic = ?) AND (? = '' OR kind = ?)
	AND (? = '' OR (? = 'yes') = (replayed_at IS NOT NULL))
	AND (? IS NULL OR created_at >= ?) AND (? IS NULL OR created_at < ?)
ORDER BY id DESC LIMIT ?`, before, before, f.Topic, f.Topic, f.Kind, f.Kind, f.Replayed, f.Replayed,
		nullMicros(f.From), nullMicros(f.From), nullMicros(f.To), nullMicros(f.To), limit+1)
	if err != nil {
		return nil, "", formatError(err, "dead events")
	}
	defer rows.Close()
	ds := []heraldtype.DeadEvent{}
	for rows.Next() {
		d, err := scanDeadEvent(rows)
		if err != nil {
			return nil, "", formatError(err, "dead events")
		}
		ds = append(ds, d)
	}
	if err := rows.Err(); err != nil {
		return nil, "", formatError(err, "dead events")
	}
	ds, next := store.DeadEventPage(ds, limit)
	return ds, next, nil
}

// MarkDeadEventReplayed implements store.DeadEvents.
func (s *Store) MarkDeadEventReplayed(ctx context.Context, id int64, replayErr string, now time.Time) error {
	return s.inTx(ctx, func(tx *writeTx) error {
		res, err := s.exec(ctx, tx, `UPDATE dead_events SET
	replayed_at = CASE WHEN ? = '' THEN ? ELSE replayed_at END, replay_error = ? WHERE id = ?`, replayErr, micros(now), replayErr, id)
		n, err := affected(res, err, "dead event")
		if err == nil && n == 0 {
			return heraldtype.Errorf(heraldtype.ENOTFOUND, "dead event %d not found", id)
		}
		return err
	})
}
