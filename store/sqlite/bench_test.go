package sqlite_test

import (
	"testing"

	"github.com/heraldhq/herald/internal/policy/policytest"
	"github.com/heraldhq/herald/store/storetest"
)

func BenchmarkEnqueue(b *testing.B) {
	b.Run("1user_3devices", func(b *testing.B) { storetest.BenchEnqueue(b, newStore(b), 1, 3) })
	b.Run("1000users_3devices", func(b *testing.B) { storetest.BenchEnqueue(b, newStore(b), 1000, 3) })
	b.Run("1user_every_channel", func(b *testing.B) { storetest.BenchEnqueueChannels(b, newStore(b), 1) })
	b.Run("1000users_every_channel", func(b *testing.B) { storetest.BenchEnqueueChannels(b, newStore(b), 1000) })
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
