package postgres_test

import (
	"testing"

	"github.com/heraldhq/herald/internal/policy/policytest"
	"github.com/heraldhq/herald/store/postgres"
	"github.com/heraldhq/herald/store/postgres/pgtest"
	"github.com/heraldhq/herald/store/storetest"
)

func BenchmarkEnqueue(b *testing.B) {
	b.Run("1user_3devices", func(b *testing.B) { storetest.BenchEnqueue(b, newStore(b), 1, 3) })
	b.Run("1000users_3devices", func(b *testing.B) { storetest.BenchEnqueue(b, newStore(b), 1000, 3) })
	b.Run("1user_every_channel", func(b *testing.B) { storetest.BenchEnqueueChannels(b, newStore(b), 1) })
	b.Run("1000users_every_channel", func(b *testing.B) { storetest.BenchEnqueueChannels(b, newStore(b), 1000) })
}

// BenchmarkEnqueueParallel: 64 callers of one-recipient triggers, with
// the group commit (the default) and without it.
func BenchmarkEnqueueParallel(b *testing.B) {
	for _, c := range []struct {
		name        string
		concurrency int
	}{{"grouped", 0}, {"one_tx_each", -1}} {
		b.Run(c.name, func(b *testing.B) {
			dsn, schema := pgtest.NewSchema(b)
			s, err := postgres.Open(b.Context(), dsn, postgres.Options{Schema: schema, MaxConns: 20, EnqueueConcurrency: c.concurrency})
			if err != nil {
				b.Fatal(err)
			}
			b.Cleanup(func() { s.Close() })
			if err := s.Migrate(b.Context()); err != nil {
				b.Fatal(err)
			}
			storetest.BenchEnqueueParallel(b, s, 64)
		})
	}
}

func BenchmarkClaimComplete(b *testing.B) {
	b.Run("batch100", func(b *testing.B) { storetest.BenchClaimComplete(b, newStore(b), 100) })
}

// BenchmarkPolicyLimiter: the store's share of a policy check (dedupe lock
// and daily count).
func BenchmarkPolicyLimiter(b *testing.B) { policytest.Bench(b, newStore(b)) }

// BenchmarkDailyCount: a claimed batch's daily counts, one by one and in
// one CountDailyBatch (issue 39 item 3).
func BenchmarkDailyCount(b *testing.B) { policytest.BenchDaily(b, newStore(b)) }
