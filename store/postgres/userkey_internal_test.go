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

// TestUserDeleteTakesInboxAndEscalations: inbox items and escalation
// steps have no foreign key to their notification (migration 0046); a
// user deleted out of band still takes them with their notifications,
// and nobody else's.
func TestUserDeleteTakesInboxAndEscalations(t *testing.T) {
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
	}
	count := func(user string) (items, steps int) {
		t.Helper()
		if err := s.pool.QueryRow(ctx, s.q(`SELECT (SELECT count(*) FROM {s}.inbox_items WHERE user_id = $1),
			(SELECT count(*) FROM {s}.escalations WHERE user_id = $1)`), user).Scan(&items, &steps); err != nil {
			t.Fatal(err)
		}
		return items, steps
	}
	if items, steps := count("u1"); items != 1 || steps != 1 {
		t.Fatalf("before the delete: %d inbox items, %d escalation steps; want 1 and 1", items, steps)
	}
	if _, err := s.pool.Exec(ctx, s.q(`DELETE FROM {s}.users WHERE id = 'u1'`)); err != nil {
		t.Fatal(err)
	}
	if items, steps := count("u1"); items != 0 || steps != 0 {
		t.Fatalf("the deleted user's %d inbox items and %d escalation steps are left, want none", items, steps)
	}
	if items, steps := count("u2"); items != 1 || steps != 1 {
		t.Fatalf("the other user kept %d inbox items and %d escalation steps, want 1 and 1", items, steps)
	}
}
