package postgres

import (
	"context"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/heraldhq/herald/heraldtype"
	"github.com/heraldhq/herald/store/postgres/pgtest"
)

// TestEnqueueUserCreatedMidTrigger: a user created while a trigger to it
// is between its users check and its inserts. The check sees no user; the
// inserts would see one. The caller's answer and the database must agree
// (S4.1): told ENOTFOUND, nothing was written; told nothing, the
// notification is there. Before migration 0009 the check failed only in
// Herald, the pipelined inserts and COMMIT went on, and the caller was
// told ENOTFOUND for a committed trigger (retrying it would notify twice).
//
// A SHARE lock on notifications holds the trigger's INSERT, after its
// users check ran, while the user is created and committed. The store has
// one connection, warmed by a first trigger: its statements are prepared,
// so the lock is taken when the INSERT runs, not when it is parsed (which
// pgx would do for the whole pipeline before running any of it).
func TestEnqueueUserCreatedMidTrigger(t *testing.T) {
	dsn, schema := pgtest.NewSchema(t)
	ctx := t.Context()
	s, err := Open(ctx, dsn, Options{Schema: schema, MaxConns: 1, EnqueueConcurrency: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if err := s.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := s.UpsertUser(ctx, heraldtype.User{ID: "u1"}, batchNow); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Enqueue(ctx, batchTrigger("n-warm", "u1", "")); err != nil {
		t.Fatal(err)
	}
	other := func() *pgx.Conn {
		c, err := pgx.Connect(ctx, dsn)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close(context.Background()) })
		return c
	}
	holder, db := other(), other()
	hold, err := holder.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer hold.Rollback(context.Background())
	if _, err := hold.Exec(ctx, s.q(`LOCK TABLE {s}.notifications IN SHARE MODE`)); err != nil {
		t.Fatal(err)
	}
	answer := enqueueAsync(ctx, s, batchTrigger("n-late", "late", ""))

	// Wait until the trigger has returned or waits on the lock.
	var got *enqueueAnswer
	deadline := time.Now().Add(10 * time.Second)
	for got == nil {
		select {
		case a := <-answer:
			got = &a
			continue
		default:
		}
		var waiting bool
		if err := db.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM pg_stat_activity
			WHERE datname = current_database() AND wait_event_type = 'Lock' AND query LIKE '%notifications%')`).Scan(&waiting); err != nil {
			t.Fatal(err)
		}
		if waiting {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the trigger neither returned nor waited on the notifications lock")
		}
		time.Sleep(5 * time.Millisecond)
	}
	if _, err := db.Exec(ctx, s.q(`INSERT INTO {s}.users (id, timezone, created_at, updated_at) VALUES ('late', 'UTC', now(), now())`)); err != nil {
		t.Fatal(err)
	}
	if err := hold.Rollback(ctx); err != nil {
		t.Fatal(err)
	}
	if got == nil {
		a := <-answer
		got = &a
	}

	var written int
	if err := db.QueryRow(ctx, s.q(`SELECT count(*) FROM {s}.notifications WHERE id = 'n-late'`)).Scan(&written); err != nil {
		t.Fatal(err)
	}
	switch {
	case got.err == nil && written != 1:
		t.Fatalf("the trigger succeeded, but %d notifications were written", written)
	case got.err != nil && written != 0:
		t.Fatalf("the trigger failed (%v), but its notification was committed", got.err)
	case got.err != nil && (heraldtype.ErrorCode(got.err) != heraldtype.ENOTFOUND || heraldtype.ErrorMessage(got.err) != `user "late" not found`):
		t.Fatalf("the trigger failed with %v, want ENOTFOUND naming the user", got.err)
	}
	// The store is usable afterwards, and the user is known now.
	if _, err := s.Enqueue(ctx, batchTrigger("n-later", "late", "")); err != nil {
		t.Fatal(err)
	}
}
