package redis_test

import (
	"context"
	"os"
	"slices"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/heraldhq/herald/heraldtype"
	"github.com/heraldhq/herald/internal/policy"
	"github.com/heraldhq/herald/internal/policy/policytest"
	"github.com/heraldhq/herald/internal/policy/redis"
)

// redisAddr is the Redis every development and CI machine runs.
const redisAddr = "127.0.0.1:6379"

// client connects to the local Redis. Without one the tests skip locally
// and fail in CI (CI=true), the rule pgtest follows for PostgreSQL.
func client(t testing.TB) *goredis.Client {
	t.Helper()
	rdb := goredis.NewClient(&goredis.Options{Addr: redisAddr})
	if err := rdb.Ping(t.Context()).Err(); err != nil {
		rdb.Close()
		if os.Getenv("CI") == "true" {
			t.Fatalf("Redis at %s is required in CI: %v", redisAddr, err)
		}
		t.Skipf("no Redis at %s (%v): start redis-server to run the Redis limiter tests", redisAddr, err)
	}
	t.Cleanup(func() { rdb.Close() })
	return rdb
}

var prefixes atomic.Int64

// newLimiter gives each test its own key prefix and deletes its keys
// afterwards.
func newLimiter(t *testing.T) policy.Limiter {
	rdb := client(t)
	prefix := "herald-test:" + strconv.FormatInt(time.Now().UnixNano(), 36) + ":" + strconv.FormatInt(prefixes.Add(1), 10) + ":"
	t.Cleanup(func() {
		ctx := t.Context()
		keys, err := rdb.Keys(ctx, prefix+"*").Result()
		if err == nil && len(keys) > 0 {
			rdb.Del(ctx, keys...)
		}
	})
	l, err := redis.New(redis.Config{Client: rdb, Prefix: prefix})
	if err != nil {
		t.Fatal(err)
	}
	return l
}

func TestLimiter(t *testing.T) {
	policytest.Run(t, policytest.Harness{New: newLimiter, RealTimeExpiry: true})
}

func TestKeysExpire(t *testing.T) {
	rdb := client(t)
	prefix := "herald-test:expire:" + strconv.FormatInt(time.Now().UnixNano(), 36) + ":"
	l, err := redis.New(redis.Config{Client: rdb, Prefix: prefix})
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	if _, err := l.AcquireDedupe(ctx, "k", "n1", time.Hour, time.Now()); err != nil {
		t.Fatal(err)
	}
	expireAt := time.Now().Add(2 * time.Hour)
	if _, err := l.CountDaily(ctx, "u", "2026-03-14", "n1", 10, expireAt); err != nil {
		t.Fatal(err)
	}
	keys, err := rdb.Keys(ctx, prefix+"*").Result()
	if err != nil || len(keys) != 2 {
		t.Fatalf("keys = %v, %v; want a lock and a count", keys, err)
	}
	defer rdb.Del(ctx, keys...)
	for _, k := range keys {
		ttl, err := rdb.PTTL(ctx, k).Result()
		if err != nil || ttl <= 0 || ttl > 2*time.Hour {
			t.Fatalf("key %q has TTL %s (%v): every key must expire", k, ttl, err)
		}
	}
}

func TestOpenRejectsOtherURLs(t *testing.T) {
	if _, _, err := redis.Open("postgres://x", ""); err == nil {
		t.Fatal("Open accepted a non-redis URL")
	}
}

func TestBadArguments(t *testing.T) {
	l, err := redis.New(redis.Config{Client: client(t)})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := l.AcquireDedupe(t.Context(), "k", "o", 0, time.Now()); err == nil {
		t.Fatal("a zero window was accepted")
	}
	if _, err := l.CountDaily(t.Context(), "u", "d", "o", 0, time.Now()); err == nil {
		t.Fatal("a zero limit was accepted")
	}
}

// BenchmarkLimiter: Redis's share of a policy check (dedupe lock and
// daily count).
func BenchmarkLimiter(b *testing.B) { policytest.Bench(b, benchLimiter(b)) }

// BenchmarkDailyCount: a claimed batch's daily counts, one by one and in
// one pipelined CountDailyBatch (issue 39 item 3).
func BenchmarkDailyCount(b *testing.B) { policytest.BenchDaily(b, benchLimiter(b)) }

// benchLimiter is a Limiter under a key prefix of its own, deleted after
// the benchmark.
func benchLimiter(b *testing.B) *redis.Limiter {
	rdb := client(b)
	prefix := "herald-bench:" + strconv.FormatInt(time.Now().UnixNano(), 36) + ":"
	b.Cleanup(func() {
		if keys, err := rdb.Keys(context.Background(), prefix+"*").Result(); err == nil && len(keys) > 0 {
			rdb.Del(context.Background(), keys...)
		}
	})
	l, err := redis.New(redis.Config{Client: rdb, Prefix: prefix})
	if err != nil {
		b.Fatal(err)
	}
	return l
}

// A Redis that lost its scripts (a restart, SCRIPT FLUSH) still counts a
// batch: the pipeline is sent again with the script's source, and what
// was counted before is found counted, not counted twice.
func TestCountDailyBatchAfterScriptFlush(t *testing.T) {
	rdb := client(t)
	l := newLimiter(t).(*redis.Limiter)
	day := "2026-03-14"
	item := func(owner string) heraldtype.DailyCount {
		return heraldtype.DailyCount{UserID: "u1", Day: day, Owner: owner, Limit: 2, ExpireAt: time.Now().Add(time.Hour)}
	}
	if ok, err := l.CountDaily(t.Context(), "u1", day, "a", 2, time.Now().Add(time.Hour)); !ok || err != nil {
		t.Fatalf("CountDaily = %v, %v", ok, err)
	}
	if err := rdb.ScriptFlush(t.Context()).Err(); err != nil {
		t.Fatal(err)
	}
	ok, err := l.CountDailyBatch(t.Context(), []heraldtype.DailyCount{item("a"), item("b"), item("c")})
	if err != nil || !slices.Equal(ok, []bool{true, true, false}) {
		t.Fatalf("CountDailyBatch after SCRIPT FLUSH = %v, %v; want [true true false]", ok, err)
	}
}
