package console

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"time"

	"github.com/heraldhq/herald/auth"
)

// Session is one operator's signed-in session: what the console knows of
// the API key that opened it. The console never sees the key again after
// sign-in; every page checks the session's token instead.
type Session struct {
	// ID names the session (never the token: the token is the secret).
	ID string
	// KeyID is the API key that opened the session, shown in the header.
	KeyID string
	// Scopes are the key's scopes; every console action checks the scope
	// the matching API route needs against them (auth.Grants).
	Scopes []auth.Scope
	// CSRF is the token every state-changing form carries; it is bound to
	// the session, so a form from another session is refused.
	CSRF string
	// ExpiresAt is when the session ends unless used again (idle expiry);
	// the Sessions implementation moves it on Check.
	ExpiresAt time.Time
}

// Can reports whether the session may do what scope s allows.
func (s Session) Can(scope auth.Scope) bool { return auth.Grants(s.Scopes, scope) }

// Sessions keeps the console's server-side sessions. It is declared here,
// where it is consumed; the implementation over the database lives with
// the API keys (package auth), so a session ends when its key is revoked.
//
// Errors: Create refuses a key that is unknown, revoked or lacks a scope
// that may open the console with a *heraldtype.Error of code
// unauthenticated or permission_denied; Check answers unauthenticated for
// a token that is unknown, expired, revoked or whose key was revoked. Any
// other error is the store's and is shown as "unavailable".
type Sessions interface {
	// Create checks apiKey and opens a session for it; the returned token
	// goes into the session cookie.
	Create(ctx context.Context, apiKey string) (Session, string, error)
	// Check finds the session of token and extends its idle expiry.
	Check(ctx context.Context, token string) (Session, error)
	// Revoke ends the session of token (sign-out); an unknown token is
	// not an error.
	Revoke(ctx context.Context, token string) error
}

// devSession is the one session of --dev: no sign-in, admin. Its CSRF
// token is a per-process secret, so state changes still need a form the
// console served (a page on another origin cannot read it).
func devSession() Session {
	return Session{ID: "dev", KeyID: "dev", Scopes: []auth.Scope{auth.ScopeAdmin}, CSRF: randomToken()}
}

// randomToken returns 32 random bytes, base64url.
func randomToken() string {
	var b [32]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails (Go 1.24+).
	return base64.RawURLEncoding.EncodeToString(b[:])
}
