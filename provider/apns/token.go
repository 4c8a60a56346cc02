package apns

import (
	"crypto/ecdsa"
	"sync"
	"sync/atomic"
	"time"

	"github.com/golang-jwt/jwt/v5"
)

// Apple's rule for provider tokens: APNs refuses a token older than an hour
// (ExpiredProviderToken) and one replaced more often than every 20 minutes
// (TooManyProviderTokenUpdates). Refreshing at 50 minutes stays inside both
// bounds with ten minutes to spare for clock skew and slow requests.
const (
	tokenRefreshAfter = 50 * time.Minute
	tokenMinInterval  = 20 * time.Minute
)

// providerToken is one signed JWT and when it was issued.
type providerToken struct {
	jwt string
	// refused is set once APNs called the token expired.
	refused bool
	// issued carries no monotonic reading, so ages are measured on the
	// wall clock APNs judges iat by: a process suspended for an hour sees
	// its token as an hour old, as APNs does.
	issued time.Time
}

// tokenSigner mints and caches the ES256 provider token. The fast path is
// one atomic load; minting is serialised so a burst of sends at refresh time
// mints one token, not one per send.
type tokenSigner struct {
	key    *ecdsa.PrivateKey
	keyID  string
	teamID string
	now    func() time.Time

	current atomic.Pointer[providerToken]

	mu sync.Mutex // serialises minting and guards holdUntil
	// holdUntil: APNs answered TooManyProviderTokenUpdates, so no token is
	// minted before this time unless there is none to use.
	holdUntil time.Time
}

func newTokenSigner(key *ecdsa.PrivateKey, keyID, teamID string, now func() time.Time) *tokenSigner {
	return &tokenSigner{key: key, keyID: keyID, teamID: teamID, now: now}
}

// token returns the provider token to send, minting one when there is none
// or the current one is tokenRefreshAfter old.
func (s *tokenSigner) token() (string, error) {
	now := s.now()
	if t := s.current.Load(); t.fresh(now) {
		return t.jwt, nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	t := s.current.Load()
	if t.fresh(now) {
		return t.jwt, nil // another goroutine minted meanwhile
	}
	if t != nil && now.Before(s.holdUntil) {
		// APNs answered TooManyProviderTokenUpdates: minting again would
		// only prolong that. The send may fail with this token; the
		// dispatcher's backoff carries the delivery past the hold.
		return t.jwt, nil
	}
	issued := now.Round(0)
	tok := jwt.NewWithClaims(jwt.SigningMethodES256, jwt.MapClaims{"iss": s.teamID, "iat": issued.Unix()})
	tok.Header["kid"] = s.keyID
	signed, err := tok.SignedString(s.key)
	if err != nil {
		return "", err
	}
	s.current.Store(&providerToken{jwt: signed, issued: issued})
	return signed, nil
}

// fresh reports whether t can be sent without minting a new token.
func (t *providerToken) fresh(now time.Time) bool {
	return t != nil && !t.refused && now.Sub(t.issued) < tokenRefreshAfter
}

// expired marks the token APNs answered ExpiredProviderToken for, so the
// next send mints a new one. Only the current token is marked: a token
// another goroutine already replaced stays, so a burst of refusals of one
// stale token mints once. This refresh may come sooner than Apple's
// 20-minute floor; APNs itself declared the token unusable, and the hold
// after TooManyProviderTokenUpdates stops a loop of them.
func (s *tokenSigner) expired(refused string) {
	if t := s.current.Load(); t != nil && t.jwt == refused && !t.refused {
		s.current.CompareAndSwap(t, &providerToken{jwt: t.jwt, issued: t.issued, refused: true})
	}
}

// tooManyUpdates records APNs' TooManyProviderTokenUpdates: no token is
// minted for tokenMinInterval, even when the current one is due for
// refresh or was called expired.
func (s *tokenSigner) tooManyUpdates() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.holdUntil = s.now().Add(tokenMinInterval)
}
