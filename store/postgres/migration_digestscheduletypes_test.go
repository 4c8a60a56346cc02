package postgres_test

import (
	"slices"
	"testing"
)

// Issue 36 item 2: migration 0045 lists the types users scheduled digests
// for before it, so their triggers keep reading the schedules.
func TestMigrationListsDigestScheduleTypes(t *testing.T) {
	ctx := t.Context()
	db, dsn, schema := migratedBelow(t, "0045")
	for _, q := range []string{
		`INSERT INTO users (id, timezone, created_at, updated_at) VALUES ('u1', 'UTC', now(), now()), ('u2', 'UTC', now(), now()), ('u3', 'UTC', now(), now())`,
		`INSERT INTO user_preferences (user_id, prefs, updated_at) VALUES
			('u1', '{"user_id":"u1","types":{"comment":{"digest":{"every":"day","at":"18:00"}},"like":{"disabled":true}}}', now()),
			('u2', '{"user_id":"u2","types":{"comment":{"digest":{"every":"week","at":"09:00","on":"monday"}},"mention":{"digest":{"every":"day","at":"08:00"}}}}', now()),
			('u3', '{"user_id":"u3","quiet_hours":{"start":"22:00","end":"07:00"}}', now())`,
	} {
		if _, err := db.ExecContext(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	s := openStore(t, dsn, schema)
	if err := s.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	got, err := s.DigestScheduleTypes(ctx)
	if want := []string{"comment", "mention"}; err != nil || !slices.Equal(got, want) {
		t.Fatalf("DigestScheduleTypes = %q, %v; want %q", got, err, want)
	}
}
