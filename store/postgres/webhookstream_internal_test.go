package postgres

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/heraldhq/herald/heraldtype"
	"github.com/heraldhq/herald/store"
	"github.com/heraldhq/herald/store/postgres/pgtest"
)

// Issue 35 item 5: the stream reads an event only once every transaction
// older than its own has ended. A writes its event first (the lower seq)
// and commits last; B writes and commits in between. A cursor on seq
// alone would send B's event, pass A's seq, and never send A's: lost.
// The stream sends neither while A runs, then A's and B's in the order of
// their transactions.
func TestStreamWaitsForOlderTransactions(t *testing.T) {
	// Three connections at once: A's open transaction, B's insert, the
	// claim.
	s, now := storeWithEndpoint(t, 4)
	ctx := t.Context()
	insert := s.q(`INSERT INTO {s}.webhook_events (endpoint_id, event_id, type, ordering_key, payload, occurred_at)
VALUES ('wh', $1, 'test.event', $1, '{}', $2)`)
	a, err := s.pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Rollback(ctx) //nolint:errcheck // committed below
	if _, err := a.Exec(ctx, insert, "from-a", now); err != nil {
		t.Fatal(err)
	}
	if _, err := s.pool.Exec(ctx, insert, "from-b", now); err != nil {
		t.Fatal(err)
	}
	claim := func() []string {
		t.Helper()
		st, err := s.ClaimWebhookStream(ctx, store.WebhookStreamClaim{Owner: "w", Now: now, LeaseUntil: now.Add(time.Minute), Limit: 10})
		if err != nil {
			t.Fatal(err)
		}
		if st == nil {
			return nil
		}
		var ids []string
		for _, e := range st.Events {
			ids = append(ids, e.EventID)
		}
		if _, _, err := s.AdvanceWebhookStream(ctx, store.WebhookStreamAdvance{EndpointID: "wh", Owner: "w", At: now, Sent: true,
			Through: st.Events[len(st.Events)-1].Position()}); err != nil {
			t.Fatal(err)
		}
		return ids
	}
	if got := claim(); got != nil {
		t.Fatalf("while the older transaction runs the stream read %v", got)
	}
	if err := a.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	var got []string
	for deadline := time.Now().Add(10 * time.Second); len(got) < 2 && time.Now().Before(deadline); {
		got = append(got, claim()...)
	}
	if !slices.Equal(got, []string{"from-a", "from-b"}) {
		t.Fatalf("after the commit the stream read %v, want from-a then from-b", got)
	}
}

// Issue 35 item 5: the stream's claim and read start their index scan at
// the endpoint's cursor, whatever the log holds behind it. With the
// cursor compared as one row over (endpoint_id, txid, seq), PostgreSQL
// scanned from the endpoint's first event and filtered, so each page
// cost the whole retained log (4.5 ms behind 60,000 events). Both
// statements run here as the store runs them (indexPlans, generic plans)
// over 20,000 events with the cursor 10 from the end; the buffers they
// touch must not grow with the log.
func TestStreamReadStartsAtTheCursor(t *testing.T) {
	s, now := storeWithEndpoint(t, 2)
	ctx := t.Context()
	// 100 transactions of 200 events, as the outcomes write them.
	const events, perTx = 20000, 200
	for i := 0; i < events; i += perTx {
		if _, err := s.pool.Exec(ctx, s.q(`INSERT INTO {s}.webhook_events (endpoint_id, event_id, type, ordering_key, payload, occurred_at)
SELECT 'wh', 'evt' || i, 'test.event', 'k' || (i % 100), '{"padding": "`+strings.Repeat("x", 150)+`"}', $1
FROM generate_series($2::int, $3::int) i`), now, i, i+perTx-1); err != nil {
			t.Fatal(err)
		}
	}
	var txid string
	var seq int64
	if err := s.pool.QueryRow(ctx, s.q(`SELECT txid::text, seq FROM {s}.webhook_events ORDER BY txid, seq OFFSET $1 LIMIT 1`),
		events-11).Scan(&txid, &seq); err != nil {
		t.Fatal(err)
	}
	if _, err := s.pool.Exec(ctx, s.q(`UPDATE {s}.webhook_endpoints SET cursor_txid = $1::text::xid8, cursor_seq = $2`), txid, seq); err != nil {
		t.Fatal(err)
	}
	if _, err := s.pool.Exec(ctx, s.q(`ANALYZE {s}.webhook_events`)); err != nil {
		t.Fatal(err)
	}
	buffers := func(sql string, args ...any) (rows, blocks float64) {
		t.Helper()
		tx, err := s.pool.Begin(ctx)
		if err != nil {
			t.Fatal(err)
		}
		defer tx.Rollback(ctx) //nolint:errcheck // only explained
		if _, err := tx.Exec(ctx, indexPlans); err != nil {
			t.Fatal(err)
		}
		var plan []map[string]any
		if err := tx.QueryRow(ctx, `EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) `+s.q(sql), args...).Scan(&plan); err != nil {
			t.Fatal(err)
		}
		top := plan[0]["Plan"].(map[string]any)
		return top["Actual Rows"].(float64), top["Shared Hit Blocks"].(float64) + top["Shared Read Blocks"].(float64)
	}
	// Without the fix the read touched about 330 blocks here.
	if rows, blocks := buffers(streamReadSQL, "wh", txid, seq, 50); rows != 10 || blocks > 30 {
		t.Errorf("the stream read returned %v rows touching %v blocks; want 10 rows and at most 30 blocks", rows, blocks)
	}
	if rows, blocks := buffers(streamClaimSQL, now, "w", now.Add(time.Minute), []string{}); rows != 1 || blocks > 30 {
		t.Errorf("the stream claim returned %v rows touching %v blocks; want 1 row and at most 30 blocks", rows, blocks)
	}
}

// storeWithEndpoint is a migrated store in a schema of its own, with
// maxConns connections and the enabled webhook endpoint "wh" subscribed to
// every type, created at the time it returns.
func storeWithEndpoint(t *testing.T, maxConns int32) (*Store, time.Time) {
	t.Helper()
	dsn, schema := pgtest.NewSchema(t)
	ctx := t.Context()
	s, err := Open(ctx, dsn, Options{Schema: schema, MaxConns: maxConns})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	if err := s.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	now := time.Date(2026, 3, 14, 15, 9, 26, 0, time.UTC)
	if err := s.CreateWebhookEndpoint(ctx, store.WebhookEndpoint{WebhookEndpoint: heraldtype.WebhookEndpoint{ID: "wh",
		URL: "https://example.com/hook", Enabled: true, CreatedAt: now, UpdatedAt: now}, Secret: "whsec_x"}); err != nil {
		t.Fatal(err)
	}
	return s, now
}
