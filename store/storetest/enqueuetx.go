package storetest

import (
	"slices"
	"testing"

	"github.com/heraldhq/herald/heraldtype"
	"github.com/heraldhq/herald/store"
)

// testEnqueueTx covers the transactional outbox (S4.1): a trigger enqueued
// in the caller's transaction exists if and only if that transaction
// commits. While a caller's transaction is open the tests only read from
// the store: on SQLite the transaction holds the one write connection.
func testEnqueueTx(t *testing.T, h Harness) {
	// begin opens a caller's transaction that is rolled back at cleanup if
	// the test did not end it.
	begin := func(f *fixture) (tx any, commit, rollback func() error) {
		tx, c, r := h.BeginTx(f.t, f.s)
		ended := false
		f.t.Cleanup(func() {
			if !ended {
				r()
			}
		})
		return tx, func() error { ended = true; return c() }, func() error { ended = true; return r() }
	}
	setup := func(t *testing.T) *fixture {
		f := newFixture(t, h.New)
		f.user("u1")
		f.device("u1", "d1", "android")
		return f
	}
	t.Run("Commit", func(t *testing.T) {
		t.Parallel()
		f := setup(t)
		p := params(f.notification("u1"))
		p.IdempotencyKey, p.RequestHash = "order-1", "h"
		tx, commit, _ := begin(f)
		res, err := f.s.EnqueueTx(f.ctx, tx, p)
		if err != nil {
			t.Fatalf("EnqueueTx: %v", err)
		}
		if res.Replayed || len(res.Notifications) != 1 || res.Notifications[0].Deliveries != 1 {
			t.Fatalf("EnqueueTx = %+v", res)
		}
		// Not visible outside the transaction before it commits.
		_, err = f.s.GetNotification(f.ctx, p.Notifications[0].ID)
		wantCode(t, err, heraldtype.ENOTFOUND)
		if err := commit(); err != nil {
			t.Fatalf("commit: %v", err)
		}
		if d := f.delivery(p.Notifications[0].ID); d.State != heraldtype.StatePending {
			t.Fatalf("committed delivery = %+v", d)
		}
		again := params(f.notification("u1"))
		again.IdempotencyKey, again.RequestHash = "order-1", "h"
		if r := f.enqueue(again); !r.Replayed || !slices.Equal(r.Notifications, res.Notifications) {
			t.Fatalf("enqueue with the committed key = %+v, want a replay of %+v", r, res)
		}
	})
	t.Run("RollbackLeavesNothing", func(t *testing.T) {
		t.Parallel()
		f := setup(t)
		p := params(f.notification("u1"), f.notification("u1"))
		p.IdempotencyKey, p.RequestHash = "order-2", "h"
		tx, _, rollback := begin(f)
		if _, err := f.s.EnqueueTx(f.ctx, tx, p); err != nil {
			t.Fatalf("EnqueueTx: %v", err)
		}
		if err := rollback(); err != nil {
			t.Fatalf("rollback: %v", err)
		}
		for _, n := range p.Notifications {
			_, err := f.s.GetNotification(f.ctx, n.ID)
			wantCode(t, err, heraldtype.ENOTFOUND)
			_, err = f.s.ListNotificationDeliveries(f.ctx, n.ID)
			wantCode(t, err, heraldtype.ENOTFOUND)
		}
		if st := f.stats(); st[heraldtype.StatePending] != 0 {
			t.Fatalf("stats after rollback = %v", st)
		}
		// The idempotency key was not taken either.
		if res := f.enqueue(p); res.Replayed || res.Notifications[0].Deliveries != 1 {
			t.Fatalf("enqueue after the rolled back one = %+v", res)
		}
	})
	t.Run("ReplayInsideTx", func(t *testing.T) {
		t.Parallel()
		f := setup(t)
		first := params(f.notification("u1"))
		first.IdempotencyKey, first.RequestHash = "order-3", "h"
		orig := f.enqueue(first)
		retry := params(f.notification("u1"))
		retry.IdempotencyKey, retry.RequestHash = "order-3", "h"
		tx, commit, _ := begin(f)
		res, err := f.s.EnqueueTx(f.ctx, tx, retry)
		if err != nil || !res.Replayed || !slices.Equal(res.Notifications, orig.Notifications) {
			t.Fatalf("EnqueueTx replay = %+v, %v; want a replay of %+v", res, err, orig)
		}
		retry.RequestHash = "other"
		_, err = f.s.EnqueueTx(f.ctx, tx, retry)
		wantCode(t, err, heraldtype.ECONFLICT)
		if err := commit(); err != nil {
			t.Fatalf("commit after a conflict: %v", err)
		}
		if st := f.stats(); st[heraldtype.StatePending] != 1 {
			t.Fatalf("pending = %d, want 1", st[heraldtype.StatePending])
		}
	})
	t.Run("FailureLeavesTxUsable", func(t *testing.T) {
		t.Parallel()
		f := setup(t)
		existing := f.push("u1")[0]
		lost := f.notification("u1")
		kept := f.notification("u1")
		tx, commit, _ := begin(f)
		// The duplicate id fails the enqueue after lost was written: none
		// of it may stay in the caller's transaction.
		_, err := f.s.EnqueueTx(f.ctx, tx, params(lost, existing))
		wantCode(t, err, heraldtype.ECONFLICT)
		_, err = f.s.EnqueueTx(f.ctx, tx, params(f.notification("ghost")))
		wantCode(t, err, heraldtype.ENOTFOUND)
		if _, err := f.s.EnqueueTx(f.ctx, tx, params(kept)); err != nil {
			t.Fatalf("EnqueueTx after a failed one: %v", err)
		}
		if err := commit(); err != nil {
			t.Fatalf("commit: %v", err)
		}
		_, err = f.s.GetNotification(f.ctx, lost.ID)
		wantCode(t, err, heraldtype.ENOTFOUND)
		if d := f.delivery(kept.ID); d.State != heraldtype.StatePending {
			t.Fatalf("delivery of the kept trigger = %+v", d)
		}
		if st := f.stats(); st[heraldtype.StatePending] != 2 {
			t.Fatalf("pending = %d, want 2", st[heraldtype.StatePending])
		}
	})
	t.Run("Channels", func(t *testing.T) {
		t.Parallel()
		f := setup(t)
		f.contact("u1", "+15550001", "")
		var n heraldtype.Notification
		for _, commit := range []bool{false, true} {
			n = f.on("u1", heraldtype.ChannelInApp, heraldtype.ChannelSMS, heraldtype.ChannelEmail)
			tx, doCommit, rollback := begin(f)
			res, err := f.s.EnqueueTx(f.ctx, tx, channelParams(n))
			if err != nil || res.Notifications[0].Deliveries != 3 || len(res.Inbox) != 1 || res.Inbox[0].NotificationID != n.ID {
				t.Fatalf("EnqueueTx = %+v, %v; want 3 deliveries and an inbox item", res, err)
			}
			end := rollback
			if commit {
				end = doCommit
			}
			if err := end(); err != nil {
				t.Fatal(err)
			}
			items, _, _, err := f.s.ListInbox(f.ctx, "u1", heraldtype.InboxFilter{})
			if err != nil || len(items) != map[bool]int{false: 0, true: 1}[commit] {
				t.Fatalf("commit=%v: inbox = %+v, %v", commit, items, err)
			}
		}
		// The committed one: the user has no e-mail address.
		wantSkipped(t, f.byChannel(n.ID, heraldtype.ChannelEmail), store.CodeNoAddress)
	})
	t.Run("BadTx", func(t *testing.T) {
		t.Parallel()
		f := setup(t)
		for _, tx := range []any{nil, "tx", f.s} {
			_, err := f.s.EnqueueTx(f.ctx, tx, params(f.notification("u1")))
			wantCode(t, err, heraldtype.EINVALID)
		}
		tx, _, _ := begin(f)
		_, err := f.s.EnqueueTx(f.ctx, tx, store.EnqueueParams{})
		wantCode(t, err, heraldtype.EINVALID)
	})
}
