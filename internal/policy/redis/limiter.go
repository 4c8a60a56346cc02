// Package redis is the Redis backend of the delivery policy's Limiter
// (--policy-store redis://…): dedupe locks and daily counts in Redis,
// each one atomic Lua script, every key with an expiry so nothing grows
// without bound. It behaves exactly like the SQL backend: both pass
// internal/policy/policytest.
package redis

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/heraldhq/herald/heraldtype"
	"github.com/heraldhq/herald/internal/policy"
)

// DefaultPrefix is the key prefix when Config.Prefix is empty.
const DefaultPrefix = "herald:policy:"

// Config configures a Limiter.
type Config struct {
	// Client is the Redis connection. Required; the Limiter never closes
	// it.
	Client goredis.UniversalClient
	// Prefix is prepended to every key; default DefaultPrefix. Two Herald
	// deployments sharing a Redis need different prefixes.
	Prefix string
}

// Limiter implements policy.Limiter on Redis.
type Limiter struct {
	rdb    goredis.UniversalClient
	prefix string
}

var _ policy.BatchLimiter = (*Limiter)(nil)

// New returns a Limiter.
func New(cfg Config) (*Limiter, error) {
	if cfg.Client == nil {
		return nil, errors.New("redis: Config.Client is required")
	}
	if cfg.Prefix == "" {
		cfg.Prefix = DefaultPrefix
	}
	return &Limiter{rdb: cfg.Client, prefix: cfg.Prefix}, nil
}

// Open parses a redis:// or rediss:// URL and returns a Limiter with its
// own client, and a function that closes that client.
func Open(url, prefix string) (*Limiter, func() error, error) {
	if !strings.HasPrefix(url, "redis://") && !strings.HasPrefix(url, "rediss://") {
		return nil, nil, fmt.Errorf("redis: policy store %q is not a redis:// or rediss:// URL", url)
	}
	opts, err := goredis.ParseURL(url)
	if err != nil {
		return nil, nil, fmt.Errorf("redis: policy store URL: %w", err)
	}
	rdb := goredis.NewClient(opts)
	l, err := New(Config{Client: rdb, Prefix: prefix})
	if err != nil {
		rdb.Close()
		return nil, nil, err
	}
	return l, rdb.Close, nil
}

// Ping reports whether Redis answers.
func (l *Limiter) Ping(ctx context.Context) error {
	if err := l.rdb.Ping(ctx).Err(); err != nil {
		return fmt.Errorf("redis: ping: %w", err)
	}
	return nil
}

// acquireScript is SET NX PX that also answers yes to the lock's owner:
// KEYS[1] the lock, ARGV[1] the owner, ARGV[2] the window in ms.
var acquireScript = goredis.NewScript(`
local cur = redis.call('GET', KEYS[1])
if not cur then
	redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
	return 1
end
if cur == ARGV[1] then return 1 end
return 0`)

// AcquireDedupe implements policy.Limiter. The lock expires by Redis's
// own clock (PX); now is not used, because Redis expires keys itself.
func (l *Limiter) AcquireDedupe(ctx context.Context, key, owner string, window time.Duration, _ time.Time) (bool, error) {
	if window < time.Millisecond {
		return false, fmt.Errorf("redis: dedupe window %s is shorter than a millisecond", window)
	}
	n, err := acquireScript.Run(ctx, l.rdb, []string{l.prefix + "dedupe:" + key}, owner, window.Milliseconds()).Int()
	if err != nil {
		return false, fmt.Errorf("redis: acquire dedupe lock: %w", err)
	}
	return n == 1, nil
}

// countScript counts a notification toward a day, once: KEYS[1] is the
// set of owners counted that day, ARGV[1] the owner, ARGV[2] the limit,
// ARGV[3] the expiry in unix ms.
var countScript = goredis.NewScript(`
if redis.call('SISMEMBER', KEYS[1], ARGV[1]) == 1 then return 1 end
if redis.call('SCARD', KEYS[1]) >= tonumber(ARGV[2]) then return 0 end
redis.call('SADD', KEYS[1], ARGV[1])
redis.call('PEXPIREAT', KEYS[1], ARGV[3])
return 1`)

// CountDaily implements policy.Limiter.
func (l *Limiter) CountDaily(ctx context.Context, userID, day, owner string, limit int, expireAt time.Time) (bool, error) {
	if limit < 1 {
		return false, fmt.Errorf("redis: daily limit %d must be at least 1", limit)
	}
	key := l.dailyKey(userID, day)
	n, err := countScript.Run(ctx, l.rdb, []string{key}, owner, limit, expireAt.UnixMilli()).Int()
	if err != nil {
		return false, fmt.Errorf("redis: count daily cap: %w", err)
	}
	return n == 1, nil
}

// dailyKey is the set of owners counted toward userID's day.
func (l *Limiter) dailyKey(userID, day string) string {
	return l.prefix + "daily:" + userID + "\x1f" + day
}

// CountDailyBatch implements policy.BatchLimiter: the count script once
// per item, pipelined in item order, so a later item sees what an earlier
// one counted and the batch costs one round trip. Each script is atomic,
// as CountDaily's; a cluster runs the items of one key on its node in
// order.
func (l *Limiter) CountDailyBatch(ctx context.Context, items []heraldtype.DailyCount) ([]bool, error) {
	if err := heraldtype.CheckDailyCounts(items); err != nil {
		return nil, fmt.Errorf("redis: %w", err)
	}
	ok, err := l.pipelined(ctx, countScript, len(items), func(i int) ([]string, []any) {
		c := items[i]
		return []string{l.dailyKey(c.UserID, c.Day)}, []any{c.Owner, c.Limit, c.ExpireAt.UnixMilli()}
	})
	if err != nil {
		return nil, fmt.Errorf("redis: count daily cap: %w", err)
	}
	return ok, nil
}

// AcquireDedupeBatch implements policy.DedupeBatchLimiter: the acquire
// script once per item, pipelined in item order (one round trip), so of
// two items of one key the first takes it and the second is answered by
// who holds it. now is not used, as in AcquireDedupe.
func (l *Limiter) AcquireDedupeBatch(ctx context.Context, items []heraldtype.DedupeLock, _ time.Time) ([]bool, error) {
	for _, d := range items {
		if d.Window < time.Millisecond {
			return nil, fmt.Errorf("redis: dedupe window %s is shorter than a millisecond", d.Window)
		}
	}
	ok, err := l.pipelined(ctx, acquireScript, len(items), func(i int) ([]string, []any) {
		return []string{l.prefix + "dedupe:" + items[i].Key}, []any{items[i].Owner, items[i].Window.Milliseconds()}
	})
	if err != nil {
		return nil, fmt.Errorf("redis: acquire dedupe locks: %w", err)
	}
	return ok, nil
}

// pipelined runs script for items 0…n-1 (their keys and arguments from
// item) in one pipeline, in order, and answers whether each returned 1.
// If Redis has lost the script (a restart, SCRIPT FLUSH), every item is
// sent again with its source: both scripts answer an item they already
// applied the same way again (a counted owner is found counted, a lock's
// owner holds it), so nothing is applied twice.
func (l *Limiter) pipelined(ctx context.Context, script *goredis.Script, n int, item func(i int) ([]string, []any)) ([]bool, error) {
	if n == 0 {
		return nil, nil
	}
	run := func(eval func(context.Context, goredis.Scripter, []string, ...any) *goredis.Cmd) ([]*goredis.Cmd, error) {
		pipe := l.rdb.Pipeline()
		cmds := make([]*goredis.Cmd, n)
		for i := range n {
			keys, args := item(i)
			cmds[i] = eval(ctx, pipe, keys, args...)
		}
		_, err := pipe.Exec(ctx)
		return cmds, err
	}
	cmds, err := run(script.EvalSha)
	if err != nil && goredis.HasErrorPrefix(err, "NOSCRIPT") {
		cmds, err = run(script.Eval)
	}
	if err != nil {
		return nil, err
	}
	ok := make([]bool, n)
	for i, c := range cmds {
		v, err := c.Int()
		if err != nil {
			return nil, err
		}
		ok[i] = v == 1
	}
	return ok, nil
}
