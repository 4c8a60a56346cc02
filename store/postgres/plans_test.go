package postgres_test

import (
	"fmt"
	"testing"
)

// The enqueue's statements run their generic plans (enqueuePlans): with
// custom plans PostgreSQL planned each of them on every trigger, 330 µs
// of a single-recipient trigger's ≈ 1.1 ms (docs/PERFORMANCE.md). On one
// connection, pg_prepared_statements counts how each prepared statement
// was planned.
func TestEnqueueNeverReplans(t *testing.T) {
	t.Parallel()
	s := newStoreConns(t, 1)
	ctx := t.Context()
	seed(t, s)
	const triggers = 12 // past the five custom plans PostgreSQL tries first
	for i := range triggers {
		p := trigger(fmt.Sprint("n", i))
		p.IdempotencyKey, p.RequestHash = fmt.Sprint("k", i), "h"
		res, err := s.Enqueue(ctx, p)
		if err != nil || res.Notifications[0].Deliveries != 1 {
			t.Fatalf("Enqueue %d = %+v, %v", i, res, err)
		}
	}
	rows, err := s.Pool().Query(ctx, `SELECT left(statement, 60), generic_plans, custom_plans FROM pg_prepared_statements
WHERE statement ~ '^INSERT INTO \S+\.(triggers|notifications|deliveries) ' OR statement ~ '^SELECT \S+\.user_not_found'`)
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
