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
			if _, err := s.UpsertDevice(ctx, d, base()); err != nil {
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
