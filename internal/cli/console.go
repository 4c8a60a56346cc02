package cli

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"time"

	"github.com/heraldhq/herald"
	"github.com/heraldhq/herald/auth"
	"github.com/heraldhq/herald/console"
	"github.com/heraldhq/herald/store"
)

// consoleSessions is the console's sign-in outside --dev: auth.Sessions
// (sessions opened with an API key of the admin or console scope, kept in
// the database beside the keys) seen through console.Sessions.
type consoleSessions struct{ s *auth.Sessions }

var _ console.Sessions = consoleSessions{}

func (c consoleSessions) Create(ctx context.Context, apiKey string) (console.Session, string, error) {
	s, token, err := c.s.Create(ctx, apiKey)
	return toConsoleSession(s), token, err
}

func (c consoleSessions) Check(ctx context.Context, token string) (console.Session, error) {
	s, err := c.s.Check(ctx, token)
	return toConsoleSession(s), err
}

func (c consoleSessions) Revoke(ctx context.Context, token string) error {
	return c.s.Revoke(ctx, token)
}

func toConsoleSession(s auth.Session) console.Session {
	// The idle end is the one the console acts on: the session ends then
	// unless used again, and each use moves it.
	return console.Session{ID: s.ID, KeyID: s.KeyID, Scopes: s.Scopes, CSRF: s.CSRF, ExpiresAt: s.IdleExpiresAt}
}

// secureCookies reads console.secure_cookie: auto (Secure over TLS) or
// always (behind a proxy that ends TLS).
func (c ConsoleConfig) secureCookies() (bool, error) {
	switch c.SecureCookie {
	case "", "auto":
		return false, nil
	case "always":
		return true, nil
	}
	return false, fmt.Errorf("config: console.secure_cookie: %q must be auto (Secure over TLS) or always (behind a proxy that ends TLS)", c.SecureCookie)
}

// newConsole builds the operator console served at /console/: without
// sign-in in --dev, else with the sessions over the API keys. kafkaLag
// reports the Kafka intake's lag; nil when this process runs no intake.
func newConsole(cfg Config, client *herald.Client, st store.Store, keys *auth.Keys, dev bool, log *slog.Logger,
	kafkaLag func(context.Context) (int64, bool)) (http.Handler, error) {
	if cfg.Console.Refresh < time.Second {
		return nil, fmt.Errorf("config: console.refresh: %s must be at least 1s (how often the overview refreshes in the browser)", cfg.Console.Refresh)
	}
	ccfg := console.Config{Client: client, Dev: dev, Refresh: cfg.Console.Refresh, Logger: log, KafkaLag: kafkaLag}
	secure, err := cfg.Console.secureCookies()
	if err != nil {
		return nil, err
	}
	ccfg.SecureCookies = secure
	if !dev {
		s, err := cfg.Console.sessions(st, keys)
		if err != nil {
			return nil, err
		}
		ccfg.Sessions = consoleSessions{s}
	}
	c, err := console.New(ccfg)
	if err != nil {
		return nil, fmt.Errorf("console: %w", err)
	}
	return c, nil
}
