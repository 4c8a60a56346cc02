package sqlite_test

import (
	"testing"
	"time"

	"github.com/heraldhq/herald/heraldtype"
)

// Issue 30 item 4: a dead event kept before dead events were keyed by id
// is still there after migration 0016, and a second record at its
// position (a topic recreated) is kept beside it rather than dropped.
func TestMigrationKeepsDeadEvents(t *testing.T) {
	ctx := t.Context()
	s := migratedBelow(t, "0016")
	if _, err := s.DB().ExecContext(ctx, `INSERT INTO dead_events (topic, partition, "offset", kind, key, value, error, attempts, created_at)
		VALUES ('t', 0, 5, 'events', NULL, X'7B7D', 'boom', 1, 0)`); err != nil {
		t.Fatal(err)
	}
	if err := s.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	old, err := s.GetDeadEvent(ctx, 1)
	if err != nil || old.Topic != "t" || old.Offset != 5 || string(old.Value) != "{}" || old.Tombstone || !old.RecordTimestamp.IsZero() {
		t.Fatalf("the dead event from before = %+v, %v", old, err)
	}
	id, err := s.PutDeadEvent(ctx, heraldtype.DeadEvent{Topic: "t", Offset: 5, Kind: "events", Value: []byte("{}"),
		RecordTimestamp: time.UnixMilli(1764000000000), Error: "boom", Attempts: 1}, time.Unix(60, 0))
	if err != nil || id == 1 {
		t.Fatalf("a second record at its position = %d, %v; want a new row", id, err)
	}
}
