package postgres

import (
	"context"
	"time"

	"github.com/heraldhq/herald/store"
)

const consoleSessionColumns = `id, token_hash, key_id, key_fingerprint, created_at, last_seen_at, expires_at`

// CreateConsoleSession implements store.ConsoleSessions.
func (s *Store) CreateConsoleSession(ctx context.Context, cs store.ConsoleSession) error {
	_, err := s.pool.Exec(ctx, s.q(`INSERT INTO {s}.console_sessions (`+consoleSessionColumns+`) VALUES ($1, $2, $3, $4, $5, $6, $7)`),
		cs.ID, cs.TokenHash, cs.KeyID, cs.KeyFingerprint, cs.CreatedAt, cs.LastSeenAt, cs.ExpiresAt)
	return formatError(err, "console session "+quote(cs.ID))
}

// GetConsoleSession implements store.ConsoleSessions.
func (s *Store) GetConsoleSession(ctx context.Context, tokenHash string) (store.ConsoleSession, error) {
	var cs store.ConsoleSession
	err := s.pool.QueryRow(ctx, s.q(`SELECT `+consoleSessionColumns+` FROM {s}.console_sessions WHERE token_hash = $1`), tokenHash).
		Scan(&cs.ID, &cs.TokenHash, &cs.KeyID, &cs.KeyFingerprint, &cs.CreatedAt, &cs.LastSeenAt, &cs.ExpiresAt)
	if err != nil {
		return store.ConsoleSession{}, formatError(err, "console session")
	}
	cs.CreatedAt, cs.LastSeenAt, cs.ExpiresAt = utc(cs.CreatedAt), utc(cs.LastSeenAt), utc(cs.ExpiresAt)
	return cs, nil
}

// TouchConsoleSession implements store.ConsoleSessions. GREATEST keeps the
// later time when two instances touch the session at once.
func (s *Store) TouchConsoleSession(ctx context.Context, id string, now time.Time) error {
	tag, err := s.pool.Exec(ctx, s.q(`UPDATE {s}.console_sessions SET last_seen_at = GREATEST(last_seen_at, $1) WHERE id = $2`), now, id)
	return affectedOne(tag.RowsAffected(), err, "console session "+quote(id))
}

// DeleteConsoleSession implements store.ConsoleSessions.
func (s *Store) DeleteConsoleSession(ctx context.Context, id string) error {
	tag, err := s.pool.Exec(ctx, s.q(`DELETE FROM {s}.console_sessions WHERE id = $1`), id)
	return affectedOne(tag.RowsAffected(), err, "console session "+quote(id))
}

// PruneConsoleSessions implements store.ConsoleSessions.
func (s *Store) PruneConsoleSessions(ctx context.Context, now, idleCutoff time.Time) (int, error) {
	tag, err := s.pool.Exec(ctx, s.q(`DELETE FROM {s}.console_sessions WHERE expires_at <= $1 OR last_seen_at <= $2`), now, idleCutoff)
	return int(tag.RowsAffected()), formatError(err, "console sessions")
}
