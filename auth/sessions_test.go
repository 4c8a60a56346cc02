package auth_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/heraldhq/herald/auth"
	"github.com/heraldhq/herald/heraldtype"
	"github.com/heraldhq/herald/store"
	"github.com/heraldhq/herald/store/sqlite"
)

// countingSessions counts the writes that touch a session, to check that
// a page view does not write.
type countingSessions struct {
	store.ConsoleSessions
	mu      sync.Mutex
	touches int
}

func (c *countingSessions) TouchConsoleSession(ctx context.Context, id string, now time.Time) error {
	c.mu.Lock()
	c.touches++
	c.mu.Unlock()
	return c.ConsoleSessions.TouchConsoleSession(ctx, id, now)
}

func (c *countingSessions) Touches() int { c.mu.Lock(); defer c.mu.Unlock(); return c.touches }

// sessionEnv is Sessions over a real SQLite store, with a settable clock
// shared by the keys' cache and the sessions.
type sessionEnv struct {
	t        *testing.T
	ctx      context.Context
	db       *sqlite.Store
	clk      *clock
	keys     *auth.Keys
	store    *countingSessions
	sessions *auth.Sessions
}

const testBootstrap = "0123456789abcdef0123456789abcdef"

func newSessionEnv(t *testing.T, cfg auth.SessionsConfig) *sessionEnv {
	t.Helper()
	ctx := t.Context()
	db, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "h.db"), sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.Close() })
	if err := db.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	e := &sessionEnv{t: t, ctx: ctx, db: db, clk: &clock{t: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)},
		store: &countingSessions{ConsoleSessions: db}}
	e.keys = e.newKeys(testBootstrap)
	cfg.Store, cfg.Keys, cfg.Now = e.store, e.keys, e.clk.Now
	if e.sessions, err = auth.NewSessions(cfg); err != nil {
		t.Fatal(err)
	}
	return e
}

// newKeys is another Keys over the same database (another instance, or
// this one restarted with another bootstrap key).
func (e *sessionEnv) newKeys(bootstrap string) *auth.Keys {
	e.t.Helper()
	k, err := auth.NewKeys(auth.KeysConfig{Store: e.db, Bootstrap: bootstrap, Now: e.clk.Now})
	if err != nil {
		e.t.Fatal(err)
	}
	return k
}

func (e *sessionEnv) key(name string, scopes ...auth.Scope) (auth.Key, string) {
	e.t.Helper()
	k, secret, err := e.keys.Create(e.ctx, name, scopes)
	if err != nil {
		e.t.Fatal(err)
	}
	return k, secret
}

func (e *sessionEnv) signIn(apiKey string) (auth.Session, string) {
	e.t.Helper()
	s, token, err := e.sessions.Create(e.ctx, apiKey)
	if err != nil {
		e.t.Fatalf("sign in: %v", err)
	}
	return s, token
}

func (e *sessionEnv) mustCheck(token string) auth.Session {
	e.t.Helper()
	s, err := e.sessions.Check(e.ctx, token)
	if err != nil {
		e.t.Fatalf("Check at +%v: %v", e.clk.Now().Sub(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)), err)
	}
	return s
}

func (e *sessionEnv) refused(token, what string) {
	e.t.Helper()
	if _, err := e.sessions.Check(e.ctx, token); heraldtype.ErrorCode(err) != heraldtype.EUNAUTHENTICATED {
		e.t.Fatalf("%s: Check = %v, want unauthenticated", what, err)
	}
}

func (c *clock) Set(t time.Time) { c.mu.Lock(); defer c.mu.Unlock(); c.t = t }

func hashOf(token string) string {
	sum := sha256.Sum256([]byte(token))
	return hex.EncodeToString(sum[:])
}

// A console or admin key signs in; the session's token is 256 random bits
// stored only as its hash; Check answers the key's identity, scopes and a
// CSRF token the session alone can show.
func TestSessionSignIn(t *testing.T) {
	t.Parallel()
	e := newSessionEnv(t, auth.SessionsConfig{})
	ck, consoleKey := e.key("viewer", auth.ScopeConsole)
	_, adminKey := e.key("ops", auth.ScopeAdmin)

	s, token := e.signIn(consoleKey)
	if len(token) != 43 || strings.ContainsAny(token, "+/=") {
		t.Errorf("session token %q is not 32 bytes of unpadded base64url", token)
	}
	if s.KeyID != ck.ID || s.KeyName != "viewer" || len(s.Scopes) != 1 || s.Scopes[0] != auth.ScopeConsole {
		t.Errorf("session = %+v", s)
	}
	if !s.ExpiresAt.Equal(e.clk.Now().Add(auth.DefaultSessionLifetime)) || !s.IdleExpiresAt.Equal(e.clk.Now().Add(auth.DefaultSessionIdle)) {
		t.Errorf("ExpiresAt = %v, IdleExpiresAt = %v; want sign-in + %v, + %v", s.ExpiresAt, s.IdleExpiresAt,
			auth.DefaultSessionLifetime, auth.DefaultSessionIdle)
	}
	if !s.Grants(auth.ScopeDeliveriesRead) || s.Grants(auth.ScopeDeliveriesAdmin) {
		t.Errorf("a console session must read deliveries and not replay them")
	}
	row, err := e.db.GetConsoleSession(e.ctx, hashOf(token))
	if err != nil {
		t.Fatalf("the session is not stored under its token's SHA-256: %v", err)
	}
	if row.ID != s.ID || row.KeyID != ck.ID || strings.Contains(row.TokenHash+row.ID+row.KeyFingerprint, token) {
		t.Errorf("stored row = %+v", row)
	}

	got := e.mustCheck(token)
	if got.ID != s.ID || got.KeyID != ck.ID || got.CSRF != s.CSRF || got.CSRF == "" {
		t.Errorf("Check = %+v, want %+v", got, s)
	}
	if !got.ValidCSRF(s.CSRF) || got.ValidCSRF("") || got.ValidCSRF(s.CSRF[:len(s.CSRF)-1]) || got.ValidCSRF(token) {
		t.Error("ValidCSRF accepts the wrong tokens or refuses the right one")
	}

	a, adminToken := e.signIn(adminKey)
	if a.CSRF == s.CSRF || adminToken == token || a.ID == s.ID {
		t.Error("two sessions share a token, an id or a CSRF token")
	}
	if !e.mustCheck(adminToken).Grants(auth.ScopeDeliveriesAdmin) {
		t.Error("an admin session must be allowed to replay")
	}

	for _, bad := range []string{"", "x", token + "A", strings.Repeat("A", 43), strings.Repeat("!", 43)} {
		e.refused(bad, "token "+bad)
	}
}

// Only a key that grants the console scope signs in: another key is
// permission_denied, a bad or revoked key unauthenticated.
func TestSessionSignInRefused(t *testing.T) {
	t.Parallel()
	e := newSessionEnv(t, auth.SessionsConfig{})
	_, writer := e.key("backend", auth.ScopeNotificationsWrite, auth.ScopeDeliveriesRead)
	revoked, revokedKey := e.key("gone", auth.ScopeAdmin)
	if err := e.keys.Revoke(e.ctx, revoked.ID); err != nil {
		t.Fatal(err)
	}
	cases := map[string]string{writer: heraldtype.EPERMISSIONDENIED, revokedKey: heraldtype.EUNAUTHENTICATED,
		"hk_nope": heraldtype.EUNAUTHENTICATED, "": heraldtype.EUNAUTHENTICATED}
	for key, code := range cases {
		if _, _, err := e.sessions.Create(e.ctx, key); heraldtype.ErrorCode(err) != code {
			t.Errorf("Create(%.20q) = %v, want %s", key, err, code)
		}
	}
}

// A page view does not write: the last use is recorded at most once a
// minute. A session used within the idle timeout lives on, to its
// absolute lifetime and no longer; one left idle ends.
func TestSessionExpiry(t *testing.T) {
	t.Parallel()
	e := newSessionEnv(t, auth.SessionsConfig{})
	_, key := e.key("viewer", auth.ScopeConsole)
	_, token := e.signIn(key)

	for range 10 {
		e.clk.Add(5 * time.Second)
		e.mustCheck(token)
	}
	if n := e.store.Touches(); n != 0 {
		t.Fatalf("%d writes within the first minute, want none", n)
	}
	e.clk.Add(10 * time.Second) // one minute since sign-in
	if s := e.mustCheck(token); !s.LastSeenAt.Equal(e.clk.Now()) {
		t.Errorf("LastSeenAt = %v after a touch, want %v", s.LastSeenAt, e.clk.Now())
	}
	e.mustCheck(token)
	if n := e.store.Touches(); n != 1 {
		t.Fatalf("%d writes after a minute, want 1", n)
	}

	// Used every 20 minutes, the session lasts its 12 hours, then ends.
	signedIn := e.clk.Now().Add(-time.Minute)
	for e.clk.Now().Add(20 * time.Minute).Before(signedIn.Add(auth.DefaultSessionLifetime)) {
		e.clk.Add(20 * time.Minute)
		e.mustCheck(token)
	}
	if s := e.mustCheck(token); !s.IdleExpiresAt.Equal(s.ExpiresAt) {
		t.Errorf("near its end, IdleExpiresAt = %v, want ExpiresAt %v", s.IdleExpiresAt, s.ExpiresAt)
	}
	e.clk.Set(signedIn.Add(auth.DefaultSessionLifetime))
	e.refused(token, "at its absolute end")
	if _, err := e.db.GetConsoleSession(e.ctx, hashOf(token)); heraldtype.ErrorCode(err) != heraldtype.ENOTFOUND {
		t.Errorf("an ended session's row is still there: %v", err)
	}

	// Idle for the idle timeout, a session ends.
	_, idle := e.signIn(key)
	e.clk.Add(auth.DefaultSessionIdle - time.Second)
	e.mustCheck(idle)
	e.clk.Add(auth.DefaultSessionIdle)
	e.refused(idle, "idle for the idle timeout")
}

// Sign-out ends the session; signing out twice, or with a token that is
// no session, is not an error.
func TestSessionRevoke(t *testing.T) {
	t.Parallel()
	e := newSessionEnv(t, auth.SessionsConfig{})
	_, key := e.key("viewer", auth.ScopeConsole)
	_, token := e.signIn(key)
	_, other := e.signIn(key)
	for range 2 {
		if err := e.sessions.Revoke(e.ctx, token); err != nil {
			t.Fatalf("Revoke: %v", err)
		}
	}
	e.refused(token, "signed out")
	e.mustCheck(other)
	if err := e.sessions.Revoke(e.ctx, "not a session"); err != nil {
		t.Fatalf("Revoke of garbage: %v", err)
	}
}

// Revoking the key ends its sessions: at once on the instance that
// revoked it, within the key cache TTL on another.
func TestSessionEndsWithItsKey(t *testing.T) {
	t.Parallel()
	e := newSessionEnv(t, auth.SessionsConfig{})
	k, key := e.key("viewer", auth.ScopeConsole)
	_, here := e.signIn(key)
	_, there := e.signIn(key)

	other, err := auth.NewSessions(auth.SessionsConfig{Store: e.db, Keys: e.newKeys(testBootstrap), Now: e.clk.Now})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := other.Check(e.ctx, there); err != nil { // the other instance caches the key
		t.Fatal(err)
	}
	if err := e.keys.Revoke(e.ctx, k.ID); err != nil {
		t.Fatal(err)
	}
	e.refused(here, "the key revoked on this instance")
	e.clk.Add(auth.DefaultKeyCacheTTL - time.Second)
	if _, err := other.Check(e.ctx, there); err != nil {
		t.Fatalf("another instance within the key cache TTL: %v (it had not yet seen the revocation)", err)
	}
	e.clk.Add(time.Second)
	if _, err := other.Check(e.ctx, there); heraldtype.ErrorCode(err) != heraldtype.EUNAUTHENTICATED {
		t.Fatalf("another instance after the key cache TTL: %v, want unauthenticated", err)
	}
}

// The bootstrap key signs in; its sessions end when the configuration
// changes or removes it.
func TestSessionBootstrapKey(t *testing.T) {
	t.Parallel()
	e := newSessionEnv(t, auth.SessionsConfig{})
	s, token := e.signIn(testBootstrap)
	if s.KeyID != auth.BootstrapKeyID || !s.Grants(auth.ScopeAdmin) {
		t.Fatalf("bootstrap session = %+v", s)
	}
	e.mustCheck(token)
	for name, boot := range map[string]string{"changed": strings.Repeat("z", 40), "removed": ""} {
		restarted, err := auth.NewSessions(auth.SessionsConfig{Store: e.db, Keys: e.newKeys(boot), Now: e.clk.Now})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := restarted.Check(e.ctx, token); heraldtype.ErrorCode(err) != heraldtype.EUNAUTHENTICATED {
			t.Fatalf("bootstrap key %s: Check = %v, want unauthenticated", name, err)
		}
		// The refusal deleted the row; put it back for the next case.
		if _, err := e.db.GetConsoleSession(e.ctx, hashOf(token)); heraldtype.ErrorCode(err) == heraldtype.ENOTFOUND {
			s, token = e.signIn(testBootstrap)
		}
	}
}

// Every sign-in deletes the sessions that have ended, so the table holds
// the sessions of one lifetime and no maintenance service is needed.
func TestSessionPrunedAtSignIn(t *testing.T) {
	t.Parallel()
	e := newSessionEnv(t, auth.SessionsConfig{IdleTimeout: 10 * time.Minute, Lifetime: time.Hour})
	_, key := e.key("viewer", auth.ScopeConsole)
	_, old := e.signIn(key)
	e.clk.Add(10 * time.Minute)
	_, fresh := e.signIn(key)
	if _, err := e.db.GetConsoleSession(e.ctx, hashOf(old)); heraldtype.ErrorCode(err) != heraldtype.ENOTFOUND {
		t.Fatalf("the idle session survived a sign-in: %v", err)
	}
	e.mustCheck(fresh)
	if n, err := e.sessions.Prune(e.ctx); err != nil || n != 0 {
		t.Fatalf("Prune = %d, %v; want 0", n, err)
	}
}

// A short idle timeout is touched often enough that a session in use
// does not end: a tenth of the timeout, not a minute.
func TestSessionShortIdle(t *testing.T) {
	t.Parallel()
	e := newSessionEnv(t, auth.SessionsConfig{IdleTimeout: time.Minute, Lifetime: time.Hour})
	_, key := e.key("viewer", auth.ScopeConsole)
	_, token := e.signIn(key)
	for range 20 {
		e.clk.Add(50 * time.Second)
		e.mustCheck(token)
	}
}

func TestSessionsConfig(t *testing.T) {
	t.Parallel()
	e := newSessionEnv(t, auth.SessionsConfig{})
	if e.sessions.IdleTimeout() != auth.DefaultSessionIdle || e.sessions.Lifetime() != auth.DefaultSessionLifetime {
		t.Errorf("defaults = %v, %v", e.sessions.IdleTimeout(), e.sessions.Lifetime())
	}
	bad := []auth.SessionsConfig{
		{Store: e.db},
		{Keys: e.keys},
		{Store: e.db, Keys: e.keys, IdleTimeout: -time.Minute},
		{Store: e.db, Keys: e.keys, Lifetime: -time.Minute},
		{Store: e.db, Keys: e.keys, IdleTimeout: 2 * time.Hour, Lifetime: time.Hour},
		{Store: e.db, Keys: e.keys, Lifetime: auth.MaxSessionLifetime + time.Hour},
	}
	for _, cfg := range bad {
		if _, err := auth.NewSessions(cfg); err == nil {
			t.Errorf("NewSessions(idle %v, lifetime %v, store %v, keys %v) accepted",
				cfg.IdleTimeout, cfg.Lifetime, cfg.Store != nil, cfg.Keys != nil)
		}
	}
}

// Keys.ByID answers a key by id, revoked or not, through the cache, and
// the bootstrap key while one is configured.
func TestKeysByID(t *testing.T) {
	t.Parallel()
	e := newSessionEnv(t, auth.SessionsConfig{})
	k, _ := e.key("viewer", auth.ScopeConsole)
	got, err := e.keys.ByID(e.ctx, k.ID)
	if err != nil || got.ID != k.ID || got.RevokedAt != nil {
		t.Fatalf("ByID = %+v, %v", got, err)
	}
	if err := e.keys.Revoke(e.ctx, k.ID); err != nil {
		t.Fatal(err)
	}
	if got, err = e.keys.ByID(e.ctx, k.ID); err != nil || got.RevokedAt == nil {
		t.Fatalf("ByID of a revoked key = %+v, %v", got, err)
	}
	for _, id := range []string{"aaaaaaaaaaaaaaaa", "not an id", ""} {
		if _, err := e.keys.ByID(e.ctx, id); heraldtype.ErrorCode(err) != heraldtype.ENOTFOUND {
			t.Errorf("ByID(%q) = %v, want not_found", id, err)
		}
	}
	if b, err := e.keys.ByID(e.ctx, auth.BootstrapKeyID); err != nil || !auth.Grants(b.Scopes, auth.ScopeAdmin) {
		t.Errorf("ByID(bootstrap) = %+v, %v", b, err)
	}
	if _, err := e.newKeys("").ByID(e.ctx, auth.BootstrapKeyID); heraldtype.ErrorCode(err) != heraldtype.ENOTFOUND {
		t.Errorf("ByID(bootstrap) without a bootstrap key = %v, want not_found", err)
	}
}
