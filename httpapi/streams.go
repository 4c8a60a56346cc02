package httpapi

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/heraldhq/herald/heraldtype"
)

// Stream defaults: an app holds one stream per open screen, a few per
// user; a server key that proxies streams for its users needs more; an
// hour bounds how long a stream lives on credentials checked once; a
// revoked key's streams close within a few seconds of the revocation
// reaching this instance (auth.Keys' cache TTL).
const (
	DefaultStreamMaxLifetime   = time.Hour
	DefaultStreamCheckInterval = 5 * time.Second
	DefaultMaxStreamsPerUser   = 4
	DefaultMaxStreamsPerKey    = 100
)

// StreamConfig bounds the inbox's SSE streams on this instance. Zero values
// take the defaults above; negative values do not limit.
type StreamConfig struct {
	// MaxLifetime: a stream is closed after it, with a final event; the
	// client reconnects with Last-Event-ID and misses nothing.
	MaxLifetime time.Duration
	// CheckInterval: how often a stream opened with an API key checks that
	// the key is still valid. A user token's stream closes at its exp.
	CheckInterval time.Duration
	// MaxPerUser caps the open streams of one user, MaxPerKey those opened
	// with one API key; one more is 429 rate_limited.
	MaxPerUser, MaxPerKey int
}

// streams counts the open streams per user and per key.
type streams struct {
	lifetime, check time.Duration
	perUser, perKey int

	mu sync.Mutex
	n  map[string]int
	// closing is closed by Server.CloseStreams: every stream ends.
	closing   chan struct{}
	closeOnce sync.Once
}

func newStreams(c StreamConfig) *streams {
	return &streams{lifetime: orDefault(c.MaxLifetime, DefaultStreamMaxLifetime),
		check:   orDefault(c.CheckInterval, DefaultStreamCheckInterval),
		perUser: intOrDefault(c.MaxPerUser, DefaultMaxStreamsPerUser),
		perKey:  intOrDefault(c.MaxPerKey, DefaultMaxStreamsPerKey), n: map[string]int{}, closing: make(chan struct{})}
}

// open counts a stream of userID opened by p, or refuses it over a cap;
// release uncounts it.
func (s *streams) open(userID string, p *principal) (release func(), err error) {
	user, key := "user:"+userID, ""
	if p.userID == "" {
		key = "key:" + p.keyID
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.perUser > 0 && s.n[user] >= s.perUser {
		return nil, heraldtype.Errorf(heraldtype.ERATELIMITED, "user %s already has %d open inbox streams, the limit per user; close one first", userID, s.perUser)
	}
	if key != "" && s.perKey > 0 && s.n[key] >= s.perKey {
		return nil, heraldtype.Errorf(heraldtype.ERATELIMITED, "this API key already has %d open inbox streams, the limit per key; close one first", s.perKey)
	}
	s.n[user]++
	if key != "" {
		s.n[key]++
	}
	return func() {
		s.mu.Lock()
		defer s.mu.Unlock()
		for _, k := range []string{user, key} {
			if k == "" {
				continue
			}
			if s.n[k]--; s.n[k] <= 0 {
				delete(s.n, k)
			}
		}
	}, nil
}

// streamEnd is why the server closed a stream: the cause of its context,
// and the data of its final "close" event.
type streamEnd struct {
	Reason  string `json:"reason"`
	Message string `json:"message"`
}

func (e *streamEnd) Error() string { return e.Reason }

// CloseStreams ends every open inbox stream, and every one opened after
// it, with a final "close" event (reason shutting_down; a WebSocket's close
// code 1001): http.Server.Shutdown does not end a stream, which never goes
// idle (SSE) or is no longer the server's connection (WebSocket). Register
// it with the http.Server's RegisterOnShutdown.
func (s *Server) CloseStreams() {
	s.streams.closeOnce.Do(func() { close(s.streams.closing) })
}

// watch ends ctx (through cancel, with a *streamEnd) when the stream
// reaches its lifetime, p's user token expires, p's API key is revoked, or
// the server shuts down.
// The returned channel closes when the watch is over.
func (s *streams) watch(ctx context.Context, cancel context.CancelCauseFunc, p *principal) <-chan struct{} {
	done := make(chan struct{})
	go func() {
		defer close(done)
		var lifetime, expiry, check <-chan time.Time
		if s.lifetime > 0 {
			t := time.NewTimer(s.lifetime)
			defer t.Stop()
			lifetime = t.C
		}
		if !p.expires.IsZero() {
			t := time.NewTimer(time.Until(p.expires))
			defer t.Stop()
			expiry = t.C
		}
		if p.recheck != nil && s.check > 0 {
			t := time.NewTicker(s.check)
			defer t.Stop()
			check = t.C
		}
		for {
			select {
			case <-ctx.Done():
				return
			case <-s.closing:
				cancel(&streamEnd{Reason: "shutting_down", Message: "the server is shutting down; reconnect with Last-Event-ID"})
				return
			case <-lifetime:
				cancel(&streamEnd{Reason: "max_lifetime", Message: fmt.Sprintf("the stream reached its maximum lifetime of %s; reconnect with Last-Event-ID", s.lifetime)})
				return
			case <-expiry:
				cancel(&streamEnd{Reason: "credentials_expired", Message: "the user token expired; reconnect with a new one"})
				return
			case <-check:
				var he *heraldtype.Error
				if err := p.recheck(ctx); errors.As(err, &he) && he.Code == heraldtype.EUNAUTHENTICATED {
					cancel(&streamEnd{Reason: "credentials_revoked", Message: "the API key was revoked"})
					return
				}
				// Any other error is the database's: keep the stream and
				// check again at the next tick.
			}
		}
	}()
	return done
}
