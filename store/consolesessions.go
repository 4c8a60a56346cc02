package store

import (
	"context"
	"time"
)

// ConsoleSession is an operator console's sign-in as stored (issue 34
// item 1): never the session token itself, only its SHA-256, as for API
// keys (package auth explains why a fast hash is right for a 256-bit
// random secret). Package auth decides everything about a session — its
// lifetimes, its key's scopes, its CSRF token; the store only keeps rows.
type ConsoleSession struct {
	// ID names the session in logs; it is not a secret.
	ID string
	// TokenHash is the hex SHA-256 of the session token; unique.
	TokenHash string
	// KeyID is the API key the operator signed in with (auth.BootstrapKeyID
	// for the configured bootstrap key, which has no row).
	KeyID string
	// KeyFingerprint tells one bootstrap key from the next, so a session
	// ends when the bootstrap key is changed; "" for a key of the
	// database, whose id is never reused.
	KeyFingerprint string
	CreatedAt      time.Time
	// LastSeenAt is the last time the session was used, to within the
	// touch interval package auth keeps.
	LastSeenAt time.Time
	// ExpiresAt is the session's absolute end, however active it is.
	ExpiresAt time.Time
}

// ConsoleSessions stores console sessions. Store embeds it.
type ConsoleSessions interface {
	// CreateConsoleSession records a new session; ECONFLICT if its ID or
	// TokenHash exists.
	CreateConsoleSession(ctx context.Context, s ConsoleSession) error
	// GetConsoleSession returns the session whose token has this hash,
	// expired or not; ENOTFOUND if absent.
	GetConsoleSession(ctx context.Context, tokenHash string) (ConsoleSession, error)
	// TouchConsoleSession sets the session's LastSeenAt to now unless it is
	// later already (two instances touching at once never move it back);
	// ENOTFOUND if absent.
	TouchConsoleSession(ctx context.Context, id string, now time.Time) error
	// DeleteConsoleSession removes a session (sign-out); ENOTFOUND if
	// absent.
	DeleteConsoleSession(ctx context.Context, id string) error
	// PruneConsoleSessions deletes the sessions that ended: those whose
	// ExpiresAt is at or before now, and those last seen at or before
	// idleCutoff. It returns how many it deleted.
	PruneConsoleSessions(ctx context.Context, now, idleCutoff time.Time) (int, error)
}
