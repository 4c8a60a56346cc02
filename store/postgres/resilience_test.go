package postgres_test

import (
	"fmt"
	"net/url"
	"testing"
	"time"

	"github.com/heraldhq/herald/heraldtype"
	"github.com/heraldhq/herald/store"
	"github.com/heraldhq/herald/store/postgres/pgtest"
)

// TestConnectionDrop kills every backend of the store between calls and
// checks that the store keeps working (the pool dials again) and that a
// Complete that failed on a dead connection applied nothing, so the
// dispatcher's retry of the flush applies the batch exactly once.
func TestConnectionDrop(t *testing.T) {
	t.Parallel()
	dsn, schema := pgtest.NewSchema(t)
	// An application_name of its own, so the test kills only its backends.
	u, err := url.Parse(dsn)
	if err != nil {
		t.Fatal(err)
	}
	app := "herald_drop_" + schema
	q := u.Query()
	q.Set("application_name", app)
	u.RawQuery = q.Encode()
	s := openStore(t, u.String(), schema)
	if err := s.Migrate(t.Context()); err != nil {
		t.Fatal(err)
	}
	seed(t, s)
	ctx := t.Context()
	admin := newStore(t) // a connection that survives the kills
	kill := func() {
		t.Helper()
		_, err := admin.Pool().Exec(ctx, `SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = $1`, app)
		if err != nil {
			t.Fatal(err)
		}
	}
	// retry calls fn until it succeeds; a few failures, one per dead
	// pooled connection, are expected right after a kill.
	retry := func(what string, fn func() error) {
		t.Helper()
		deadline := time.Now().Add(10 * time.Second)
		for {
			err := fn()
			if err == nil {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s still failing after the connections were killed: %v", what, err)
			}
		}
	}
	var ids []string
	for i := range 20 {
		ids = append(ids, fmt.Sprint("n", i))
	}
	kill()
	retry("Enqueue", func() error {
		_, err := s.Enqueue(ctx, trigger(ids...))
		if heraldtype.ErrorCode(err) == heraldtype.ECONFLICT {
			return nil // an earlier try committed but lost its answer
		}
		return err
	})
	kill()
	var jobs []heraldtype.Job
	retry("Claim", func() error {
		js, err := s.Claim(ctx, store.ClaimParams{Owner: "w", Now: now, LeaseUntil: now.Add(time.Minute), Limit: 100})
		jobs = append(jobs, js...)
		return err
	})
	if len(jobs) != 20 {
		t.Fatalf("claimed %d, want 20", len(jobs))
	}
	outcomes := make([]store.Outcome, len(jobs))
	for i, j := range jobs {
		outcomes[i] = store.Outcome{DeliveryID: j.Delivery.ID, Owner: "w", Attempt: j.Delivery.Attempt,
			At: now.Add(time.Second)}.To(store.Sent{ProviderMessageID: "m"})
	}
	kill()
	total := 0
	retry("Complete", func() error {
		n, err := s.Complete(ctx, outcomes)
		if err != nil {
			// All or nothing: a failed flush left every delivery leased,
			// unless only the COMMIT's answer was lost.
			st, serr := admin.CountDeliveries(ctx)
			if serr != nil {
				t.Fatal(serr)
			}
			if st[heraldtype.StateLeased] != 0 && st[heraldtype.StateLeased] != 20 {
				t.Fatalf("a failed Complete applied part of its batch: %v", st)
			}
		}
		total += n
		return err
	})
	if total > 20 {
		t.Fatalf("Complete applied %d outcomes of 20", total)
	}
	stats, err := s.CountDeliveries(ctx)
	if err != nil || stats[heraldtype.StateSent] != 20 {
		t.Fatalf("stats = %v, %v; want 20 sent", stats, err)
	}
	for _, id := range ids {
		ds, err := s.ListNotificationDeliveries(ctx, id)
		if err != nil || len(ds) != 1 || len(ds[0].Attempts) != 1 {
			t.Fatalf("deliveries of %s = %+v, %v; want one with one attempt", id, ds, err)
		}
	}
	if n, err := s.Complete(ctx, outcomes); err != nil || n != 0 {
		t.Fatalf("replayed flush = %d, %v; want 0", n, err)
	}
}
