package storetest

import (
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/heraldhq/herald/heraldtype"
	"github.com/heraldhq/herald/store"
)

func testEnqueue(t *testing.T, newStore NewStore) {
	t.Run("DeliveriesForUsableDevices", func(t *testing.T) {
		t.Parallel()
		f := newFixture(t, newStore)
		f.user("u1")
		f.device("u1", "a1", "android")
		f.device("u1", "i1", "ios")
		f.device("u1", "w1", "web") // no provider for web
		f.upsertDevice(heraldtype.Device{ID: "optout", UserID: "u1", Platform: "android", Token: "t-out", PushOptIn: false}, base())
		f.device("u1", "lost", "android")
		f.device("u1", "thief", "android")
		// The token of "lost" moves to "thief": lost is INVALID and holds none.
		f.upsertDevice(heraldtype.Device{ID: "thief", UserID: "u1", Platform: "android", Token: "tok-lost", PushOptIn: true}, base())

		push := f.notification("u1")
		push.Data = map[string]string{"k": "v"}
		push.Guarantee = heraldtype.AtMostOnce
		inApp := f.notification("u1")
		inApp.Channels = []heraldtype.Channel{heraldtype.ChannelInApp}
		inApp.Source = &heraldtype.Source{Kind: heraldtype.SourceReminder, ID: "r1", Name: "cart-42", Occurrence: "n3"}
		res := f.enqueue(params(push, inApp))
		if res.Replayed || len(res.Notifications) != 2 {
			t.Fatalf("result = %+v", res)
		}
		if e := res.Notifications[0]; e.ID != push.ID || e.UserID != "u1" || e.Deliveries != 3 {
			t.Fatalf("push notification result = %+v, want 3 deliveries (a1, i1, thief)", e)
		}
		if e := res.Notifications[1]; e.ID != inApp.ID || e.Deliveries != 1 {
			t.Fatalf("in-app notification result = %+v, want 1 delivery (the inbox)", e)
		}
		ds := f.deliveries(push.ID)
		var devices []string
		for i, d := range ds {
			devices = append(devices, d.DeviceID)
			if i > 0 && d.ID <= ds[i-1].ID {
				t.Fatalf("deliveries not ordered by id: %+v", ds)
			}
			if d.State != heraldtype.StatePending || d.Attempt != 0 || d.MaxAttempts != 3 || d.Channel != heraldtype.ChannelPush ||
				d.Guarantee != heraldtype.AtMostOnce || d.UserID != "u1" || d.Type != "reminder" || d.NotificationID != push.ID ||
				d.LeaseOwner != "" || d.LeaseUntil != nil || d.FinishedAt != nil || d.ReplayCount != 0 || len(d.Attempts) != 0 {
				t.Fatalf("new delivery = %+v", d)
			}
			wantTime(t, "RunAt", d.RunAt, base())
			wantTime(t, "CreatedAt", d.CreatedAt, base())
			want := map[string]string{"a1": "fcm", "thief": "fcm", "i1": "apns"}[d.DeviceID]
			if d.Provider != want {
				t.Fatalf("delivery to %s routed to %q, want %q", d.DeviceID, d.Provider, want)
			}
		}
		slices.Sort(devices)
		if !slices.Equal(devices, []string{"a1", "i1", "thief"}) {
			t.Fatalf("deliveries to %v, want a1, i1, thief", devices)
		}
		if d := f.delivery(inApp.ID); d.Channel != heraldtype.ChannelInApp || d.State != heraldtype.StateSent {
			t.Fatalf("in-app delivery = %+v, want a sent in_app one", d)
		}

		got, err := f.s.GetNotification(f.ctx, push.ID)
		if err != nil {
			t.Fatal(err)
		}
		if got.ID != push.ID || got.UserID != "u1" || got.Type != push.Type || got.Title != push.Title || got.Body != push.Body ||
			got.Data["k"] != "v" || len(got.Data) != 1 || !slices.Equal(got.Channels, push.Channels) || got.Priority != push.Priority ||
			got.PayloadMode != push.PayloadMode || got.Guarantee != push.Guarantee || !got.SendAt.IsZero() || got.Source != nil {
			t.Fatalf("GetNotification = %+v, want %+v", got, push)
		}
		// The source of a reminder's occurrence is kept with it (issue 19 item 8).
		if got, err := f.s.GetNotification(f.ctx, inApp.ID); err != nil || got.Source == nil || *got.Source != *inApp.Source {
			t.Fatalf("GetNotification(in-app).Source = %+v, %v; want %+v", got.Source, err, inApp.Source)
		}
		wantTime(t, "CreatedAt", got.CreatedAt, base())
		_, err = f.s.GetNotification(f.ctx, "nope")
		wantCode(t, err, heraldtype.ENOTFOUND)
		_, err = f.s.ListNotificationDeliveries(f.ctx, "nope")
		wantCode(t, err, heraldtype.ENOTFOUND)
	})
	t.Run("UnknownUserWritesNothing", func(t *testing.T) {
		t.Parallel()
		f := newFixture(t, newStore)
		f.user("u1")
		f.device("u1", "d1", "android")
		ok := f.notification("u1")
		bad := f.notification("ghost")
		worse := f.notification("phantom")
		p := params(ok, bad, worse)
		p.IdempotencyKey, p.RequestHash = "k1", "h1"
		_, err := f.s.Enqueue(f.ctx, p)
		wantCode(t, err, heraldtype.ENOTFOUND)
		if !strings.Contains(heraldtype.ErrorMessage(err), "ghost") {
			t.Fatalf("error %q does not name the first unknown user", heraldtype.ErrorMessage(err))
		}
		_, err = f.s.GetNotification(f.ctx, ok.ID)
		wantCode(t, err, heraldtype.ENOTFOUND)
		if st := f.stats(); st[heraldtype.StatePending] != 0 {
			t.Fatalf("stats after a failed enqueue = %v", st)
		}
		// The key was not taken either.
		p.Notifications = []heraldtype.Notification{ok}
		if res := f.enqueue(p); res.Replayed || res.Notifications[0].Deliveries != 1 {
			t.Fatalf("enqueue after the failed one = %+v", res)
		}
	})
	t.Run("Idempotency", func(t *testing.T) {
		t.Parallel()
		f := newFixture(t, newStore)
		f.user("u1")
		f.user("u2")
		f.device("u1", "d1", "android")
		f.device("u1", "d2", "ios")
		p := params(f.notification("u1"), f.notification("u2"))
		p.IdempotencyKey, p.RequestHash = "key", "hash"
		first := f.enqueue(p)
		if first.Replayed {
			t.Fatal("first trigger reported Replayed")
		}
		// The retry carries new notification ids (the caller generates them)
		// but gets the original ones back.
		retry := params(f.notification("u1"), f.notification("u2"))
		retry.IdempotencyKey, retry.RequestHash, retry.Now = "key", "hash", at(time.Minute)
		again := f.enqueue(retry)
		if !again.Replayed || !slices.Equal(again.Notifications, first.Notifications) {
			t.Fatalf("replay = %+v, want %+v Replayed", again, first)
		}
		if first.Notifications[0].Deliveries != 2 || first.Notifications[1].Deliveries != 0 {
			t.Fatalf("delivery counts = %+v", first.Notifications)
		}
		_, err := f.s.GetNotification(f.ctx, retry.Notifications[0].ID)
		wantCode(t, err, heraldtype.ENOTFOUND)
		if st := f.stats(); st[heraldtype.StatePending] != 2 {
			t.Fatalf("pending after replay = %d, want 2", st[heraldtype.StatePending])
		}
		retry.RequestHash = "other"
		_, err = f.s.Enqueue(f.ctx, retry)
		wantCode(t, err, heraldtype.ECONFLICT)
	})
	t.Run("IdempotencyNamespaces", func(t *testing.T) {
		// Issue 23: one key in two namespaces is two triggers. Neither
		// caller learns of, replays or blocks the other's; within a
		// namespace, and in the default namespace '' that records written
		// before namespaces existed are in, the key replays as before.
		t.Parallel()
		f := newFixture(t, newStore)
		f.user("u1")
		f.device("u1", "d1", "android")
		first := map[string]store.EnqueueResult{}
		for _, ns := range []string{"", "key-a", "key-b"} {
			p := params(f.notification("u1"))
			p.IdempotencyNamespace, p.IdempotencyKey, p.RequestHash = ns, "order-1001", "hash-"+ns
			res := f.enqueue(p)
			if res.Replayed || res.Notifications[0].Deliveries != 1 {
				t.Fatalf("namespace %q: first trigger = %+v, want a new notification", ns, res)
			}
			first[ns] = res
		}
		if st := f.stats(); st[heraldtype.StatePending] != 3 {
			t.Fatalf("pending = %d, want 3: one per namespace", st[heraldtype.StatePending])
		}
		for _, ns := range []string{"", "key-a", "key-b"} {
			retry := params(f.notification("u1"))
			retry.IdempotencyNamespace, retry.IdempotencyKey, retry.RequestHash = ns, "order-1001", "hash-"+ns
			again := f.enqueue(retry)
			if !again.Replayed || !slices.Equal(again.Notifications, first[ns].Notifications) {
				t.Fatalf("namespace %q: replay = %+v, want %+v Replayed", ns, again, first[ns])
			}
			retry.RequestHash = "other"
			_, err := f.s.Enqueue(f.ctx, retry)
			wantCode(t, err, heraldtype.ECONFLICT)
		}
		// Pruning removes every namespace's records alike.
		if n, err := f.s.PruneTriggers(f.ctx, at(time.Hour)); err != nil || n != 3 {
			t.Fatalf("PruneTriggers = %d, %v; want 3", n, err)
		}
	})
	t.Run("DuplicateNotificationID", func(t *testing.T) {
		t.Parallel()
		f := newFixture(t, newStore)
		f.user("u1")
		f.device("u1", "d1", "android")
		n := f.push("u1")[0]
		_, err := f.s.Enqueue(f.ctx, params(f.notification("u1"), n))
		wantCode(t, err, heraldtype.ECONFLICT)
		if st := f.stats(); st[heraldtype.StatePending] != 1 {
			t.Fatalf("pending = %d after a rejected trigger, want 1", st[heraldtype.StatePending])
		}
	})
	t.Run("ConcurrentSameKey", func(t *testing.T) {
		t.Parallel()
		f := newFixture(t, newStore)
		f.user("u1")
		f.device("u1", "d1", "android")
		const n = 20
		ps := make([]store.EnqueueParams, n)
		for i := range ps {
			p := params(f.notification("u1"))
			p.IdempotencyKey, p.RequestHash = "same", "hash"
			ps[i] = p
		}
		results := make([]string, n)
		replayed := make([]bool, n)
		errs := make([]error, n)
		var wg sync.WaitGroup
		for i := range ps {
			wg.Go(func() {
				res, err := f.s.Enqueue(f.ctx, ps[i])
				errs[i] = err
				if err == nil {
					results[i] = fmt.Sprint(res.Notifications)
					replayed[i] = res.Replayed
				}
			})
		}
		wg.Wait()
		fresh := 0
		for i := range n {
			if errs[i] != nil {
				t.Fatalf("concurrent Enqueue %d: %v", i, errs[i])
			}
			if results[i] != results[0] {
				t.Fatalf("results differ: %s vs %s", results[i], results[0])
			}
			if !replayed[i] {
				fresh++
			}
		}
		if fresh != 1 {
			t.Fatalf("%d triggers wrote notifications, want exactly 1", fresh)
		}
		if st := f.stats(); st[heraldtype.StatePending] != 1 {
			t.Fatalf("pending = %d, want 1", st[heraldtype.StatePending])
		}
	})
	t.Run("SendAtLater", func(t *testing.T) {
		t.Parallel()
		f := newFixture(t, newStore)
		f.user("u1")
		f.device("u1", "d1", "android")
		later := f.notification("u1")
		later.SendAt = at(time.Hour)
		past := f.notification("u1")
		past.SendAt = at(-time.Hour) // in the past: due now
		f.enqueue(params(later, past))
		wantTime(t, "RunAt", f.delivery(later.ID).RunAt, at(time.Hour))
		wantTime(t, "RunAt", f.delivery(past.ID).RunAt, base())
		got, err := f.s.GetNotification(f.ctx, later.ID)
		if err != nil {
			t.Fatal(err)
		}
		wantTime(t, "SendAt", got.SendAt, at(time.Hour))

		jobs := f.claim("w", at(time.Hour-time.Microsecond), 10)
		if len(jobs) != 1 || jobs[0].Delivery.NotificationID != past.ID {
			t.Fatalf("claim before send_at = %v, want only the due delivery", ids(jobs))
		}
		next, ok, err := f.s.NextRunAt(f.ctx)
		if err != nil || !ok {
			t.Fatalf("NextRunAt = %v, %v, %v", next, ok, err)
		}
		wantTime(t, "NextRunAt", next, at(time.Hour))
		if jobs := f.claim("w", at(time.Hour), 10); len(jobs) != 1 || jobs[0].Delivery.NotificationID != later.ID {
			t.Fatalf("claim at send_at = %v", ids(jobs))
		}
		if _, ok, err := f.s.NextRunAt(f.ctx); ok || err != nil {
			t.Fatalf("NextRunAt with nothing pending = %v, %v", ok, err)
		}
	})
}
