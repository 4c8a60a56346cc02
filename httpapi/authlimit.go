package httpapi

import (
	"net"
	"net/http"
	"sync"
	"time"

	"golang.org/x/time/rate"
)

// DefaultMaxFailedAuthClients bounds the client addresses whose failed
// authentications are counted unless RateLimitConfig.FailedAuthClients
// says otherwise: a bucket is about 200 bytes, so ~2 MB at most.
const DefaultMaxFailedAuthClients = 10000

// authFailures limits failed authentications per client address (issue 23
// item 8): every refused credential takes a token from its address's
// bucket, and an address whose bucket is empty is answered 429 before its
// credential is looked at, so guessing keys costs the guesser time rather
// than Herald database lookups. Only failures count: a client that
// authenticates never touches its bucket.
type authFailures struct {
	lim RateLimit
	max int
	now func() time.Time

	mu        sync.Mutex
	buckets   map[string]*bucket
	lastSweep time.Time
}

func newAuthFailures(lim RateLimit, max int, now func() time.Time) *authFailures {
	if max == 0 {
		max = DefaultMaxFailedAuthClients
	}
	return &authFailures{lim: lim, max: max, now: now, buckets: map[string]*bucket{}}
}

// blocked reports whether addr has no failure left, and how long until it
// has one. It takes nothing from the bucket.
func (f *authFailures) blocked(addr string) (bool, time.Duration) {
	if f.lim.PerSecond == 0 {
		return false, 0
	}
	now := f.now()
	f.mu.Lock()
	defer f.mu.Unlock()
	b, ok := f.buckets[addr]
	if !ok {
		return false, 0
	}
	tokens := b.lim.TokensAt(now)
	if tokens >= 1 {
		return false, 0
	}
	return true, time.Duration((1 - tokens) / f.lim.PerSecond * float64(time.Second))
}

// fail counts one failed authentication from addr. The map is bounded:
// buckets that have refilled are dropped (at most once a sweepEvery), and
// when it is still full one arbitrary bucket makes room — an address
// flood then forgets some addresses early, which costs lookups, never
// memory.
func (f *authFailures) fail(addr string) {
	if f.lim.PerSecond == 0 {
		return
	}
	now := f.now()
	f.mu.Lock()
	defer f.mu.Unlock()
	b, ok := f.buckets[addr]
	if !ok {
		if len(f.buckets) >= f.max && now.Sub(f.lastSweep) >= sweepEvery {
			for k, old := range f.buckets {
				if now.Sub(old.lastUsed) > old.refill {
					delete(f.buckets, k)
				}
			}
			f.lastSweep = now
		}
		if len(f.buckets) >= f.max {
			for k := range f.buckets {
				delete(f.buckets, k)
				break
			}
		}
		refill := time.Duration(float64(f.lim.Burst) / f.lim.PerSecond * float64(time.Second))
		b = &bucket{lim: rate.NewLimiter(rate.Limit(f.lim.PerSecond), f.lim.Burst), refill: refill}
		f.buckets[addr] = b
	}
	b.lastUsed = now
	b.lim.AllowN(now, 1)
}

// clientAddr names the client of r for the failed-authentication limit:
// its IPv4 address, or its IPv6 /64 — one host commonly holds a whole
// /64, so counting single IPv6 addresses would count nothing.
func clientAddr(r *http.Request) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		host = r.RemoteAddr
	}
	ip := net.ParseIP(host)
	if ip == nil {
		return host
	}
	if v4 := ip.To4(); v4 != nil {
		return v4.String()
	}
	return ip.Mask(net.CIDRMask(64, 128)).String() + "/64"
}
