package cli

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/heraldhq/herald/auth"
	"github.com/heraldhq/herald/store/sqlite"
)

// TestConsoleSessionConfig: console.session_idle and
// console.session_lifetime have the documented defaults, reach the
// sessions, and a value that would make a session endless or
// contradictory is refused naming the key (issue 34 item 1).
func TestConsoleSessionConfig(t *testing.T) {
	t.Parallel()
	st, err := sqlite.Open(t.Context(), filepath.Join(t.TempDir(), "h.db"), sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	keys, err := auth.NewKeys(auth.KeysConfig{Store: st})
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := loadConfig("", nil)
	if err != nil {
		t.Fatal(err)
	}
	if s, err := cfg.Console.sessions(st, keys); err != nil || s.IdleTimeout() != 30*time.Minute || s.Lifetime() != 12*time.Hour {
		t.Fatalf("defaults: %v, %v", s, err)
	}
	cfg, err = loadConfig("", []string{"HERALD_CONSOLE__SESSION_IDLE=5m", "HERALD_CONSOLE__SESSION_LIFETIME=1h"})
	if err != nil {
		t.Fatal(err)
	}
	if s, err := cfg.Console.sessions(st, keys); err != nil || s.IdleTimeout() != 5*time.Minute || s.Lifetime() != time.Hour {
		t.Fatalf("from the environment: %v, %v", s, err)
	}
	for _, c := range []struct {
		idle, lifetime time.Duration
		key            string
	}{
		{0, time.Hour, "console.session_idle"},
		{-time.Minute, time.Hour, "console.session_idle"},
		{time.Minute, 0, "console.session_lifetime"},
		{time.Minute, 721 * time.Hour, "console.session_lifetime"},
		{2 * time.Hour, time.Hour, "console.session_idle"},
	} {
		cc := ConsoleConfig{SessionIdle: c.idle, SessionLifetime: c.lifetime}
		if _, err := cc.sessions(st, keys); err == nil || !strings.Contains(err.Error(), c.key) {
			t.Errorf("idle %v, lifetime %v: %v, want an error naming %s", c.idle, c.lifetime, err, c.key)
		}
	}
}

// TestConsoleSecureCookieConfig: console.secure_cookie is auto by default,
// always from the environment, and anything else is refused naming it.
func TestConsoleSecureCookieConfig(t *testing.T) {
	t.Parallel()
	cfg, err := loadConfig("", nil)
	if err != nil {
		t.Fatal(err)
	}
	if s, err := cfg.Console.secureCookies(); err != nil || s || cfg.Console.SecureCookie != "auto" {
		t.Fatalf("default %q: %v, %v", cfg.Console.SecureCookie, s, err)
	}
	cfg, err = loadConfig("", []string{"HERALD_CONSOLE__SECURE_COOKIE=always"})
	if err != nil {
		t.Fatal(err)
	}
	if s, err := cfg.Console.secureCookies(); err != nil || !s {
		t.Fatalf("always: %v, %v", s, err)
	}
	if _, err := (ConsoleConfig{SecureCookie: "yes"}).secureCookies(); err == nil || !strings.Contains(err.Error(), "console.secure_cookie") {
		t.Fatalf("yes: %v, want an error naming console.secure_cookie", err)
	}
}
