package postgres_test

import (
	"context"
	"database/sql"
	"testing"
	"time"

	"github.com/heraldhq/herald/heraldtype"
	"github.com/heraldhq/herald/store"
	"github.com/heraldhq/herald/store/postgres"
	"github.com/heraldhq/herald/store/postgres/pgtest"
)

// inApp is a trigger of in-app notifications, one per user given.
func inApp(ids []string, users ...string) store.EnqueueParams {
	p := trigger(ids...)
	for i := range p.Notifications {
		p.Notifications[i].UserID = users[i]
		p.Notifications[i].Channels = []heraldtype.Channel{heraldtype.ChannelInApp}
	}
	return p
}

// TestInboxEvents checks the real-time inbox across instances (S3.6): an
// in-app item written on one instance names its user on another
// instance's InboxEvents, at commit and only then; the listener is shared
// with Notifications, a consumer that does not read blocks nobody, and a
// reconnect is announced with "" (any user may have new items).
func TestInboxEvents(t *testing.T) {
	t.Parallel()
	dsn, schema := pgtest.NewSchema(t)
	a, b := openStore(t, dsn, schema), openStore(t, dsn, schema)
	if err := a.Migrate(t.Context()); err != nil {
		t.Fatal(err)
	}
	seed(t, b)
	if _, err := b.UpsertUser(t.Context(), heraldtype.User{ID: "u2", Timezone: "UTC"}, now); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	events := a.InboxEvents(ctx)
	stalled := a.InboxEvents(ctx) // never read until the end
	wake := a.Notifications(ctx)
	next := func(what string) string {
		t.Helper()
		select {
		case u, ok := <-events:
			if !ok {
				t.Fatalf("%s: channel closed", what)
			}
			return u
		case <-time.After(10 * time.Second):
			t.Fatalf("%s: no event within 10 s", what)
		}
		return ""
	}
	if u := next("first connect"); u != "" {
		t.Fatalf("first event = %q, want \"\" (listening)", u)
	}
	if _, err := b.Enqueue(t.Context(), inApp([]string{"n1"}, "u1")); err != nil {
		t.Fatal(err)
	}
	if u := next("in-app enqueue on another instance"); u != "u1" {
		t.Fatalf("event = %q, want u1", u)
	}
	// One trigger for two users: each named once.
	if _, err := b.Enqueue(t.Context(), inApp([]string{"n2", "n3", "n4"}, "u1", "u2", "u1")); err != nil {
		t.Fatal(err)
	}
	got := map[string]bool{next("two users"): true, next("two users"): true}
	if !got["u1"] || !got["u2"] {
		t.Fatalf("events = %v, want u1 and u2", got)
	}

	// EnqueueTx on a database/sql transaction: nothing on rollback, the
	// user at commit.
	db, err := sql.Open("pgx", dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	for _, commit := range []bool{false, true} {
		tx, err := db.BeginTx(t.Context(), nil)
		if err != nil {
			t.Fatal(err)
		}
		user, id := "u1", "n-rolled-back"
		if commit {
			user, id = "u2", "n-committed"
		}
		res, err := b.EnqueueTx(t.Context(), tx, inApp([]string{id}, user))
		if err != nil || len(res.Inbox) != 1 || res.Inbox[0].UserID != user || !res.Inbox[0].CreatedAt.Equal(now) {
			t.Fatalf("EnqueueTx = %+v, %v", res, err)
		}
		end := tx.Rollback
		if commit {
			end = tx.Commit
		}
		if err := end(); err != nil {
			t.Fatal(err)
		}
	}
	if u := next("EnqueueTx committed after one rolled back"); u != "u2" {
		t.Fatalf("event = %q, want u2 (the rolled back trigger must not notify)", u)
	}

	// The deliveries wake-up shares the connection and is not blocked by
	// the stalled inbox consumer.
	select {
	case <-wake: // the connect signal
	case <-time.After(10 * time.Second):
		t.Fatal("no connect signal on Notifications")
	}
	if _, err := b.Enqueue(t.Context(), trigger("n5")); err != nil {
		t.Fatal(err)
	}
	select {
	case <-wake:
	case <-time.After(10 * time.Second):
		t.Fatal("push enqueue did not wake Notifications")
	}

	// Kill the one listener backend: it comes back and says so.
	tag, err := b.Pool().Exec(t.Context(), `SELECT pg_terminate_backend(pid) FROM pg_stat_activity
WHERE application_name = $1`, postgres.ListenerApplicationName(schema))
	if err != nil || tag.RowsAffected() != 1 {
		t.Fatalf("terminate listener: %v (%d backends, want 1 shared)", err, tag.RowsAffected())
	}
	if u := next("reconnect"); u != "" {
		t.Fatalf("event after reconnect = %q, want \"\"", u)
	}
	if _, err := b.Enqueue(t.Context(), inApp([]string{"n6"}, "u2")); err != nil {
		t.Fatal(err)
	}
	if u := next("enqueue after the reconnect"); u != "u2" {
		t.Fatalf("event = %q, want u2", u)
	}

	// The stalled consumer kept everything, coalesced into "" (its first
	// pending event said: look at every user).
	select {
	case u := <-stalled:
		if u != "" {
			t.Fatalf("stalled consumer's first event = %q, want \"\"", u)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("stalled consumer got nothing")
	}

	cancel()
	for range events {
	}
	for range stalled {
	}
	for range wake {
	}
}

// TestInboxNotifyPerSchema: in-app items in another schema do not reach
// this schema's consumers.
func TestInboxNotifyPerSchema(t *testing.T) {
	t.Parallel()
	mine, other := newStore(t), newStore(t)
	seed(t, mine)
	if _, err := other.UpsertUser(t.Context(), heraldtype.User{ID: "x", Timezone: "UTC"}, now); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	events := mine.InboxEvents(ctx)
	if u := <-events; u != "" {
		t.Fatalf("first event = %q, want \"\"", u)
	}
	if _, err := other.Enqueue(ctx, inApp([]string{"x1"}, "x")); err != nil {
		t.Fatal(err)
	}
	if _, err := mine.Enqueue(ctx, inApp([]string{"m1"}, "u1")); err != nil {
		t.Fatal(err)
	}
	// Notifications arrive in commit order: had the other schema's
	// reached this channel, "x" would come first.
	select {
	case u := <-events:
		if u != "u1" {
			t.Fatalf("event = %q, want u1 (of this schema)", u)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("no event for this schema's enqueue")
	}
}

// TestInboxEventsWhenDue (issue 22): an in-app item of a notification
// scheduled for later is announced when Complete writes it, at its due
// time, on another instance — not when it was triggered.
func TestInboxEventsWhenDue(t *testing.T) {
	t.Parallel()
	dsn, schema := pgtest.NewSchema(t)
	a, b := openStore(t, dsn, schema), openStore(t, dsn, schema)
	if err := a.Migrate(t.Context()); err != nil {
		t.Fatal(err)
	}
	seed(t, b)
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	events := a.InboxEvents(ctx)
	if u := <-events; u != "" {
		t.Fatalf("first event = %q, want \"\"", u)
	}
	p := inApp([]string{"later"}, "u1")
	p.Notifications[0].SendAt = now.Add(time.Hour)
	if res, err := b.Enqueue(t.Context(), p); err != nil || len(res.Inbox) != 0 {
		t.Fatalf("Enqueue = %+v, %v; want no item before send_at", res, err)
	}
	jobs, err := b.Claim(t.Context(), store.ClaimParams{Owner: "w", Now: now.Add(time.Hour),
		LeaseUntil: now.Add(time.Hour + time.Minute), Limit: 10})
	if err != nil || len(jobs) != 1 {
		t.Fatalf("Claim at send_at = %d jobs, %v", len(jobs), err)
	}
	j := jobs[0]
	o := store.Outcome{DeliveryID: j.Delivery.ID, Owner: "w", Attempt: j.Delivery.Attempt, At: now.Add(time.Hour)}.To(store.InboxSent{})
	if n, err := b.Complete(t.Context(), []store.Outcome{o}); err != nil || n != 1 {
		t.Fatalf("Complete = %d, %v", n, err)
	}
	select {
	case u := <-events:
		if u != "u1" {
			t.Fatalf("event = %q, want u1", u)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("no event when the item was written")
	}
}

// TestInboxEventsOfMarks: a change of a user's read-state on one instance
// — seen, read, read-all, click, archive — names the user on another
// instance's InboxEvents after its commit, so that instance's streams
// send their new counts (issue 35 item 1); a mark that changed nothing
// (or failed) names nobody.
func TestInboxEventsOfMarks(t *testing.T) {
	t.Parallel()
	dsn, schema := pgtest.NewSchema(t)
	a, b := openStore(t, dsn, schema), openStore(t, dsn, schema)
	if err := a.Migrate(t.Context()); err != nil {
		t.Fatal(err)
	}
	seed(t, b)
	res, err := b.Enqueue(t.Context(), inApp([]string{"n1", "n2", "n3"}, "u1", "u1", "u1"))
	if err != nil || len(res.Inbox) != 3 {
		t.Fatalf("enqueue: %+v %v", res.Inbox, err)
	}
	ids := []int64{res.Inbox[0].ID, res.Inbox[1].ID, res.Inbox[2].ID}
	events := a.InboxEvents(t.Context())
	// drain takes what is there until the channel is quiet for a while.
	drain := func(quiet time.Duration) []string {
		var got []string
		for {
			select {
			case u := <-events:
				got = append(got, u)
			case <-time.After(quiet):
				return got
			}
		}
	}
	drain(time.Second) // the listener's "" and the enqueue's u1
	expect := func(what string, mark func() error) {
		t.Helper()
		if err := mark(); err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		select {
		case u := <-events:
			if u != "u1" {
				t.Fatalf("%s: event %q, want u1", what, u)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("%s: no event on the other instance within 10 s", what)
		}
	}
	// Failure paths first: a mark of nothing, another user's item, an
	// unknown item.
	if n, err := b.MarkInboxSeen(t.Context(), "u2", ids, now); err != nil || n != 0 {
		t.Fatalf("another user's seen: %d %v", n, err)
	}
	if err := b.ArchiveInboxItem(t.Context(), "u1", 1<<40, now); heraldtype.ErrorCode(err) != heraldtype.ENOTFOUND {
		t.Fatalf("archive of an unknown item: %v", err)
	}
	if got := drain(500 * time.Millisecond); len(got) != 0 {
		t.Fatalf("marks that changed nothing named %q", got)
	}
	expect("seen", func() error { _, err := b.MarkInboxSeen(t.Context(), "u1", ids[:1], now); return err })
	expect("read", func() error { _, err := b.MarkInboxRead(t.Context(), "u1", ids[:1], now); return err })
	expect("click", func() error { return b.ClickInboxItem(t.Context(), "u1", ids[1], "", now) })
	expect("archive", func() error { return b.ArchiveInboxItem(t.Context(), "u1", ids[2], now) })
	expect("read-all", func() error { _, err := b.MarkAllInboxRead(t.Context(), "u1", now); return err })
}
