package postgres_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/heraldhq/herald/heraldtype"
	"github.com/heraldhq/herald/store"
	"github.com/heraldhq/herald/store/postgres"
	"github.com/heraldhq/herald/store/postgres/pgtest"
	"github.com/heraldhq/herald/store/storetest"
)

// The enqueue's statements run their generic plans (enqueuePlans): with
// custom plans PostgreSQL planned each of them on every trigger, 330 µs
// of a single-recipient trigger's ≈ 1.1 ms (docs/PERFORMANCE.md). On one
// connection, pg_prepared_statements counts how each prepared statement
// was planned.
func TestEnqueueNeverReplans(t *testing.T) {
	t.Parallel()
	dsn, schema := pgtest.NewSchema(t)
	s, err := postgres.Open(t.Context(), dsn, postgres.Options{Schema: schema, MaxConns: 1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	ctx := t.Context()
	if err := s.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	now := time.Date(2026, 11, 24, 9, 0, 0, 0, time.UTC)
	const triggers = 12 // past the five custom plans PostgreSQL tries first
	for i := range triggers {
		u := fmt.Sprint("u", i)
		if _, err := s.UpsertUser(ctx, heraldtype.User{ID: u, Timezone: "UTC"}, now); err != nil {
			t.Fatal(err)
		}
		d := heraldtype.Device{ID: "d" + u, UserID: u, Platform: heraldtype.PlatformAndroid, Token: "tok" + u, PushOptIn: true}
		if _, err := s.UpsertDevice(ctx, d, now); err != nil {
			t.Fatal(err)
		}
		n := heraldtype.Notification{ID: fmt.Sprint("n", i), UserID: u, Type: "t", Title: "x",
			Channels: []heraldtype.Channel{heraldtype.ChannelPush}, Priority: heraldtype.PriorityNormal,
			PayloadMode: heraldtype.PayloadAlert, Guarantee: heraldtype.AtLeastOnce, CreatedAt: now}
		res, err := s.Enqueue(ctx, store.EnqueueParams{Notifications: []heraldtype.Notification{n}, MaxAttempts: 3,
			PushProviders: storetest.Providers(), Now: now, IdempotencyKey: fmt.Sprint("k", i), RequestHash: "h"})
		if err != nil || res.Notifications[0].Deliveries != 1 {
			t.Fatalf("Enqueue %d = %+v, %v", i, res, err)
		}
	}
	rows, err := s.Pool().Query(ctx, `SELECT left(statement, 60), generic_plans, custom_plans FROM pg_prepared_statements
WHERE statement ~ '^INSERT INTO \S+\.(triggers|notifications|deliveries) ' OR statement LIKE 'SELECT u.id FROM unnest%'`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	seen := 0
	for rows.Next() {
		var stmt string
		var generic, custom int64
		if err := rows.Scan(&stmt, &generic, &custom); err != nil {
			t.Fatal(err)
		}
		if custom != 0 || generic < triggers {
			t.Errorf("%s…: %d custom and %d generic plans in %d triggers; want only generic", stmt, custom, generic, triggers)
		}
		seen++
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	// The trigger record, users check, notifications and deliveries.
	if seen < 4 {
		t.Fatalf("found %d enqueue statements in pg_prepared_statements, want 4", seen)
	}
}
