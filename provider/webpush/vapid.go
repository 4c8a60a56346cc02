package webpush

import (
	"crypto/ecdsa"
	"sync"
	"time"

	"github.com/golang-jwt/jwt/v5"
)

// VAPID token lifetimes (RFC 8292 §2: exp at most 24 h after the request).
const (
	// vapidLifetime is the exp Herald signs: half the allowed maximum, so a
	// push service whose clock runs hours ahead still accepts it.
	vapidLifetime = 12 * time.Hour
	// vapidRefresh renews a cached token this long before it expires, so
	// no request carries a token about to lapse in flight.
	vapidRefresh = time.Hour
	// maxVAPIDOrigins bounds the per-origin cache. Real deployments talk
	// to a handful of push services; the bound only stops crafted
	// endpoints from growing it without limit.
	maxVAPIDOrigins = 1024
)

// vapidSigner mints and caches the Authorization header per push-service
// origin (the JWT's aud), so a busy sender signs once per origin every
// ~11 hours instead of once per message.
type vapidSigner struct {
	key     *ecdsa.PrivateKey
	k       string // base64url public key, the header's k= parameter
	subject string
	now     func() time.Time

	mu    sync.Mutex
	cache map[string]vapidToken
}

type vapidToken struct {
	header string
	exp    time.Time
}

func newVAPIDSigner(key *ecdsa.PrivateKey, publicKey []byte, subject string, now func() time.Time) *vapidSigner {
	return &vapidSigner{key: key, k: b64(publicKey), subject: subject, now: now, cache: make(map[string]vapidToken)}
}

// header returns `vapid t=<jwt>, k=<public key>` for origin (RFC 8292 §3).
func (s *vapidSigner) header(origin string) (string, error) {
	now := s.now()
	s.mu.Lock()
	defer s.mu.Unlock()
	if t, ok := s.cache[origin]; ok && now.Before(t.exp.Add(-vapidRefresh)) {
		return t.header, nil
	}
	exp := now.Add(vapidLifetime)
	tok, err := jwt.NewWithClaims(jwt.SigningMethodES256, jwt.MapClaims{
		"aud": origin,
		"exp": exp.Unix(),
		"sub": s.subject,
	}).SignedString(s.key)
	if err != nil {
		return "", err
	}
	h := "vapid t=" + tok + ", k=" + s.k
	if len(s.cache) >= maxVAPIDOrigins {
		for o, t := range s.cache {
			if !now.Before(t.exp.Add(-vapidRefresh)) {
				delete(s.cache, o)
			}
		}
		if len(s.cache) >= maxVAPIDOrigins {
			clear(s.cache)
		}
	}
	s.cache[origin] = vapidToken{header: h, exp: exp}
	return h, nil
}
