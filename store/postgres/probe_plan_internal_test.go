package postgres

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/heraldhq/herald/heraldtype"
)

// Issue 39 item 3: two statements of the rule engine's path read a whole
// table per call when the planner is free to, and their cost then grows
// with the table — the audience page (a hash join over every user: the
// interest's user_id compares in byte order, users.id in the database's
// collation, and an index serves only its own) and the daily count (an
// EXISTS run as a hashed subplan over every count of the day). With
// 15,000 users and counts, each must probe its index instead.
func TestRuleEnginePlansProbeIndexes(t *testing.T) {
	s := migratedStore(t)
	ctx := t.Context()
	const n = 15000
	for _, q := range []string{
		`INSERT INTO {s}.users (id, timezone, created_at, updated_at) SELECT 'u' || g, 'UTC', now(), now() FROM generate_series(1, $1) g`,
		`INSERT INTO {s}.interests (subject, user_id, kind, last_at) SELECT 'product:' || (g / 5), 'u' || g, 'VIEW', now() FROM generate_series(1, $1) g`,
		`INSERT INTO {s}.policy_daily (user_id, day, owner, expires_at) SELECT 'u' || g, '2026-11-28', 'n' || g, now() FROM generate_series(1, $1) g`,
	} {
		if _, err := s.pool.Exec(ctx, s.q(q), n); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := s.pool.Exec(ctx, s.q(`ANALYZE {s}.users, {s}.interests, {s}.policy_daily`)); err != nil {
		t.Fatal(err)
	}
	explain := func(query string, args ...any) string {
		t.Helper()
		return planText(t)(s.pool.Query(ctx, "EXPLAIN "+query, args...))
	}
	var args []any
	audience := s.q(interestedUsersSQL(heraldtype.InterestQuery{Subject: "product:7", Kinds: []string{"VIEW", "CLICK"},
		Since: time.Now().Add(-time.Hour), Limit: 1000}, marker(&args)))
	if plan := explain(audience, args...); strings.Contains(plan, "Seq Scan on users") {
		t.Fatalf("the audience page reads every user:\n%s", plan)
	}
	const items = 127
	users, days, owners := make([]string, items), make([]string, items), make([]string, items)
	limits, expires := make([]int64, items), make([]time.Time, items)
	for i := range items {
		users[i], days[i], owners[i] = fmt.Sprint("x", i), "2026-11-28", fmt.Sprint("m", i)
		limits[i], expires[i] = 10, time.Now().Add(24*time.Hour)
	}
	if plan := explain(s.q(countDailySQL), users, days, owners, limits, expires); strings.Contains(plan, "Seq Scan on policy_daily") {
		t.Fatalf("the daily count reads every count of the day:\n%s", plan)
	}
}
