package sqlite

import (
	"context"
	"database/sql"
	"strings"
	"time"

	"github.com/heraldhq/herald/store"
)

// Scopes are stored space-separated: a scope name never contains a space
// (package auth validates them), and one text column keeps both stores'
// schemas alike.
const apiKeyColumns = `id, name, hash, scopes, created_at, revoked_at`

func scanAPIKey(sc interface{ Scan(...any) error }) (store.APIKey, error) {
	var (
		k       store.APIKey
		scopes  string
		created int64
		revoked sql.NullInt64
	)
	if err := sc.Scan(&k.ID, &k.Name, &k.Hash, &scopes, &created, &revoked); err != nil {
		return store.APIKey{}, err
	}
	k.Scopes = strings.Fields(scopes)
	k.CreatedAt = fromMicros(created)
	k.RevokedAt = fromNullMicros(revoked)
	return k, nil
}

// CreateAPIKey implements store.APIKeys.
func (s *Store) CreateAPIKey(ctx context.Context, k store.APIKey) error {
	return s.inTx(ctx, func(tx *writeTx) error {
		_, err := s.exec(ctx, tx, `INSERT INTO api_keys (`+apiKeyColumns+`) VALUES (?, ?, ?, ?, ?, NULL)`,
			k.ID, k.Name, k.Hash, strings.Join(k.Scopes, " "), micros(k.CreatedAt))
		return formatError(err, "API key "+quote(k.ID))
	})
}

// GetAPIKey implements store.APIKeys.
func (s *Store) GetAPIKey(ctx context.Context, id string) (store.APIKey, error) {
	k, err := scanAPIKey(s.read.QueryRowContext(ctx, `SELECT `+apiKeyColumns+` FROM api_keys WHERE id = ?`, id))
	return k, formatError(err, "API key "+quote(id))
}

// ListAPIKeys implements store.APIKeys.
func (s *Store) ListAPIKeys(ctx context.Context) ([]store.APIKey, error) {
	rows, err := s.read.QueryContext(ctx, `SELECT `+apiKeyColumns+` FROM api_keys ORDER BY created_at, id`)
	if err != nil {
		return nil, formatError(err, "API keys")
	}
	defer rows.Close()
	keys := []store.APIKey{}
	for rows.Next() {
		k, err := scanAPIKey(rows)
		if err != nil {
			return nil, formatError(err, "API keys")
		}
		keys = append(keys, k)
	}
	return keys, formatError(rows.Err(), "API keys")
}

// RevokeAPIKey implements store.APIKeys. COALESCE keeps the first
// revocation time, and the row still counts as changed, so revoking twice
// is not an error.
func (s *Store) RevokeAPIKey(ctx context.Context, id string, now time.Time) error {
	return s.inTx(ctx, func(tx *writeTx) error {
		res, err := s.exec(ctx, tx, `UPDATE api_keys SET revoked_at = COALESCE(revoked_at, ?) WHERE id = ?`, micros(now), id)
		return affectedOne(res, err, "API key "+quote(id))
	})
}

// CountActiveAPIKeys implements store.APIKeys.
func (s *Store) CountActiveAPIKeys(ctx context.Context) (int, error) {
	var n int
	err := s.read.QueryRowContext(ctx, `SELECT count(*) FROM api_keys WHERE revoked_at IS NULL`).Scan(&n)
	return n, formatError(err, "API keys")
}
