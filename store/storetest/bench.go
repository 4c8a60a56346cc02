package storetest

import (
	"context"
	"fmt"
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"github.com/heraldhq/herald/heraldtype"
	"github.com/heraldhq/herald/store"
)

// benchUsers creates users b0…b<n-1>, each with devices android devices.
func benchUsers(b *testing.B, s store.Store, users, devices int) []string {
	b.Helper()
	ctx := b.Context()
	ids := make([]string, users)
	for i := range ids {
		ids[i] = fmt.Sprintf("b%d", i)
		if _, err := s.UpsertUser(ctx, heraldtype.User{ID: ids[i], Timezone: "UTC"}, base()); err != nil {
			b.Fatal(err)
		}
		for j := range devices {
			d := heraldtype.Device{ID: fmt.Sprintf("%s-d%d", ids[i], j), UserID: ids[i], Platform: heraldtype.PlatformAndroid,
				Token: fmt.Sprintf("tok-%s-%d", ids[i], j), PushOptIn: true}
			if _, err := s.UpsertDevice(ctx, d, base(), 0); err != nil {
				b.Fatal(err)
			}
		}
	}
	return ids
}

// benchTrigger is one trigger naming every user, with fresh notification
// ids (seq makes them unique) and its own idempotency key.
func benchTrigger(users []string, seq int, now time.Time) store.EnqueueParams {
	ns := make([]heraldtype.Notification, len(users))
	for i, u := range users {
		ns[i] = heraldtype.Notification{
			ID: fmt.Sprintf("bn%d-%d", seq, i), UserID: u, Type: "bench", Title: "Hello", Body: "World",
			Data:     map[string]string{"orderId": "42"},
			Channels: []heraldtype.Channel{heraldtype.ChannelPush}, Priority: heraldtype.PriorityNormal,
			PayloadMode: heraldtype.PayloadAlert, Guarantee: heraldtype.AtLeastOnce, CreatedAt: now,
		}
	}
	return store.EnqueueParams{
		IdempotencyKey: fmt.Sprintf("bench-%d", seq), RequestHash: "h", Notifications: ns,
		MaxAttempts: 3, PushProviders: Providers(), Now: now,
	}
}

// BenchEnqueue measures Enqueue of triggers naming users users with
// devices devices each, and reports notifications/s and deliveries/s. s
// must be fresh and migrated.
func BenchEnqueue(b *testing.B, s store.Store, users, devices int) {
	ids := benchUsers(b, s, users, devices)
	ctx := b.Context()
	seq := 0
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		seq++
		res, err := s.Enqueue(ctx, benchTrigger(ids, seq, base()))
		if err != nil {
			b.Fatal(err)
		}
		if res.Notifications[0].Deliveries != devices {
			b.Fatalf("%d deliveries per notification, want %d", res.Notifications[0].Deliveries, devices)
		}
	}
	sec := b.Elapsed().Seconds()
	b.ReportMetric(float64(seq*users)/sec, "notifications/s")
	b.ReportMetric(float64(seq*users*devices)/sec, "deliveries/s")
}

// BenchEnqueueChannels measures Enqueue of triggers naming users users
// on every channel: push to 3 devices each, sms and email (one user in
// four has no phone, and one e-mail address in four is suppressed, so
// the skip rules run too) and in_app. It reports notifications/s and
// deliveries/s. s must be fresh and migrated.
func BenchEnqueueChannels(b *testing.B, s store.Store, users int) {
	const devices = 3
	ids := benchUsers(b, s, users, devices)
	ctx := b.Context()
	for i, id := range ids {
		u := heraldtype.User{ID: id, Timezone: "UTC", Email: id + "@example.com"}
		if i%4 != 0 {
			u.Phone = fmt.Sprintf("+8210%08d", i)
		}
		if _, err := s.UpsertUser(ctx, u, base()); err != nil {
			b.Fatal(err)
		}
	}
	// Suppress every fourth e-mail address through the outcome that
	// records a suppression, as a provider's STOP answer would.
	var suppress []heraldtype.Notification
	for i := 1; i < len(ids); i += 4 {
		suppress = append(suppress, heraldtype.Notification{ID: fmt.Sprintf("bs-%d", i), UserID: ids[i], Type: "bench",
			Title: "x", Body: "y", Channels: []heraldtype.Channel{heraldtype.ChannelEmail},
			Priority: heraldtype.PriorityNormal, PayloadMode: heraldtype.PayloadAlert,
			Guarantee: heraldtype.AtLeastOnce, CreatedAt: base()})
	}
	if len(suppress) > 0 {
		if _, err := s.Enqueue(ctx, store.EnqueueParams{Notifications: suppress, MaxAttempts: 3,
			ChannelProviders: ChannelProviders(), Now: base()}); err != nil {
			b.Fatal(err)
		}
		jobs := claimBatch(ctx, b, s, base(), len(suppress))
		os := make([]store.Outcome, len(jobs))
		for i, j := range jobs {
			os[i] = store.Outcome{DeliveryID: j.Delivery.ID, Owner: "bench", Attempt: j.Delivery.Attempt, At: base()}.
				To(store.Dead{Failure: store.Failure{ErrorCode: "opted_out"}, SuppressAddress: true})
		}
		if _, err := s.Complete(ctx, os); err != nil {
			b.Fatal(err)
		}
		if sp, err := s.ListSuppressions(ctx, heraldtype.ChannelEmail); err != nil || len(sp) != len(suppress) {
			b.Fatalf("%d suppressions (%v), want %d", len(sp), err, len(suppress))
		}
	}
	seq := 0
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		seq++
		p := benchTrigger(ids, seq, base())
		for i := range p.Notifications {
			p.Notifications[i].Channels = []heraldtype.Channel{heraldtype.ChannelPush, heraldtype.ChannelSMS,
				heraldtype.ChannelEmail, heraldtype.ChannelInApp}
		}
		p.ChannelProviders = ChannelProviders()
		res, err := s.Enqueue(ctx, p)
		if err != nil {
			b.Fatal(err)
		}
		total := 0
		for _, n := range res.Notifications {
			total += n.Deliveries
		}
		if total != len(ids)*(devices+3) || len(res.Inbox) != len(ids) {
			b.Fatalf("%d deliveries and %d inbox items, want %d and %d", total, len(res.Inbox), len(ids)*(devices+3), len(ids))
		}
	}
	sec := b.Elapsed().Seconds()
	b.ReportMetric(float64(seq*users)/sec, "notifications/s")
	b.ReportMetric(float64(seq*users*(devices+3))/sec, "deliveries/s")
}

// BenchEnqueueParallel measures Enqueue of one-recipient triggers from
// callers concurrent goroutines (an API under load: what group commit is
// for), and reports triggers/s. s must be fresh and migrated.
func BenchEnqueueParallel(b *testing.B, s store.Store, callers int) {
	ids := benchUsers(b, s, 100, 1)
	ctx := b.Context()
	var seq atomic.Int64
	b.ReportAllocs()
	b.SetParallelism(max(1, callers/runtime.GOMAXPROCS(0)))
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			n := int(seq.Add(1))
			if _, err := s.Enqueue(ctx, benchTrigger(ids[n%len(ids):n%len(ids)+1], n, base())); err != nil {
				b.Error(err)
				return
			}
		}
	})
	b.ReportMetric(float64(seq.Load())/b.Elapsed().Seconds(), "triggers/s")
}

// BenchClaimComplete measures the queue's hot path: claim a batch, then
// complete it as sent in one Complete call. It reports deliveries/s. The
// backlog is refilled (outside the timer) when it runs dry. s must be
// fresh and migrated.
func BenchClaimComplete(b *testing.B, s store.Store, batch int) {
	const devices = 10
	ids := benchUsers(b, s, 1, devices)
	ctx := b.Context()
	seq, done := 0, 0
	refill := func() {
		users := make([]string, 1000/devices*batch/100)
		for i := range users {
			users[i] = ids[0]
		}
		seq++
		if _, err := s.Enqueue(ctx, benchTrigger(users, seq, base())); err != nil {
			b.Fatal(err)
		}
	}
	now := at(time.Second)
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		jobs := claimBatch(ctx, b, s, now, batch)
		if len(jobs) < batch {
			b.StopTimer()
			refill()
			b.StartTimer()
			jobs = append(jobs, claimBatch(ctx, b, s, now, batch-len(jobs))...)
		}
		os := make([]store.Outcome, len(jobs))
		for i, j := range jobs {
			os[i] = outcome(j, store.Sent{ProviderMessageID: "m", Latency: time.Millisecond}, now)
		}
		n, err := s.Complete(ctx, os)
		if err != nil || n != len(os) {
			b.Fatalf("Complete = %d, %v; want %d", n, err, len(os))
		}
		done += n
	}
	b.ReportMetric(float64(done)/b.Elapsed().Seconds(), "deliveries/s")
}

func claimBatch(ctx context.Context, b *testing.B, s store.Store, now time.Time, n int) []heraldtype.Job {
	jobs, err := s.Claim(ctx, store.ClaimParams{Owner: "bench", Now: now, LeaseUntil: now.Add(time.Minute), Limit: n})
	if err != nil {
		b.Fatal(err)
	}
	return jobs
}
