package storetest

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/heraldhq/herald/heraldtype"
	"github.com/heraldhq/herald/store"
)

// testClusterLocks covers the named cluster lock behind leader election
// and ShedLock-style scheduled jobs (S3.7).
func testClusterLocks(t *testing.T, newStore NewStore) {
	try := func(f *fixture, name, owner string, now, until time.Time, want bool) {
		f.t.Helper()
		got, err := f.s.TryLock(f.ctx, name, owner, now, until)
		if err != nil {
			f.t.Fatalf("TryLock(%s, %s, %v): %v", name, owner, now, err)
		}
		if got != want {
			f.t.Fatalf("TryLock(%s, %s, %v) = %v, want %v", name, owner, now.Sub(base()), got, want)
		}
	}
	unlock := func(f *fixture, name, owner string, until time.Time) {
		f.t.Helper()
		if err := f.s.Unlock(f.ctx, name, owner, until); err != nil {
			f.t.Fatalf("Unlock(%s, %s): %v", name, owner, err)
		}
	}
	t.Run("Lease", func(t *testing.T) {
		t.Parallel()
		f := newFixture(t, newStore)
		try(f, "leader", "a", base(), at(time.Minute), true)
		try(f, "leader", "b", at(time.Second), at(time.Minute), false)
		try(f, "other", "b", at(time.Second), at(time.Minute), true) // names are independent
		// Renewal by the holder moves the end.
		try(f, "leader", "a", at(50*time.Second), at(2*time.Minute), true)
		try(f, "leader", "b", at(90*time.Second), at(3*time.Minute), false)
		// A holder that stopped renewing loses the lock at its end.
		try(f, "leader", "b", at(2*time.Minute), at(3*time.Minute), true)
		try(f, "leader", "a", at(2*time.Minute), at(3*time.Minute), false)
	})
	t.Run("UnlockLockAtLeast", func(t *testing.T) {
		t.Parallel()
		f := newFixture(t, newStore)
		// A daily job: lock at most 1 h, at least 5 min; it finished after 1 min.
		try(f, "daily", "a", base(), at(time.Hour), true)
		unlock(f, "daily", "b", at(time.Minute)) // not b's: nothing happens
		try(f, "daily", "b", at(2*time.Minute), at(time.Hour), false)
		unlock(f, "daily", "a", at(5*time.Minute))
		try(f, "daily", "b", at(5*time.Minute-time.Microsecond), at(time.Hour), false)
		try(f, "daily", "b", at(5*time.Minute), at(time.Hour), true)
		// Unlock at now frees it at once.
		unlock(f, "daily", "b", at(6*time.Minute))
		try(f, "daily", "a", at(6*time.Minute), at(time.Hour), true)
		unlock(f, "never-taken", "a", base())
	})
	t.Run("Concurrent", func(t *testing.T) {
		t.Parallel()
		f := newFixture(t, newStore)
		const n = 8
		won := make([]bool, n)
		errs := make([]error, n)
		var wg sync.WaitGroup
		for i := range n {
			wg.Go(func() {
				won[i], errs[i] = f.s.TryLock(f.ctx, "race", fmt.Sprint("owner", i), base(), at(time.Minute))
			})
		}
		wg.Wait()
		winners := 0
		for i := range n {
			if errs[i] != nil {
				t.Fatalf("TryLock %d: %v", i, errs[i])
			}
			if won[i] {
				winners++
			}
		}
		if winners != 1 {
			t.Fatalf("%d owners hold the lock, want 1", winners)
		}
	})
	t.Run("BadInput", func(t *testing.T) {
		t.Parallel()
		f := newFixture(t, newStore)
		_, err := f.s.TryLock(f.ctx, "", "a", base(), at(time.Minute))
		wantCode(t, err, heraldtype.EINVALID)
		_, err = f.s.TryLock(f.ctx, "x", "", base(), at(time.Minute))
		wantCode(t, err, heraldtype.EINVALID)
		_, err = f.s.TryLock(f.ctx, "x", "a", base(), base())
		wantCode(t, err, heraldtype.EINVALID)
		wantCode(t, f.s.Unlock(f.ctx, "", "a", base()), heraldtype.EINVALID)
	})
}

// testPruneFinished covers the retention clean-up of finished
// notifications.
func testPruneFinished(t *testing.T, newStore NewStore) {
	t.Parallel()
	f := newFixture(t, newStore)
	f.user("u1")
	f.user("u2")
	f.device("u1", "d1", "android")
	f.device("u2", "e1", "android")
	f.device("u2", "e2", "ios")
	created := func(n heraldtype.Notification, d time.Duration) heraldtype.Notification {
		n.CreatedAt = at(d)
		return n
	}
	sent := created(f.notification("u1"), 0)
	dead := created(f.notification("u1"), time.Minute)
	inApp := created(f.notification("u1"), 2*time.Minute)
	inApp.Channels = []heraldtype.Channel{heraldtype.ChannelInApp}
	leased := created(f.notification("u1"), 3*time.Minute)
	recent := created(f.notification("u1"), 2*time.Hour)
	half := created(f.notification("u2"), 4*time.Minute) // one delivery sent, one pending
	f.enqueue(params(sent, dead, inApp, leased, recent, half))
	jobs := f.claim("w", at(time.Second), 100)
	if len(jobs) != 6 {
		t.Fatalf("claimed %d, want 6", len(jobs))
	}
	var os []store.Outcome
	halfDone := false
	for _, j := range jobs {
		o := outcome(j, store.Sent{}, at(2*time.Second))
		switch j.Delivery.NotificationID {
		case dead.ID:
			o = o.To(store.Dead{})
		case leased.ID:
			continue
		case half.ID:
			if halfDone {
				o = o.To(store.Released{})
			}
			halfDone = true
		}
		os = append(os, o)
	}
	f.complete(len(os), os...)
	pending := f.notification("u1")
	f.enqueue(params(pending))

	_, err := f.s.PruneFinished(f.ctx, at(time.Hour), 0)
	wantCode(t, err, heraldtype.EINVALID)
	cutoff := at(time.Hour)
	if n, err := f.s.PruneFinished(f.ctx, cutoff, 1); err != nil || n != 1 {
		t.Fatalf("PruneFinished limit 1 = %d, %v; want 1", n, err)
	}
	_, err = f.s.GetNotification(f.ctx, sent.ID) // the oldest goes first
	wantCode(t, err, heraldtype.ENOTFOUND)
	if _, err := f.s.GetNotification(f.ctx, dead.ID); err != nil {
		t.Fatalf("second oldest pruned past the limit: %v", err)
	}
	if n, err := f.s.PruneFinished(f.ctx, cutoff, 100); err != nil || n != 2 {
		t.Fatalf("PruneFinished = %d, %v; want 2 (dead, in-app)", n, err)
	}
	for _, n := range []heraldtype.Notification{sent, dead, inApp} {
		_, err := f.s.GetNotification(f.ctx, n.ID)
		wantCode(t, err, heraldtype.ENOTFOUND)
		ds, _, err := f.s.ListDeliveries(f.ctx, heraldtype.DeliveryFilter{NotificationID: n.ID})
		if err != nil || len(ds) != 0 {
			t.Fatalf("deliveries of pruned %s = %+v, %v", n.ID, ds, err)
		}
	}
	for _, n := range []heraldtype.Notification{leased, recent, half, pending} {
		if _, err := f.s.GetNotification(f.ctx, n.ID); err != nil {
			t.Fatalf("notification %s with unfinished or recent deliveries pruned: %v", n.ID, err)
		}
	}
	if d := f.delivery(recent.ID); len(d.Attempts) != 1 {
		t.Fatalf("kept delivery lost its attempts: %+v", d)
	}
	want := map[heraldtype.DeliveryState]int{heraldtype.StateSent: 2, heraldtype.StateLeased: 1, heraldtype.StatePending: 2}
	for st, n := range want {
		if got := f.stats()[st]; got != n {
			t.Fatalf("%s deliveries after pruning = %d, want %d (%v)", st, got, n, f.stats())
		}
	}
	if n, err := f.s.PruneFinished(f.ctx, cutoff, 100); err != nil || n != 0 {
		t.Fatalf("second PruneFinished = %d, %v; want 0", n, err)
	}
}
