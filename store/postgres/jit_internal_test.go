package postgres

import (
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/heraldhq/herald/store/postgres/pgtest"
)

// TestIndexPlansTurnJITOff: the hot statements run under indexPlans with
// generic plans, whose guess of a tenth of the table for an unknown LIMIT
// priced the claim above jit_above_cost at a million deliveries; every
// claim was then JIT-compiled (33 ms against 5 ms; issue 39 item 4,
// docs/PERFORMANCE.md session 15). With the threshold at 0 (any statement
// would be compiled), the claim's shape run under indexPlans must show no
// JIT in EXPLAIN ANALYZE; without indexPlans it must, when the server can
// compile at all (the control, so the test cannot pass on a server
// without JIT while proving nothing).
func TestIndexPlansTurnJITOff(t *testing.T) {
	s := migratedStore(t)
	ctx := t.Context()
	explain := func(settings string) string {
		t.Helper()
		return planIn(t, s, s.q(`EXPLAIN (ANALYZE) SELECT id FROM {s}.deliveries
	WHERE state = 'pending' AND run_at <= now() ORDER BY run_at, id LIMIT 100 FOR UPDATE SKIP LOCKED`), nil,
			`SET LOCAL jit_above_cost = 0`, settings)
	}
	var available bool
	if err := s.pool.QueryRow(ctx, `SELECT pg_jit_available()`).Scan(&available); err != nil {
		t.Fatal(err)
	}
	if available {
		if plan := explain(""); !strings.Contains(plan, "JIT:") {
			t.Fatalf("control: with jit_above_cost 0 and no indexPlans the plan shows no JIT:\n%s", plan)
		}
	} else {
		t.Log("this server cannot JIT-compile (pg_jit_available() is false): the control is skipped")
	}
	if plan := explain(indexPlans); strings.Contains(plan, "JIT:") {
		t.Fatalf("under indexPlans the claim was JIT-compiled:\n%s", plan)
	}
}

// migratedStore opens a store of one connection on a fresh schema, with
// Herald's tables, for a test that reads plans.
func migratedStore(t testing.TB) *Store {
	t.Helper()
	dsn, schema := pgtest.NewSchema(t)
	s, err := Open(t.Context(), dsn, Options{Schema: schema, MaxConns: 1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	if err := s.Migrate(t.Context()); err != nil {
		t.Fatal(err)
	}
	return s
}

// planIn runs explain (an EXPLAIN statement) with args in a transaction
// of its own, rolled back, after the settings statements given (an empty
// one is skipped), and returns the plan's text.
func planIn(t testing.TB, s *Store, explain string, args []any, settings ...string) string {
	t.Helper()
	ctx := t.Context()
	tx, err := s.pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(ctx)
	for _, set := range settings {
		if set == "" {
			continue
		}
		if _, err := tx.Exec(ctx, set); err != nil {
			t.Fatal(err)
		}
	}
	return planText(t)(tx.Query(ctx, explain, args...))
}

// planText reads the lines of an EXPLAIN's answer: planText(t)(q.Query(…)).
func planText(t testing.TB) func(pgx.Rows, error) string {
	return func(rows pgx.Rows, err error) string {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		var plan strings.Builder
		for rows.Next() {
			var line string
			if err := rows.Scan(&line); err != nil {
				t.Fatal(err)
			}
			plan.WriteString(line + "\n")
		}
		if err := rows.Err(); err != nil {
			t.Fatal(err)
		}
		return plan.String()
	}
}
