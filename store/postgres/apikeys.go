package postgres

import (
	"context"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/heraldhq/herald/store"
)

// Scopes are stored space-separated, as in the SQLite store: a scope name
// never contains a space (package auth validates them).
const apiKeyColumns = `id, name, hash, scopes, created_at, revoked_at`

func scanAPIKey(row pgx.Row) (store.APIKey, error) {
	var (
		k      store.APIKey
		scopes string
	)
	if err := row.Scan(&k.ID, &k.Name, &k.Hash, &scopes, &k.CreatedAt, &k.RevokedAt); err != nil {
		return store.APIKey{}, err
	}
	k.Scopes = strings.Fields(scopes)
	k.CreatedAt = utc(k.CreatedAt)
	k.RevokedAt = utcPtr(k.RevokedAt)
	return k, nil
}

// CreateAPIKey implements store.APIKeys.
func (s *Store) CreateAPIKey(ctx context.Context, k store.APIKey) error {
	_, err := s.pool.Exec(ctx, s.q(`INSERT INTO {s}.api_keys (`+apiKeyColumns+`) VALUES ($1, $2, $3, $4, $5, NULL)`),
		k.ID, k.Name, k.Hash, strings.Join(k.Scopes, " "), k.CreatedAt)
	return formatError(err, "API key "+quote(k.ID))
}

// GetAPIKey implements store.APIKeys.
func (s *Store) GetAPIKey(ctx context.Context, id string) (store.APIKey, error) {
	k, err := scanAPIKey(s.pool.QueryRow(ctx, s.q(`SELECT `+apiKeyColumns+` FROM {s}.api_keys WHERE id = $1`), id))
	return k, formatError(err, "API key "+quote(id))
}

// ListAPIKeys implements store.APIKeys.
func (s *Store) ListAPIKeys(ctx context.Context) ([]store.APIKey, error) {
	rows, err := s.pool.Query(ctx, s.q(`SELECT `+apiKeyColumns+` FROM {s}.api_keys ORDER BY created_at, id`))
	if err != nil {
		return nil, formatError(err, "API keys")
	}
	keys, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (store.APIKey, error) { return scanAPIKey(r) })
	if err != nil {
		return nil, formatError(err, "API keys")
	}
	if keys == nil {
		keys = []store.APIKey{}
	}
	return keys, nil
}

// RevokeAPIKey implements store.APIKeys. COALESCE keeps the first
// revocation time, and the row still counts as changed, so revoking twice
// is not an error.
func (s *Store) RevokeAPIKey(ctx context.Context, id string, now time.Time) error {
	tag, err := s.pool.Exec(ctx, s.q(`UPDATE {s}.api_keys SET revoked_at = COALESCE(revoked_at, $1) WHERE id = $2`), now, id)
	return affectedOne(tag.RowsAffected(), err, "API key "+quote(id))
}

// CountActiveAPIKeys implements store.APIKeys.
func (s *Store) CountActiveAPIKeys(ctx context.Context) (int, error) {
	var n int
	err := s.pool.QueryRow(ctx, s.q(`SELECT count(*) FROM {s}.api_keys WHERE revoked_at IS NULL`)).Scan(&n)
	return n, formatError(err, "API keys")
}
