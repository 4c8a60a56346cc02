package postgres

import (
	"context"
	"testing"
	"time"
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
