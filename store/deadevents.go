package store

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"time"

	"github.com/heraldhq/herald/heraldtype"
)

// DeadEvents keeps the Kafka records Herald gave up on (issue 20 item 5,
// S3.10). Store embeds it.
type DeadEvents interface {
	// PutDeadEvent records d (its ID and CreatedAt are the store's and
	// now) and returns its id. A record is kept once: recording the same
	// record again — the same DeadEventFingerprint (a consumer that died
	// before committing the offset, and dead-lettered it again) — returns
	// the first one's id and changes nothing. Another record at a
	// position already used (a topic recreated) is kept too (issue 30
	// item 4). A tombstone (d.Tombstone) is kept with a NULL value.
	PutDeadEvent(ctx context.Context, d heraldtype.DeadEvent, now time.Time) (int64, error)
	// GetDeadEvent returns one; ENOTFOUND if none.
	GetDeadEvent(ctx context.Context, id int64) (heraldtype.DeadEvent, error)
	// ListDeadEvents returns a page, newest first, and the next page's
	// cursor.
	ListDeadEvents(ctx context.Context, f heraldtype.DeadEventFilter) ([]heraldtype.DeadEvent, string, error)
	// MarkDeadEventReplayed records a replay of id: done (replayErr "")
	// sets ReplayedAt = now and clears ReplayError; failed keeps
	// ReplayedAt and sets ReplayError. ENOTFOUND if none.
	MarkDeadEventReplayed(ctx context.Context, id int64, replayErr string, now time.Time) error
}

// Page sizes of the dead-event listing.
const (
	DefaultDeadEventPage = 50
	MaxDeadEventPage     = 200
)

// DeadEventFingerprint identifies the record d came from: a hash of its
// topic, partition, offset, timestamp, key and value (each
// length-prefixed, a null key or value told from an empty one). Kafka
// gives a record of a partition one offset, so two dead letters with the
// same fingerprint are one record dead-lettered twice; a different record
// at a reused offset — written after its topic was recreated — differs in
// its timestamp at least, in practice.
func DeadEventFingerprint(d heraldtype.DeadEvent) string {
	h := sha256.New()
	var n [8]byte
	num := func(v int64) {
		binary.BigEndian.PutUint64(n[:], uint64(v))
		h.Write(n[:])
	}
	field := func(b []byte, null bool) {
		if null {
			num(-1)
			return
		}
		num(int64(len(b)))
		h.Write(b)
	}
	field([]byte(d.Topic), false)
	num(int64(d.Partition))
	num(d.Offset)
	var ts int64
	if !d.RecordTimestamp.IsZero() {
		ts = d.RecordTimestamp.UnixMilli()
	}
	num(ts)
	field(d.Key, d.Key == nil)
	field(d.Value, d.Tombstone)
	return hex.EncodeToString(h.Sum(nil))
}

// DeadEventValue is the value column of d: NULL (nil) for a tombstone,
// else the bytes, an empty value as an empty, non-NULL one.
func DeadEventValue(d heraldtype.DeadEvent) any {
	if d.Tombstone {
		return nil
	}
	if d.Value == nil {
		return []byte{}
	}
	return d.Value
}

// CheckDeadEvent refuses a record without a topic or a kind.
func CheckDeadEvent(d heraldtype.DeadEvent) error {
	if d.Topic == "" || d.Kind == "" {
		return heraldtype.Errorf(heraldtype.EINVALID, "dead event: a topic and a kind are required")
	}
	return nil
}

// CheckDeadEventFilter checks f and returns its page size and the id
// before which the page starts (0: the first page).
func CheckDeadEventFilter(f heraldtype.DeadEventFilter) (limit int, before int64, err error) {
	switch f.Replayed {
	case "", "yes", "no":
	default:
		return 0, 0, heraldtype.FieldErrorf("replayed", "must be yes or no")
	}
	if !f.From.IsZero() && !f.To.IsZero() && !f.From.Before(f.To) {
		return 0, 0, heraldtype.FieldErrorf("from", "must be before to")
	}
	if f.Cursor != "" {
		if before, err = decodeCursor(f.Cursor); err != nil {
			return 0, 0, err
		}
	}
	if limit, err = pageSize(f.Limit, DefaultDeadEventPage, MaxDeadEventPage); err != nil {
		return 0, 0, err
	}
	return limit, before, nil
}

// DeadEventPage trims dead events read newest first with a LIMIT of
// limit+1.
func DeadEventPage(ds []heraldtype.DeadEvent, limit int) ([]heraldtype.DeadEvent, string) {
	return page(ds, limit, func(d heraldtype.DeadEvent) string { return encodeCursor(d.ID) })
}
