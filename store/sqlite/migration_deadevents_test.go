package sqlite_test

import (
	"io/fs"
	"path/filepath"
	"testing"
	"testing/fstest"
	"time"

	"github.com/heraldhq/herald/heraldtype"
	"github.com/heraldhq/herald/store/migrate"
	"github.com/heraldhq/herald/store/sqlite"
)

// Issue 30 item 4: a dead event kept before dead events were keyed by id
// is still there after migration 0016, and a second record at its
// position (a topic recreated) is kept beside it rather than dropped.
func TestMigrationKeepsDeadEvents(t *testing.T) {
	ctx := t.Context()
	s, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "herald.db"), sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	before := fstest.MapFS{}
	err = fs.WalkDir(sqlite.Migrations(), ".", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || path >= "0016" {
			return err
		}
		b, err := fs.ReadFile(sqlite.Migrations(), path)
		before[path] = &fstest.MapFile{Data: b}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := migrate.Run(ctx, s.DB(), before, migrate.Options{}); err != nil {
		t.Fatal(err)
	}
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
