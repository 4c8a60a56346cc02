package storetest

import (
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/heraldhq/herald/heraldtype"
	"github.com/heraldhq/herald/store"
)

func testClaim(t *testing.T, newStore NewStore) {
	// A claimed job's notification carries what produced it: the daily cap
	// counts rules' and campaigns' notifications by default (issue 30
	// item 5), so both stores' claims read the source.
	t.Run("Source", func(t *testing.T) {
		t.Parallel()
		f := newFixture(t, newStore)
		f.user("u1")
		f.device("u1", "d1", "android")
		fromRule, trigger := f.notification("u1"), f.notification("u1")
		src := &heraldtype.Source{Kind: heraldtype.SourceRule, ID: "ev-1", Name: "price-drop", Occurrence: "http/ev-1", Event: "PRICE_CHANGE"}
		fromRule.Source = src
		f.enqueue(params(fromRule, trigger))
		now := at(time.Minute)
		jobs, err := f.s.Claim(f.ctx, store.ClaimParams{Owner: "w1", Now: now, LeaseUntil: now.Add(30 * time.Second), Limit: 10})
		if err != nil || len(jobs) != 2 {
			t.Fatalf("claimed %d: %v", len(jobs), err)
		}
		for _, j := range jobs {
			switch j.Notification.ID {
			case fromRule.ID:
				if j.Notification.Source == nil || *j.Notification.Source != *src {
					t.Fatalf("a rule's notification claimed with source %+v, want %+v", j.Notification.Source, src)
				}
			case trigger.ID:
				if j.Notification.Source != nil {
					t.Fatalf("a trigger's notification claimed with source %+v", j.Notification.Source)
				}
			}
		}
	})
	// A claimed job's notification carries the traceparent it was
	// enqueued with, so the worker's spans join the trigger's trace (issue
	// 34 item 5); one enqueued without (tracing off) has none.
	t.Run("TraceParent", func(t *testing.T) {
		t.Parallel()
		f := newFixture(t, newStore)
		f.user("u1")
		f.device("u1", "d1", "android")
		traced, plain := f.notification("u1"), f.notification("u1")
		const tp = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
		traced.TraceParent = tp
		f.enqueue(params(traced, plain))
		now := at(time.Minute)
		jobs, err := f.s.Claim(f.ctx, store.ClaimParams{Owner: "w1", Now: now, LeaseUntil: now.Add(30 * time.Second), Limit: 10})
		if err != nil || len(jobs) != 2 {
			t.Fatalf("claimed %d: %v", len(jobs), err)
		}
		for _, j := range jobs {
			want := ""
			if j.Notification.ID == traced.ID {
				want = tp
			}
			if j.Notification.TraceParent != want {
				t.Errorf("notification %s claimed with traceparent %q, want %q", j.Notification.ID, j.Notification.TraceParent, want)
			}
		}
	})
	t.Run("BatchOrderLease", func(t *testing.T) {
		t.Parallel()
		f := newFixture(t, newStore)
		f.user("u1")
		f.device("u1", "d1", "android")
		f.device("u1", "d2", "ios")
		// Enqueued in this order, due in reverse: claim goes by run_at.
		var ns []heraldtype.Notification
		for i := range 3 {
			n := f.notification("u1")
			n.SendAt = at(time.Duration(3-i) * time.Second)
			ns = append(ns, n)
		}
		f.enqueue(params(ns...))
		now := at(time.Minute)
		jobs, err := f.s.Claim(f.ctx, store.ClaimParams{Owner: "w1", Now: now, LeaseUntil: now.Add(30 * time.Second), Limit: 4})
		if err != nil {
			t.Fatal(err)
		}
		if len(jobs) != 4 {
			t.Fatalf("claimed %d, want the limit 4", len(jobs))
		}
		wantOrder := []string{ns[2].ID, ns[2].ID, ns[1].ID, ns[1].ID}
		for i, j := range jobs {
			d := j.Delivery
			if d.NotificationID != wantOrder[i] {
				t.Fatalf("claim order: job %d is of %s, want %s", i, d.NotificationID, wantOrder[i])
			}
			if i > 0 && d.RunAt.Equal(jobs[i-1].Delivery.RunAt) && d.ID < jobs[i-1].Delivery.ID {
				t.Fatal("equal run_at not ordered by id")
			}
			if d.State != heraldtype.StateLeased || d.LeaseOwner != "w1" || d.Attempt != 1 {
				t.Fatalf("claimed delivery = %+v", d)
			}
			wantTimePtr(t, "LeaseUntil", d.LeaseUntil, now.Add(30*time.Second))
			if j.Notification == nil || j.Notification.ID != d.NotificationID || j.Notification.Title != "Hello" {
				t.Fatalf("job notification = %+v", j.Notification)
			}
			if j.Device == nil || j.Device.ID != d.DeviceID || j.Device.Token != "tok-"+d.DeviceID {
				t.Fatalf("job device = %+v", j.Device)
			}
		}
		if jobs[0].Notification != jobs[1].Notification {
			t.Fatal("jobs of one notification do not share the *Notification")
		}
		rest := f.claim("w2", now, 10)
		if len(rest) != 2 || rest[0].Delivery.NotificationID != ns[0].ID {
			t.Fatalf("second claim = %v", ids(rest))
		}
		if more := f.claim("w3", now, 10); len(more) != 0 {
			t.Fatalf("third claim = %v, want none", ids(more))
		}
		if st := f.stats(); st[heraldtype.StateLeased] != 6 || st[heraldtype.StatePending] != 0 {
			t.Fatalf("stats = %v", st)
		}
	})
	t.Run("ExcludeProviders", func(t *testing.T) {
		t.Parallel()
		f := newFixture(t, newStore)
		f.user("u1")
		f.device("u1", "d1", "android")
		f.device("u1", "d2", "ios")
		f.push("u1", "u1")
		jobs := f.claim("w", base(), 10, "fcm")
		if len(jobs) != 2 {
			t.Fatalf("claimed %d excluding fcm, want 2", len(jobs))
		}
		for _, j := range jobs {
			if j.Delivery.Provider != "apns" {
				t.Fatalf("claimed a %s delivery while excluding fcm", j.Delivery.Provider)
			}
		}
		if jobs := f.claim("w", base(), 10, "fcm", "apns"); len(jobs) != 0 {
			t.Fatalf("claimed %v excluding both", ids(jobs))
		}
		if jobs := f.claim("w", base(), 10); len(jobs) != 2 {
			t.Fatalf("claimed %d without exclusion, want 2", len(jobs))
		}
	})
	t.Run("Concurrent", func(t *testing.T) {
		t.Parallel()
		f := newFixture(t, newStore)
		f.user("u1")
		for _, d := range []string{"d1", "d2", "d3", "d4", "d5"} {
			f.device("u1", d, "android")
		}
		var ns []heraldtype.Notification
		for range 100 {
			ns = append(ns, f.notification("u1"))
		}
		f.enqueue(params(ns...))
		const claimers = 4
		got := make([][]int64, claimers)
		errs := make([]error, claimers)
		var wg sync.WaitGroup
		for c := range claimers {
			wg.Go(func() {
				for {
					jobs, err := f.s.Claim(f.ctx, store.ClaimParams{
						Owner: "w", Now: base(), LeaseUntil: at(time.Minute), Limit: 7,
					})
					if err != nil || len(jobs) == 0 {
						errs[c] = err
						return
					}
					got[c] = append(got[c], ids(jobs)...)
				}
			})
		}
		wg.Wait()
		seen := make(map[int64]bool)
		for c := range claimers {
			if errs[c] != nil {
				t.Fatalf("claimer %d: %v", c, errs[c])
			}
			for _, id := range got[c] {
				if seen[id] {
					t.Fatalf("delivery %d claimed twice", id)
				}
				seen[id] = true
			}
		}
		if len(seen) != 500 {
			t.Fatalf("claimed %d distinct deliveries, want 500", len(seen))
		}
	})
	t.Run("DeviceReadAtClaim", func(t *testing.T) {
		t.Parallel()
		f := newFixture(t, newStore)
		f.user("u1")
		f.user("u2")
		for _, d := range []string{"refreshed", "invalid", "deleted", "moved"} {
			f.device("u1", d, "android")
		}
		f.push("u1")
		later := at(time.Second)
		f.upsertDevice(heraldtype.Device{ID: "refreshed", UserID: "u1", Platform: "android", Token: "new-token", PushOptIn: true}, later)
		f.upsertDevice(heraldtype.Device{ID: "thief", UserID: "u1", Platform: "android", Token: "tok-invalid", PushOptIn: true}, later)
		if err := f.s.DeleteDevice(f.ctx, "u1", "deleted"); err != nil {
			t.Fatal(err)
		}
		f.upsertDevice(heraldtype.Device{ID: "moved", UserID: "u2", Platform: "android", Token: "tok-moved", PushOptIn: true}, later)
		jobs := f.claim("w", later, 10)
		if len(jobs) != 4 {
			t.Fatalf("claimed %d, want 4", len(jobs))
		}
		for _, j := range jobs {
			switch j.Delivery.DeviceID {
			case "refreshed":
				if j.Device == nil || j.Device.Token != "new-token" {
					t.Fatalf("refreshed device = %+v, want the new token", j.Device)
				}
			case "invalid":
				if j.Device == nil || j.Device.Status != heraldtype.DeviceInvalid || j.Device.Token != "" {
					t.Fatalf("invalidated device = %+v", j.Device)
				}
			case "deleted", "moved":
				// A device that moved to another user is no longer the
				// delivery's device: sending would reach the wrong person.
				if j.Device != nil {
					t.Fatalf("%s device = %+v, want nil", j.Delivery.DeviceID, j.Device)
				}
			}
		}
	})
}

func testComplete(t *testing.T, newStore NewStore) {
	// setup returns a fixture with one user, one android device "d1" and
	// one claimed delivery of a fresh notification.
	setup := func(t *testing.T) (*fixture, heraldtype.Job) {
		f := newFixture(t, newStore)
		f.user("u1")
		f.device("u1", "d1", "android")
		f.push("u1")
		jobs := f.claim("w1", at(time.Second), 1)
		if len(jobs) != 1 {
			t.Fatalf("claimed %d, want 1", len(jobs))
		}
		return f, jobs[0]
	}
	t.Run("SentIsFinal", func(t *testing.T) {
		t.Parallel()
		f, j := setup(t)
		done := at(2 * time.Second)
		o := outcome(j, store.Sent{ProviderMessageID: "projects/p/messages/1", Latency: 40 * time.Millisecond}, done)
		f.complete(1, o)
		// A duplicate, another owner's and a stale attempt's outcome: all ignored (S4.4).
		dup := o
		dup = dup.To(store.Dead{Failure: store.Failure{ErrorCode: "INTERNAL"}})
		other := dup
		other.Owner = "w2"
		stale := dup
		stale.Attempt = 0
		f.complete(0, dup, other, stale)
		d := f.delivery(j.Delivery.NotificationID)
		if d.State != heraldtype.StateSent || d.ProviderMessageID != "projects/p/messages/1" || d.LastErrorCode != "" ||
			d.LeaseOwner != "" || d.LeaseUntil != nil || d.Attempt != 1 {
			t.Fatalf("sent delivery = %+v", d)
		}
		wantTimePtr(t, "FinishedAt", d.FinishedAt, done)
		wantOutcomes(t, d, heraldtype.OutcomeSent)
		a := d.Attempts[0]
		if a.Attempt != 1 || a.Latency != 40*time.Millisecond || a.ProviderMessageID != "projects/p/messages/1" {
			t.Fatalf("attempt = %+v", a)
		}
		wantTime(t, "attempt At", a.At, done)
	})
	t.Run("RetryThenDead", func(t *testing.T) {
		t.Parallel()
		f, j := setup(t)
		retryAt := at(time.Minute)
		o := outcome(j, store.Retry{RunAt: retryAt,
			Failure: store.Failure{ErrorCode: "UNAVAILABLE", Error: "try later", RetryAfter: 30 * time.Second}}, at(2*time.Second))
		f.complete(1, o)
		d := f.delivery(j.Delivery.NotificationID)
		if d.State != heraldtype.StatePending || d.LastErrorCode != "UNAVAILABLE" || d.LastError != "try later" ||
			d.FinishedAt != nil || d.LeaseOwner != "" || d.Attempt != 1 {
			t.Fatalf("retried delivery = %+v", d)
		}
		wantTime(t, "RunAt", d.RunAt, retryAt)
		if a := d.Attempts[0]; a.Outcome != heraldtype.OutcomeRetry || a.RetryAfter != 30*time.Second || a.ErrorCode != "UNAVAILABLE" {
			t.Fatalf("retry attempt = %+v", a)
		}
		if jobs := f.claim("w1", retryAt.Add(-time.Microsecond), 1); len(jobs) != 0 {
			t.Fatal("retry claimed before its run_at")
		}
		jobs := f.claim("w1", retryAt, 1)
		if len(jobs) != 1 || jobs[0].Delivery.Attempt != 2 {
			t.Fatalf("second claim = %+v", jobs)
		}
		// The same owner's outcome for the first attempt arrives late: it
		// is stale and ignored (S4.4).
		stale := outcome(j, store.Sent{}, retryAt)
		f.complete(0, stale)
		dead := outcome(jobs[0], store.Dead{Failure: store.Failure{ErrorCode: "INVALID_ARGUMENT", Error: "bad payload"}},
			retryAt.Add(time.Second))
		f.complete(1, dead)
		d = f.delivery(j.Delivery.NotificationID)
		if d.State != heraldtype.StateDead || d.LastErrorCode != "INVALID_ARGUMENT" || d.LastError != "bad payload" || d.Attempt != 2 {
			t.Fatalf("dead delivery = %+v", d)
		}
		wantTimePtr(t, "FinishedAt", d.FinishedAt, retryAt.Add(time.Second))
		wantOutcomes(t, d, heraldtype.OutcomeRetry, heraldtype.OutcomeDead)
		if d.Attempts[1].Attempt != 2 {
			t.Fatalf("attempts = %+v", d.Attempts)
		}
		// A sent after a failure keeps the failure as history.
		if st := f.stats(); st[heraldtype.StateDead] != 1 {
			t.Fatalf("stats = %v", st)
		}
	})
	t.Run("Release", func(t *testing.T) {
		t.Parallel()
		f, j := setup(t)
		o := store.Outcome{DeliveryID: j.Delivery.ID, Owner: "w1", Attempt: 1, At: at(2 * time.Second)}.
			To(store.Released{RunAt: at(10 * time.Second)})
		f.complete(1, o)
		f.complete(0, o)
		d := f.delivery(j.Delivery.NotificationID)
		if d.State != heraldtype.StatePending || d.Attempt != 0 || d.LeaseOwner != "" || d.LeaseUntil != nil || len(d.Attempts) != 0 {
			t.Fatalf("released delivery = %+v", d)
		}
		wantTime(t, "RunAt", d.RunAt, at(10*time.Second))
		jobs := f.claim("w2", at(10*time.Second), 1)
		if len(jobs) != 1 || jobs[0].Delivery.Attempt != 1 {
			t.Fatalf("claim after release = %+v", jobs)
		}
	})
	t.Run("InvalidateDevice", func(t *testing.T) {
		t.Parallel()
		f, j := setup(t)
		when := at(2 * time.Second)
		o := outcome(j, store.Dead{Failure: store.Failure{ErrorCode: "UNREGISTERED"}, InvalidReason: "UNREGISTERED"}, when)
		f.complete(1, o)
		f.complete(0, o) // a duplicate does not count twice
		dev := f.getDevice("d1")
		if dev.Status != heraldtype.DeviceInvalid || dev.InvalidReason != "UNREGISTERED" || dev.FailCount != 1 {
			t.Fatalf("device = %+v", dev)
		}
		wantTimePtr(t, "InvalidatedAt", dev.InvalidatedAt, when)
		// An invalid device gets no new delivery.
		if res := f.enqueue(params(f.notification("u1"))); res.Notifications[0].Deliveries != 0 {
			t.Fatalf("enqueue to an invalid device made %d deliveries", res.Notifications[0].Deliveries)
		}
	})
	t.Run("InvalidateAfterTokenRefresh", func(t *testing.T) {
		t.Parallel()
		f, j := setup(t)
		// The app registered a new token after the claim: the dead-token
		// answer is about the old one and must not kill the new one.
		f.upsertDevice(heraldtype.Device{ID: "d1", UserID: "u1", Platform: "android", Token: "fresh", PushOptIn: true}, at(2*time.Second))
		o := outcome(j, store.Dead{Failure: store.Failure{ErrorCode: "UNREGISTERED"}, InvalidReason: "UNREGISTERED"}, at(3*time.Second))
		f.complete(1, o)
		if dev := f.getDevice("d1"); dev.Status != heraldtype.DeviceActive || dev.Token != "fresh" || dev.FailCount != 0 {
			t.Fatalf("device refreshed after the claim = %+v", dev)
		}
	})
	t.Run("SentClearsEarlierError", func(t *testing.T) {
		// Issue 22 item 3: a sent delivery's own fields describe its
		// current state, so a retry that succeeds leaves no stale error on
		// the delivery; the attempt timeline keeps the earlier one.
		t.Parallel()
		f, j := setup(t)
		f.complete(1, outcome(j, store.Retry{Failure: store.Failure{ErrorCode: "UNAVAILABLE", Error: "try later"}}, at(2*time.Second)))
		jobs := f.claim("w1", at(3*time.Second), 1)
		f.complete(1, outcome(jobs[0], store.Sent{ProviderMessageID: "m1"}, at(4*time.Second)))
		d := f.delivery(j.Delivery.NotificationID)
		if d.State != heraldtype.StateSent || d.LastErrorCode != "" || d.LastError != "" || d.ProviderMessageID != "m1" {
			t.Fatalf("sent delivery = %+v, want no last error", d)
		}
		wantOutcomes(t, d, heraldtype.OutcomeRetry, heraldtype.OutcomeSent)
		if a := d.Attempts[0]; a.ErrorCode != "UNAVAILABLE" || a.Error != "try later" {
			t.Fatalf("retry attempt = %+v, want its error kept on the timeline", a)
		}
		if dev := f.getDevice("d1"); dev.FailCount != 0 || dev.Status != heraldtype.DeviceActive {
			t.Fatalf("device after a retried send = %+v; a failure that is not a dead token leaves it alone", dev)
		}
	})
	t.Run("DeviceCleanSkipsReset", func(t *testing.T) {
		t.Parallel()
		f, j := setup(t)
		// A dead-token answer recorded while another delivery to the device
		// was in flight: that one's sent outcome says the device was clean
		// at its claim, so it leaves the count for the next send to reset.
		f.push("u1")
		jobs := f.claim("w1", at(time.Second), 1)
		if len(jobs) != 1 {
			t.Fatalf("claimed %d, want 1", len(jobs))
		}
		f.push("u1")
		f.complete(1, outcome(j, store.Dead{Failure: store.Failure{ErrorCode: "UNREGISTERED"}, InvalidReason: "UNREGISTERED"},
			at(2*time.Second)))
		f.complete(1, outcome(jobs[0], store.Sent{DeviceClean: true}, at(3*time.Second)))
		if dev := f.getDevice("d1"); dev.FailCount != 1 {
			t.Fatalf("fail count after a clean send = %d, want 1 (untouched)", dev.FailCount)
		}
		next := f.claim("w2", at(4*time.Second), 1)
		if len(next) != 1 || next[0].Device == nil || next[0].Device.FailCount != 1 {
			t.Fatalf("next claim = %+v, want the device with its count", next)
		}
		f.complete(1, outcome(next[0], store.Sent{}, at(5*time.Second)))
		if dev := f.getDevice("d1"); dev.FailCount != 0 {
			t.Fatalf("fail count after a send that saw it = %d, want 0", dev.FailCount)
		}
	})
	t.Run("Skipped", func(t *testing.T) {
		t.Parallel()
		f, j := setup(t)
		o := outcome(j, store.Skipped{ErrorCode: "device_invalid"}, at(2*time.Second))
		f.complete(1, o)
		d := f.delivery(j.Delivery.NotificationID)
		if d.State != heraldtype.StateSkipped || d.FinishedAt == nil {
			t.Fatalf("skipped delivery = %+v", d)
		}
		wantOutcomes(t, d, heraldtype.OutcomeSkipped)
	})
	t.Run("Unknown", func(t *testing.T) {
		t.Parallel()
		f, j := setup(t)
		// An ambiguous failure of an at_most_once send (S1.3).
		o := outcome(j, store.Unknown{Failure: store.Failure{ErrorCode: "network", Error: "timeout after the request was written"}},
			at(2*time.Second))
		f.complete(1, o)
		f.complete(0, o)
		d := f.delivery(j.Delivery.NotificationID)
		if d.State != heraldtype.StateUnknown || d.LastErrorCode != "network" || d.LeaseOwner != "" {
			t.Fatalf("unknown delivery = %+v", d)
		}
		wantTimePtr(t, "FinishedAt", d.FinishedAt, at(2*time.Second))
		wantOutcomes(t, d, heraldtype.OutcomeUnknown)
		if jobs := f.claim("w1", at(time.Hour), 10); len(jobs) != 0 {
			t.Fatalf("an unknown delivery was claimed again: %v", ids(jobs))
		}
	})
	t.Run("BatchAndBadInput", func(t *testing.T) {
		t.Parallel()
		f := newFixture(t, newStore)
		f.user("u1")
		f.device("u1", "d1", "android")
		f.device("u1", "d2", "ios")
		f.push("u1", "u1")
		jobs := f.claim("w", base(), 10)
		if len(jobs) != 4 {
			t.Fatalf("claimed %d", len(jobs))
		}
		now := at(time.Second)
		f.complete(3, outcome(jobs[0], store.Sent{}, now), outcome(jobs[0], store.Sent{}, now),
			outcome(jobs[1], store.Dead{}, now), outcome(jobs[2], store.Retry{}, now))
		if n, err := f.s.Complete(f.ctx, nil); n != 0 || err != nil {
			t.Fatalf("empty Complete = %d, %v", n, err)
		}
		bad := outcome(jobs[3], nil, now)
		if _, err := f.s.Complete(f.ctx, []store.Outcome{outcome(jobs[3], store.Sent{}, now), bad}); err == nil {
			t.Fatal("Complete accepted an outcome without a transition")
		}
		// The bad batch changed nothing.
		jobs3 := f.deliveries(jobs[3].Delivery.NotificationID)
		for _, d := range jobs3 {
			if d.ID == jobs[3].Delivery.ID && d.State != heraldtype.StateLeased {
				t.Fatalf("delivery of a rejected batch = %+v", d)
			}
		}
	})
}

func testLeases(t *testing.T, newStore NewStore) {
	t.Run("Extend", func(t *testing.T) {
		t.Parallel()
		f := newFixture(t, newStore)
		f.user("u1")
		f.device("u1", "d1", "android")
		f.device("u1", "d2", "ios")
		n := f.push("u1")[0]
		mine := f.claim("w1", base(), 1)
		theirs := f.claim("w2", base(), 1)
		until := at(10 * time.Minute)
		got, err := f.s.ExtendLeases(f.ctx, "w1", append(ids(mine), append(ids(theirs), 999999)...), until)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(got, ids(mine)) {
			t.Fatalf("extended %v, want only %v", got, ids(mine))
		}
		for _, d := range f.deliveries(n.ID) {
			want := at(time.Minute)
			if d.ID == mine[0].Delivery.ID {
				want = until
			}
			wantTimePtr(t, "LeaseUntil", d.LeaseUntil, want)
		}
		f.complete(1, outcome(mine[0], store.Sent{}, at(time.Second)))
		if got, err := f.s.ExtendLeases(f.ctx, "w1", ids(mine), until); err != nil || len(got) != 0 {
			t.Fatalf("extending a completed delivery = %v, %v", got, err)
		}
	})
	t.Run("Reap", func(t *testing.T) {
		t.Parallel()
		f := newFixture(t, newStore)
		f.user("u1")
		f.device("u1", "d1", "android")
		least := f.notification("u1")
		most := f.notification("u1")
		most.Guarantee = heraldtype.AtMostOnce
		f.enqueue(params(least, most))
		jobs := f.claim("w1", base(), 10) // leases end at base+1m
		if len(jobs) != 2 {
			t.Fatalf("claimed %d", len(jobs))
		}
		res, err := f.s.ReapExpiredLeases(f.ctx, at(time.Minute))
		if err != nil || res != (store.ReapResult{}) {
			t.Fatalf("reap at lease end = %+v, %v; want nothing", res, err)
		}
		now := at(2 * time.Minute)
		res, err = f.s.ReapExpiredLeases(f.ctx, now)
		if err != nil || res != (store.ReapResult{Requeued: 1, Unknown: 1}) {
			t.Fatalf("reap = %+v, %v", res, err)
		}
		d := f.delivery(least.ID)
		if d.State != heraldtype.StatePending || d.Attempt != 1 || d.LeaseOwner != "" || d.LeaseUntil != nil {
			t.Fatalf("reaped at_least_once delivery = %+v", d)
		}
		wantTime(t, "RunAt", d.RunAt, now)
		wantOutcomes(t, d, heraldtype.OutcomeLeaseExpired)
		d = f.delivery(most.ID)
		if d.State != heraldtype.StateUnknown || d.LeaseOwner != "" || d.FinishedAt == nil {
			t.Fatalf("reaped at_most_once delivery = %+v", d)
		}
		wantOutcomes(t, d, heraldtype.OutcomeUnknown)
		// The worker that lost its leases reports late: ignored (S4.4).
		f.complete(0, outcome(jobs[0], store.Sent{}, now), outcome(jobs[1], store.Sent{}, now))
		again := f.claim("w2", now, 10)
		if len(again) != 1 || again[0].Delivery.NotificationID != least.ID || again[0].Delivery.Attempt != 2 {
			t.Fatalf("claim after reap = %+v", again)
		}
	})
}

// testClaimNext: a store.NextClaimer claims as Claim does and reports what
// NextRunAt says after the claim.
func testClaimNext(t *testing.T, newStore NewStore) {
	t.Parallel()
	f := newFixture(t, newStore)
	nc, ok := f.s.(store.NextClaimer)
	if !ok {
		t.Skip("the store claims without reporting the next run_at")
	}
	f.user("u1")
	f.device("u1", "d1", "android")
	claimNext := func(now time.Time, limit int) ([]heraldtype.Job, time.Time, bool) {
		t.Helper()
		jobs, next, ok, err := nc.ClaimNext(f.ctx, store.ClaimParams{Owner: "w1", Now: now, LeaseUntil: now.Add(time.Minute), Limit: limit})
		if err != nil {
			t.Fatalf("ClaimNext: %v", err)
		}
		if want, wantOK, err := f.s.NextRunAt(f.ctx); err != nil || ok != wantOK || !next.Equal(want) {
			t.Fatalf("ClaimNext's next run_at = %v, %v; NextRunAt after it says %v, %v (%v)", next, ok, want, wantOK, err)
		}
		return jobs, next, ok
	}
	if jobs, _, ok := claimNext(base(), 10); len(jobs) != 0 || ok {
		t.Fatalf("empty queue: claimed %d, next reported %v", len(jobs), ok)
	}
	due1, due2, later := f.notification("u1"), f.notification("u1"), f.notification("u1")
	later.SendAt = at(time.Hour)
	f.enqueue(params(due1, due2, later))
	// One of two due claimed: the other is next, due now.
	jobs, next, ok := claimNext(base(), 1)
	if len(jobs) != 1 || jobs[0].Delivery.NotificationID != due1.ID || jobs[0].Device == nil || jobs[0].Notification == nil {
		t.Fatalf("claimed %+v, want due1's delivery with its device and notification", jobs)
	}
	if !ok {
		t.Fatal("next not reported with a due delivery left")
	}
	wantTime(t, "next", next, base())
	// The second due one claimed: the scheduled one is next.
	jobs, next, ok = claimNext(base(), 10)
	if len(jobs) != 1 || jobs[0].Delivery.NotificationID != due2.ID || !ok {
		t.Fatalf("claimed %+v (next %v), want due2's delivery", jobs, ok)
	}
	wantTime(t, "next", next, at(time.Hour))
	// A bad claim is refused as Claim refuses it.
	_, _, _, err := nc.ClaimNext(f.ctx, store.ClaimParams{Owner: "", Now: base(), LeaseUntil: at(time.Minute), Limit: 1})
	wantCode(t, err, heraldtype.EINVALID)
}
