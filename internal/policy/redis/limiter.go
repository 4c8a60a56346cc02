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
// order. If Redis has lost the script (a restart, SCRIPT FLUSH), every
// item is sent again with its source: an item already counted is then
// found counted, so nothing is counted twice.
func (l *Limiter) CountDailyBatch(ctx context.Context, items []heraldtype.DailyCount) ([]bool, error) {
	if err := heraldtype.CheckDailyCounts(items); err != nil {
		return nil, fmt.Errorf("redis: %w", err)
	}
	if len(items) == 0 {
		return nil, nil
	}
	cmds, err := l.countPipeline(ctx, items, countScript.EvalSha)
	if err != nil && goredis.HasErrorPrefix(err, "NOSCRIPT") {
		cmds, err = l.countPipeline(ctx, items, countScript.Eval)
	}
	if err != nil {
		return nil, fmt.Errorf("redis: count daily cap: %w", err)
	}
	ok := make([]bool, len(items))
	for i, c := range cmds {
		n, err := c.Int()
		if err != nil {
			return nil, fmt.Errorf("redis: count daily cap: %w", err)
		}
		ok[i] = n == 1
	}
	return ok, nil
}

// countPipeline sends the count script for every item in one pipeline,
// run by eval (the script's EvalSha or Eval), and returns its commands.
func (l *Limiter) countPipeline(ctx context.Context, items []heraldtype.DailyCount,
	eval func(context.Context, goredis.Scripter, []string, ...any) *goredis.Cmd) ([]*goredis.Cmd, error) {
	pipe := l.rdb.Pipeline()
	cmds := make([]*goredis.Cmd, len(items))
	for i, c := range items {
		cmds[i] = eval(ctx, pipe, []string{l.dailyKey(c.UserID, c.Day)}, c.Owner, c.Limit, c.ExpireAt.UnixMilli())
	}
	_, err := pipe.Exec(ctx)
	return cmds, err
}
