package postgres

import (
	"context"
	"testing"
	"time"

	"github.com/heraldhq/herald/heraldtype"
)

// TestUserDeleteWaitsForTrigger: the notifications have no foreign key to
// users (migration 0019); the enqueue's users check takes the KEY SHARE
// lock the key used to take. A user deleted out of band while a trigger
// for them is uncommitted therefore waits for its COMMIT, then takes the
// trigger's notification with it (the users_delete_notifications
// trigger, ON DELETE CASCADE's replacement): no notification outlives its
// user.
func TestUserDeleteWaitsForTrigger(t *testing.T) {
	s := batchStore(t, 1, 1)
	ctx := t.Context()
	tx, err := s.pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(context.Background())
	if _, err := s.EnqueueTx(ctx, tx, batchTrigger("n1", "u1", "")); err != nil {
		t.Fatal(err)
	}

	deleted := make(chan error, 1)
	go func() {
		_, err := s.pool.Exec(ctx, s.q(`DELETE FROM {s}.users WHERE id = 'u1'`))
		deleted <- err
	}()
	select {
	case err := <-deleted:
		t.Fatalf("the user was deleted (err %v) while a trigger for them was uncommitted", err)
	case <-time.After(300 * time.Millisecond):
	}
	if err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	if err := <-deleted; err != nil {
		t.Fatal(err)
	}
	var n int
	if err := s.pool.QueryRow(ctx, s.q(`SELECT count(*) FROM {s}.notifications WHERE user_id = 'u1'`)).Scan(&n); err != nil {
		t.Fatal(err)
	}
	if n != 0 {
		t.Fatalf("%d notifications of the deleted user are left, want 0", n)
	}
}

// TestUserDeleteTakesTheNotificationsRows: inbox items, escalation steps,
// deliveries and attempt rows have no foreign key to their notification
// (migrations 0007, 0046); a user deleted out of band still takes them
// with their notifications, and nobody else's.
func TestUserDeleteTakesTheNotificationsRows(t *testing.T) {
	s := batchStore(t, 1, 2)
	ctx := t.Context()
	for _, u := range []string{"u1", "u2"} {
		p := batchTrigger("n-"+u, u, "")
		p.Notifications[0].Channels = []heraldtype.Channel{heraldtype.ChannelInApp}
		p.Escalate = []heraldtype.EscalationStep{{After: time.Hour, Unless: heraldtype.ReceiptRead,
			Channels: []heraldtype.Channel{heraldtype.ChannelPush}}}
		if _, err := s.Enqueue(ctx, p); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Enqueue(ctx, batchTrigger("p-"+u, u, "")); err != nil { // a pending push
			t.Fatal(err)
		}
	}
	if _, err := s.pool.Exec(ctx, s.q(`INSERT INTO {s}.delivery_attempts (delivery_id, attempt, at, outcome)
		SELECT id, 1, now(), 'failed' FROM {s}.deliveries`)); err != nil {
		t.Fatal(err)
	}
	type rows struct{ items, steps, deliveries, attempts int }
	count := func(user string) (r rows) {
		t.Helper()
		if err := s.pool.QueryRow(ctx, s.q(`SELECT (SELECT count(*) FROM {s}.inbox_items WHERE user_id = $1),
			(SELECT count(*) FROM {s}.escalations WHERE user_id = $1),
			(SELECT count(*) FROM {s}.deliveries WHERE user_id = $1),
			(SELECT count(*) FROM {s}.delivery_attempts a JOIN {s}.deliveries d ON d.id = a.delivery_id WHERE d.user_id = $1)`),
			user).Scan(&r.items, &r.steps, &r.deliveries, &r.attempts); err != nil {
			t.Fatal(err)
		}
		return r
	}
	before := count("u1")
	if before.items == 0 || before.steps == 0 || before.deliveries < 2 || before.attempts < 2 {
		t.Fatalf("before the delete: %+v; want some of each", before)
	}
	other := count("u2")
	if _, err := s.pool.Exec(ctx, s.q(`DELETE FROM {s}.users WHERE id = 'u1'`)); err != nil {
		t.Fatal(err)
	}
	if r := count("u1"); r != (rows{}) {
		t.Fatalf("the deleted user's rows are left: %+v, want none", r)
	}
	var orphans int
	if err := s.pool.QueryRow(ctx, s.q(`SELECT count(*) FROM {s}.delivery_attempts a
		WHERE NOT EXISTS (SELECT 1 FROM {s}.deliveries d WHERE d.id = a.delivery_id)`)).Scan(&orphans); err != nil || orphans != 0 {
		t.Fatalf("%d attempt rows outlived their deliveries (%v), want none", orphans, err)
	}
	if r := count("u2"); r != other {
		t.Fatalf("the other user has %+v after the delete, %+v before", r, other)
	}
}
