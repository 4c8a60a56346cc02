package postgres_test

import (
	"testing"
	"time"

	"github.com/heraldhq/herald/heraldtype"
)

// Issue 30 item 4: a dead event kept before dead events were keyed by id
// is still there after migration 0022, and a second record at its
// position (a topic recreated) is kept beside it rather than dropped.
func TestMigrationKeepsDeadEvents(t *testing.T) {
	ctx := t.Context()
	db, dsn, schema := migratedBelow(t, "0022")
	var oldID int64
	if err := db.QueryRowContext(ctx, `INSERT INTO dead_events (topic, partition, "offset", kind, key, value, error, attempts, created_at)
		VALUES ('t', 0, 5, 'events', NULL, '\x7b7d', 'boom', 1, now()) RETURNING id`).Scan(&oldID); err != nil {
		t.Fatal(err)
	}
	s := openStore(t, dsn, schema)
	if err := s.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	old, err := s.GetDeadEvent(ctx, oldID)
	if err != nil || old.Topic != "t" || old.Offset != 5 || string(old.Value) != "{}" || old.Tombstone || !old.RecordTimestamp.IsZero() {
		t.Fatalf("the dead event from before = %+v, %v", old, err)
	}
	id, err := s.PutDeadEvent(ctx, heraldtype.DeadEvent{Topic: "t", Offset: 5, Kind: "events", Value: []byte("{}"),
		RecordTimestamp: time.UnixMilli(1764000000000), Error: "boom", Attempts: 1}, time.Now())
	if err != nil || id == oldID {
		t.Fatalf("a second record at its position = %d, %v; want a new row", id, err)
	}
}
