package postgres_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/heraldhq/herald/heraldtype"
	"github.com/heraldhq/herald/store"
	"github.com/heraldhq/herald/store/postgres"
	"github.com/heraldhq/herald/store/postgres/pgtest"
)

// Deliveries and attempt rows have no foreign keys (migration 0007):
// retention must delete them itself, leaving no orphan behind, and keep
// the rows of a notification it does not prune.
func TestPruneLeavesNoOrphans(t *testing.T) {
	t.Parallel()
	dsn, schema := pgtest.NewSchema(t)
	s := openStore(t, dsn, schema)
	ctx := t.Context()
	if err := s.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	seed(t, s)
	if _, err := s.Enqueue(ctx, trigger("old1", "old2", "kept")); err != nil {
		t.Fatal(err)
	}
	jobs, err := s.Claim(ctx, store.ClaimParams{Owner: "w", Now: now, LeaseUntil: now.Add(time.Minute), Limit: 10})
	if err != nil || len(jobs) != 3 {
		t.Fatalf("Claim = %d jobs, %v", len(jobs), err)
	}
	var os []store.Outcome
	for _, j := range jobs {
		if j.Delivery.NotificationID != "kept" {
			os = append(os, store.Outcome{DeliveryID: j.Delivery.ID, Owner: "w", Attempt: j.Delivery.Attempt,
				At: now.Add(time.Second)}.To(store.Sent{ProviderMessageID: "m"}))
		}
	}
	if n, err := s.Complete(ctx, os); err != nil || n != 2 {
		t.Fatalf("Complete = %d, %v", n, err)
	}
	if n, err := s.PruneFinished(ctx, now.Add(time.Hour), 100); err != nil || n != 2 {
		t.Fatalf("PruneFinished = %d, %v; want 2", n, err)
	}
	count := func(query string) int {
		t.Helper()
		var n int
		if err := s.Pool().QueryRow(ctx, fmt.Sprintf(query, `"`+schema+`"`)).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	if n := count(`SELECT count(*) FROM %s.deliveries`); n != 1 {
		t.Fatalf("%d deliveries left, want the unfinished one", n)
	}
	if n := count(`SELECT count(*) FROM %[1]s.delivery_attempts a
		WHERE NOT EXISTS (SELECT 1 FROM %[1]s.deliveries d WHERE d.id = a.delivery_id)`); n != 0 {
		t.Fatalf("%d orphan attempt rows", n)
	}
	if n := count(`SELECT count(*) FROM %[1]s.deliveries d
		WHERE NOT EXISTS (SELECT 1 FROM %[1]s.notifications n WHERE n.id = d.notification_id)`); n != 0 {
		t.Fatalf("%d orphan deliveries", n)
	}
}

// A pipelined enqueue that fails mid-transaction (an unknown user, a key
// taken with another request) rolls back on its own connection and hands
// it back idle: nothing of it is written, and the pool reuses the
// connection instead of dialing a new one.
func TestFailedEnqueueRollsBack(t *testing.T) {
	t.Parallel()
	dsn, schema := pgtest.NewSchema(t)
	s, err := postgres.Open(t.Context(), dsn, postgres.Options{Schema: schema, MaxConns: 1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	ctx := t.Context()
	if err := s.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	seed(t, s)
	keyed := trigger("n1")
	keyed.IdempotencyKey, keyed.RequestHash = "k1", "h1"
	if _, err := s.Enqueue(ctx, keyed); err != nil {
		t.Fatal(err)
	}
	dials := s.Pool().Stat().NewConnsCount()

	ghost := trigger("n2", "n3")
	ghost.Notifications[1].UserID = "ghost"
	_, err = s.Enqueue(ctx, ghost)
	if heraldtype.ErrorCode(err) != heraldtype.ENOTFOUND || !strings.Contains(err.Error(), `"ghost"`) {
		t.Fatalf("Enqueue with an unknown user = %v, want not_found naming it", err)
	}
	other := trigger("n4")
	other.IdempotencyKey, other.RequestHash = "k1", "h2"
	if _, err := s.Enqueue(ctx, other); heraldtype.ErrorCode(err) != heraldtype.ECONFLICT {
		t.Fatalf("Enqueue with a key taken by another request = %v, want conflict", err)
	}
	if res, err := s.Enqueue(ctx, keyed); err != nil || !res.Replayed || res.Notifications[0].ID != "n1" {
		t.Fatalf("replayed Enqueue = %+v, %v", res, err)
	}
	for _, id := range []string{"n2", "n3", "n4"} {
		if _, err := s.GetNotification(ctx, id); heraldtype.ErrorCode(err) != heraldtype.ENOTFOUND {
			t.Fatalf("notification %s of a failed enqueue: %v", id, err)
		}
	}
	if got := s.Pool().Stat().NewConnsCount(); got != dials {
		t.Fatalf("the pool dialed %d new connections after failed enqueues; want the one reused", got-dials)
	}
}
