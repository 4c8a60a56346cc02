package httpapi

import (
	"errors"
	"math"
	"sync"
	"time"

	"golang.org/x/time/rate"
)

// RateLimit is one token bucket: PerSecond requests a second on average,
// bursts of up to Burst. A zero PerSecond means no limit.
type RateLimit struct {
	PerSecond float64
	Burst     int
}

// RateLimitConfig limits requests per principal: one bucket per server API
// key and one per user (a user token's sub), so one noisy app user or one
// runaway backend cannot starve the others. Over the limit the answer is
// 429 rate_limited with Retry-After.
type RateLimitConfig struct {
	APIKey RateLimit
	User   RateLimit
	// FailedAuth limits failed authentications per client address (an
	// IPv4 address or an IPv6 /64): each refused credential takes a
	// token, and an address without one is answered 429 rate_limited
	// with Retry-After before its credential is looked up. Zero: no
	// limit.
	FailedAuth RateLimit
	// FailedAuthClients bounds the addresses counted at once; default
	// DefaultMaxFailedAuthClients.
	FailedAuthClients int
	// PublicLinks limits the requests of one client address (an IPv4
	// address or an IPv6 /64) to the routes of the links in e-mails that
	// take no credential — the tracked links and open pixels (issue 35
	// item 2) — each of which may write a receipt: 429 rate_limited with
	// Retry-After over it. Mailbox providers' image proxies fetch the
	// pixels of all their users from a few addresses, so it is generous.
	// Zero: no limit.
	PublicLinks RateLimit
	// Now is the clock; default time.Now.
	Now func() time.Time
}

func (l RateLimit) validate(name string) error {
	if l.PerSecond < 0 || math.IsNaN(l.PerSecond) || math.IsInf(l.PerSecond, 0) || l.Burst < 0 {
		return errors.New("httpapi: RateLimit." + name + ": PerSecond and Burst must be finite and not negative")
	}
	if l.PerSecond > 0 && l.Burst == 0 {
		return errors.New("httpapi: RateLimit." + name + ": Burst must be at least 1 when PerSecond is set")
	}
	return nil
}

// limiters holds the buckets. Buckets idle long enough to have refilled
// are dropped (a full bucket is the same as a new one), so the map holds
// only recently active principals.
type limiters struct {
	key, user, public RateLimit
	now               func() time.Time
	failed            *authFailures

	mu        sync.Mutex
	buckets   map[string]*bucket
	lastSweep time.Time
}

type bucket struct {
	lim      *rate.Limiter
	lastUsed time.Time
	refill   time.Duration
}

// sweepEvery bounds how often the bucket map is scanned.
const sweepEvery = time.Minute

func newLimiters(c RateLimitConfig) (*limiters, error) {
	if err := c.APIKey.validate("APIKey"); err != nil {
		return nil, err
	}
	if err := c.User.validate("User"); err != nil {
		return nil, err
	}
	if err := c.FailedAuth.validate("FailedAuth"); err != nil {
		return nil, err
	}
	if err := c.PublicLinks.validate("PublicLinks"); err != nil {
		return nil, err
	}
	if c.FailedAuthClients < 0 {
		return nil, errors.New("httpapi: RateLimitConfig.FailedAuthClients must not be negative")
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	return &limiters{key: c.APIKey, user: c.User, public: c.PublicLinks, now: c.Now, buckets: map[string]*bucket{},
		failed: newAuthFailures(c.FailedAuth, c.FailedAuthClients, c.Now)}, nil
}

// allow takes one token from p's bucket, or says how long until one is
// there.
func (l *limiters) allow(p *principal) (bool, time.Duration) {
	cfg := l.key
	if p.userID != "" {
		cfg = l.user
	}
	return l.take(p.limitKey(), cfg)
}

// allowAddr takes one token from the public links' bucket of a client
// address (clientAddr), or says how long until one is there.
func (l *limiters) allowAddr(addr string) (bool, time.Duration) {
	return l.take("address "+addr, l.public)
}

// maxBuckets bounds the buckets held at once: past it, one arbitrary
// bucket makes room (an address flood then forgets some addresses early,
// which lets a few more requests through, never takes memory).
const maxBuckets = 100000

// take takes one token from bucket id of limit cfg.
func (l *limiters) take(id string, cfg RateLimit) (bool, time.Duration) {
	if cfg.PerSecond == 0 {
		return true, 0
	}
	now := l.now()
	l.mu.Lock()
	defer l.mu.Unlock()
	if now.Sub(l.lastSweep) >= sweepEvery {
		for k, b := range l.buckets {
			if now.Sub(b.lastUsed) > b.refill {
				delete(l.buckets, k)
			}
		}
		l.lastSweep = now
	}
	b, ok := l.buckets[id]
	if !ok {
		if len(l.buckets) >= maxBuckets {
			for k := range l.buckets {
				delete(l.buckets, k)
				break
			}
		}
		refill := time.Duration(float64(cfg.Burst) / cfg.PerSecond * float64(time.Second))
		b = &bucket{lim: rate.NewLimiter(rate.Limit(cfg.PerSecond), cfg.Burst), refill: refill}
		l.buckets[id] = b
	}
	b.lastUsed = now
	if b.lim.AllowN(now, 1) {
		return true, 0
	}
	missing := 1 - b.lim.TokensAt(now)
	return false, time.Duration(missing / cfg.PerSecond * float64(time.Second))
}

// retryAfterSeconds rounds a wait up to whole seconds, at least 1: the
// Retry-After header has second resolution, and 0 would invite an
// immediate retry that fails again.
func retryAfterSeconds(d time.Duration) int {
	s := int(math.Ceil(d.Seconds()))
	if s < 1 {
		return 1
	}
	return s
}
