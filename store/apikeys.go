package store

import (
	"context"
	"time"
)

// APIKey is a server API key as stored: never the key itself, only the
// SHA-256 of it (package auth explains why a fast hash is right for a
// 256-bit random secret). Keys are looked up by ID, which is the public
// part of the key string.
type APIKey struct {
	ID   string
	Name string
	// Hash is the hex SHA-256 of the whole key string.
	Hash string
	// Scopes are the scope names the key grants, as written at creation.
	Scopes    []string
	CreatedAt time.Time
	// RevokedAt is set once the key is revoked; a revoked key never
	// authenticates again.
	RevokedAt *time.Time
}

// APIKeys stores server API keys. Store embeds it.
type APIKeys interface {
	// CreateAPIKey records a new key; ECONFLICT if its ID exists.
	CreateAPIKey(ctx context.Context, k APIKey) error
	// GetAPIKey returns a key, revoked or not; ENOTFOUND if absent.
	GetAPIKey(ctx context.Context, id string) (APIKey, error)
	// ListAPIKeys returns every key, revoked ones included, oldest first.
	ListAPIKeys(ctx context.Context) ([]APIKey, error)
	// RevokeAPIKey sets revoked_at = now if the key is not revoked yet
	// (revoking twice keeps the first time); ENOTFOUND if absent.
	RevokeAPIKey(ctx context.Context, id string, now time.Time) error
	// CountActiveAPIKeys counts keys that are not revoked, so `serve` can
	// refuse to start an API nobody can call.
	CountActiveAPIKeys(ctx context.Context) (int, error)
}
