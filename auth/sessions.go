package auth

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/heraldhq/herald/heraldtype"
	"github.com/heraldhq/herald/store"
)

// An operator signs in to the console with an API key of the admin or
// the console scope, once; the console then holds a session token (issue
// 34 item 1) instead of the key, so the key is not kept in the browser.
//
// The session token is 32 random bytes in unpadded base64url (43
// characters). Only its SHA-256 is stored, for the reason API keys are
// stored that way: a 256-bit random secret needs no slow hash, and a
// database dump signs no one in. A session ends at the first of:
//   - its absolute lifetime after sign-in (SessionsConfig.Lifetime),
//   - its idle timeout after it was last used (SessionsConfig.IdleTimeout),
//   - sign-out (Revoke),
//   - the revocation of the API key it was made with: every Check looks
//     the key up again through Keys.ByID, whose cache makes that free
//     within the key cache TTL and makes a revocation reach sessions
//     exactly as fast as it reaches the API,
//   - for the bootstrap key, its removal or change in the configuration.
//
// The bootstrap key may sign in: on a fresh deployment it can be the
// only key there is, and it is an admin key like any other. Its sessions
// record a fingerprint of it (Keys.bootstrapFingerprint), so they end when
// it is changed or removed, as a database key's end when it is revoked.
//
// The CSRF token is derived, not stored: HMAC-SHA256 keyed with the
// session token. Only the holder of the session token can compute it, it
// cannot be out of step with its session on any instance, the database
// holds nothing more an attacker could use, and knowing it reveals
// nothing of the session token (HMAC is one-way in its key).
//
// Expired rows are deleted at each sign-in (Create) rather than by a
// leader maintenance service: rows are only ever added by a sign-in, so
// pruning there keeps the table at the sessions of one lifetime — a
// handful per operator — with one small DELETE per sign-in, and needs no
// service, interval or configuration of its own. Check also deletes a
// session it finds ended.

const (
	// DefaultSessionIdle ends a console session not used for this long.
	DefaultSessionIdle = 30 * time.Minute
	// DefaultSessionLifetime ends a console session this long after
	// sign-in, however active.
	DefaultSessionLifetime = 12 * time.Hour
	// MaxSessionLifetime bounds the lifetime a configuration may ask for:
	// a console session lasting more than a month is a key kept in a
	// browser by another name.
	MaxSessionLifetime = 30 * 24 * time.Hour
	// sessionTokenBytes is the session token's randomness (256 bits).
	sessionTokenBytes = 32
	// maxTouchInterval: a session's last use is written at most once a
	// minute, so a page view (and each of its live refreshes) costs no
	// database write. A shorter idle timeout touches more often (a tenth
	// of it), so that the lag cannot end a session in use.
	maxTouchInterval = time.Minute
	// csrfLabel is the HMAC message the CSRF token is derived with; the
	// label keeps the token from equalling any other HMAC of the session
	// token Herald might compute later.
	csrfLabel = "herald console csrf v1"
)

var sessionEncoding = base64.RawURLEncoding

// Session is a console sign-in as the console sees it: never the session
// token, never its hash.
type Session struct {
	// ID names the session in logs; it is not a secret.
	ID string
	// KeyID and KeyName are the API key the operator signed in with
	// (BootstrapKeyID for the bootstrap key).
	KeyID   string
	KeyName string
	// Scopes are the key's scopes: ScopeAdmin, ScopeConsole or both, with
	// whatever else the key holds. Ask Grants (or Session.Grants) what
	// they allow, as the API does.
	Scopes []Scope
	// CSRF is the token every state-changing request of this session must
	// carry (a form field or header); check it with ValidCSRF.
	CSRF       string
	CreatedAt  time.Time
	LastSeenAt time.Time
	// ExpiresAt is the absolute end; the session ends earlier if it is
	// idle for the idle timeout, signed out, or its key revoked. A cookie
	// carrying the session token should expire then too.
	ExpiresAt time.Time
	// IdleExpiresAt is when the session ends unless it is used again:
	// LastSeenAt plus the idle timeout, or ExpiresAt if that is sooner.
	// LastSeenAt is recorded at most once a minute, so the session may
	// end up to a minute before an operator would count.
	IdleExpiresAt time.Time
}

// Grants reports whether the session may do what needs want, by the
// rules the API applies to its key (Grants).
func (s Session) Grants(want Scope) bool { return Grants(s.Scopes, want) }

// ValidCSRF reports, in constant time, whether token is this session's
// CSRF token. An empty token is never valid.
func (s Session) ValidCSRF(token string) bool {
	return token != "" && s.CSRF != "" && subtle.ConstantTimeCompare([]byte(token), []byte(s.CSRF)) == 1
}

// SessionsConfig configures Sessions.
type SessionsConfig struct {
	// Store holds the sessions. Required.
	Store store.ConsoleSessions
	// Keys authenticates the key a sign-in presents and looks it up again
	// on every Check. Required.
	Keys *Keys
	// IdleTimeout: see DefaultSessionIdle (the default). It must not be
	// negative nor exceed Lifetime.
	IdleTimeout time.Duration
	// Lifetime: see DefaultSessionLifetime (the default). At most
	// MaxSessionLifetime; not negative.
	Lifetime time.Duration
	// Now is the clock; default time.Now.
	Now func() time.Time
}

// Sessions creates, checks and ends console sessions. It is safe for
// concurrent use, and for use by several instances over one database.
type Sessions struct {
	store    store.ConsoleSessions
	keys     *Keys
	idle     time.Duration
	lifetime time.Duration
	touch    time.Duration
	now      func() time.Time
}

// NewSessions validates cfg and builds Sessions.
func NewSessions(cfg SessionsConfig) (*Sessions, error) {
	if cfg.Store == nil || cfg.Keys == nil {
		return nil, errors.New("auth: SessionsConfig.Store and SessionsConfig.Keys are required")
	}
	s := &Sessions{store: cfg.Store, keys: cfg.Keys, idle: cfg.IdleTimeout, lifetime: cfg.Lifetime, now: cfg.Now}
	if s.idle == 0 {
		s.idle = DefaultSessionIdle
	}
	if s.lifetime == 0 {
		s.lifetime = DefaultSessionLifetime
	}
	if s.now == nil {
		s.now = time.Now
	}
	switch {
	case s.idle < 0 || s.lifetime < 0:
		return nil, fmt.Errorf("auth: the console session idle timeout (%v) and lifetime (%v) must be positive", s.idle, s.lifetime)
	case s.lifetime > MaxSessionLifetime:
		return nil, fmt.Errorf("auth: the console session lifetime (%v) must be at most %v", s.lifetime, MaxSessionLifetime)
	case s.idle > s.lifetime:
		return nil, fmt.Errorf("auth: the console session idle timeout (%v) must not exceed its lifetime (%v)", s.idle, s.lifetime)
	}
	s.touch = min(maxTouchInterval, s.idle/10)
	return s, nil
}

// IdleTimeout is how long a session may go unused.
func (s *Sessions) IdleTimeout() time.Duration { return s.idle }

// Lifetime is how long a session lasts after sign-in at most.
func (s *Sessions) Lifetime() time.Duration { return s.lifetime }

// The answers of Check for a session that does not (or no longer) work.
// They are all unauthenticated, so the console sends the operator to
// sign in again; the message says why, which tells nobody without a
// valid session token anything.
var (
	errNoSession      = heraldtype.Errorf(heraldtype.EUNAUTHENTICATED, "the console session is not valid; sign in again")
	errSessionExpired = heraldtype.Errorf(heraldtype.EUNAUTHENTICATED, "the console session has expired; sign in again")
	errSessionKey     = heraldtype.Errorf(heraldtype.EUNAUTHENTICATED, "the API key this console session was made with no longer works; sign in again")
)

// Create signs in with an API key (the bearer string hk_…, or the
// bootstrap key): it must authenticate (else unauthenticated, as the API
// answers) and grant ScopeConsole — the console or the admin scope — (else
// permission_denied). It returns the session and its token, which is
// shown this once (the console's cookie) and stored only as a hash. A
// database failure is returned as is.
func (s *Sessions) Create(ctx context.Context, apiKeyToken string) (Session, string, error) {
	key, err := s.keys.Authenticate(ctx, apiKeyToken)
	if err != nil {
		return Session{}, "", err
	}
	if !Grants(key.Scopes, ScopeConsole) {
		return Session{}, "", heraldtype.Errorf(heraldtype.EPERMISSIONDENIED,
			"the API key %s may not sign in to the console: it needs the %s or the %s scope", key.ID, ScopeConsole, ScopeAdmin)
	}
	now := s.now().UTC()
	if _, err := s.store.PruneConsoleSessions(ctx, now, now.Add(-s.idle)); err != nil {
		return Session{}, "", fmt.Errorf("auth: prune console sessions: %w", err)
	}
	var raw [sessionTokenBytes]byte
	var idb [keyIDBytes]byte
	_, _ = rand.Read(raw[:]) // crypto/rand.Read never fails (Go 1.24+).
	_, _ = rand.Read(idb[:])
	token := sessionEncoding.EncodeToString(raw[:])
	row := store.ConsoleSession{
		ID:        strings.ToLower(keyEncoding.EncodeToString(idb[:])),
		TokenHash: hashKey(token),
		KeyID:     key.ID,
		CreatedAt: now, LastSeenAt: now, ExpiresAt: now.Add(s.lifetime),
	}
	if key.ID == BootstrapKeyID {
		row.KeyFingerprint = s.keys.bootstrapFingerprint()
	}
	if err := s.store.CreateConsoleSession(ctx, row); err != nil {
		return Session{}, "", fmt.Errorf("auth: create console session: %w", err)
	}
	return s.toSession(row, key, token), token, nil
}

// Check returns the session whose token this is, or an unauthenticated
// error if there is none or it has ended (see the package comment on
// sessions). It records the use at most once per touch interval, so most
// checks are one indexed read and a cached key lookup. A database
// failure is returned as is.
func (s *Sessions) Check(ctx context.Context, token string) (Session, error) {
	hash, ok := sessionHash(token)
	if !ok {
		return Session{}, errNoSession
	}
	row, err := s.store.GetConsoleSession(ctx, hash)
	if isNotFound(err) {
		return Session{}, errNoSession
	}
	if err != nil {
		return Session{}, fmt.Errorf("auth: look up console session: %w", err)
	}
	// The database found the row by the hash already; comparing again in
	// constant time keeps the answer independent of how a store matches.
	if subtle.ConstantTimeCompare([]byte(row.TokenHash), []byte(hash)) != 1 {
		return Session{}, errNoSession
	}
	now := s.now().UTC()
	if !now.Before(row.ExpiresAt) || !now.Before(row.LastSeenAt.Add(s.idle)) {
		s.end(ctx, row.ID)
		return Session{}, errSessionExpired
	}
	key, err := s.sessionKey(ctx, row)
	if err != nil {
		if errors.Is(err, errSessionKey) {
			s.end(ctx, row.ID)
		}
		return Session{}, err
	}
	if now.Sub(row.LastSeenAt) >= s.touch {
		err := s.store.TouchConsoleSession(ctx, row.ID, now)
		if isNotFound(err) { // signed out a moment ago, on another instance
			return Session{}, errNoSession
		}
		if err != nil {
			return Session{}, fmt.Errorf("auth: touch console session %s: %w", row.ID, err)
		}
		row.LastSeenAt = now
	}
	return s.toSession(row, key, token), nil
}

// sessionKey looks the session's key up again: it must still exist, be
// unrevoked and grant ScopeConsole; errSessionKey otherwise.
func (s *Sessions) sessionKey(ctx context.Context, row store.ConsoleSession) (Key, error) {
	key, err := s.keys.ByID(ctx, row.KeyID)
	if isNotFound(err) {
		return Key{}, errSessionKey
	}
	if err != nil {
		return Key{}, err
	}
	if key.ID == BootstrapKeyID &&
		subtle.ConstantTimeCompare([]byte(row.KeyFingerprint), []byte(s.keys.bootstrapFingerprint())) != 1 {
		return Key{}, errSessionKey
	}
	if key.RevokedAt != nil || !Grants(key.Scopes, ScopeConsole) {
		return Key{}, errSessionKey
	}
	return key, nil
}

// end deletes a session Check found ended. It is best effort: the session
// is refused whether or not the delete succeeds, and the next sign-in's
// pruning removes what is left.
func (s *Sessions) end(ctx context.Context, id string) {
	_ = s.store.DeleteConsoleSession(ctx, id)
}

// Revoke signs out: the session stops working on every instance at once
// (Check reads the store each time). Signing out a token that is
// malformed, unknown or already ended is not an error.
func (s *Sessions) Revoke(ctx context.Context, token string) error {
	hash, ok := sessionHash(token)
	if !ok {
		return nil
	}
	row, err := s.store.GetConsoleSession(ctx, hash)
	if err == nil {
		err = s.store.DeleteConsoleSession(ctx, row.ID)
	}
	if err != nil && !isNotFound(err) {
		return fmt.Errorf("auth: sign out of the console: %w", err)
	}
	return nil
}

// Prune deletes the sessions that have ended by now, as Create does, and
// counts them: for a caller that wants to prune without a sign-in.
func (s *Sessions) Prune(ctx context.Context) (int, error) {
	now := s.now().UTC()
	return s.store.PruneConsoleSessions(ctx, now, now.Add(-s.idle))
}

// sessionHash is the stored hash of a well-formed session token.
func sessionHash(token string) (string, bool) {
	if len(token) != sessionEncoding.EncodedLen(sessionTokenBytes) {
		return "", false
	}
	if _, err := sessionEncoding.DecodeString(token); err != nil {
		return "", false
	}
	return hashKey(token), true
}

// csrfToken derives a session's CSRF token from its session token (see
// the package comment on sessions for why it is derived).
func csrfToken(sessionToken string) string {
	m := hmac.New(sha256.New, []byte(sessionToken))
	m.Write([]byte(csrfLabel))
	return sessionEncoding.EncodeToString(m.Sum(nil))
}

func (s *Sessions) toSession(row store.ConsoleSession, key Key, token string) Session {
	idleEnd := row.LastSeenAt.Add(s.idle)
	if row.ExpiresAt.Before(idleEnd) {
		idleEnd = row.ExpiresAt
	}
	return Session{ID: row.ID, KeyID: key.ID, KeyName: key.Name, Scopes: key.Scopes, CSRF: csrfToken(token),
		CreatedAt: row.CreatedAt, LastSeenAt: row.LastSeenAt, ExpiresAt: row.ExpiresAt, IdleExpiresAt: idleEnd}
}
