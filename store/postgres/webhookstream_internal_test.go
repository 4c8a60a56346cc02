package postgres

import (
	"slices"
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
	dsn, schema := pgtest.NewSchema(t)
	ctx := t.Context()
	s, err := Open(ctx, dsn, Options{Schema: schema, MaxConns: 4})
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
