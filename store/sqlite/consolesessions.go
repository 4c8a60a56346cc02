package sqlite

import (
	"context"
	"time"

	"github.com/heraldhq/herald/store"
)

const consoleSessionColumns = `id, token_hash, key_id, key_fingerprint, created_at, last_seen_at, expires_at`

// CreateConsoleSession implements store.ConsoleSessions.
func (s *Store) CreateConsoleSession(ctx context.Context, cs store.ConsoleSession) error {
	return s.inTx(ctx, func(tx *writeTx) error {
		_, err := s.exec(ctx, tx, `INSERT INTO console_sessions (`+consoleSessionColumns+`) VALUES (?, ?, ?, ?, ?, ?, ?)`,
			cs.ID, cs.TokenHash, cs.KeyID, cs.KeyFingerprint, micros(cs.CreatedAt), micros(cs.LastSeenAt), micros(cs.ExpiresAt))
		return formatError(err, "console session "+quote(cs.ID))
	})
}

// GetConsoleSession implements store.ConsoleSessions.
func (s *Store) GetConsoleSession(ctx context.Context, tokenHash string) (store.ConsoleSession, error) {
	var (
		cs                     store.ConsoleSession
		created, seen, expires int64
	)
	err := s.read.QueryRowContext(ctx, `SELECT `+consoleSessionColumns+` FROM console_sessions WHERE token_hash = ?`, tokenHash).
		Scan(&cs.ID, &cs.TokenHash, &cs.KeyID, &cs.KeyFingerprint, &created, &seen, &expires)
	if err != nil {
		return store.ConsoleSession{}, formatError(err, "console session")
	}
	cs.CreatedAt, cs.LastSeenAt, cs.ExpiresAt = fromMicros(created), fromMicros(seen), fromMicros(expires)
	return cs, nil
}

// TouchConsoleSession implements store.ConsoleSessions. MAX keeps the
// later time when two instances touch the session at once.
func (s *Store) TouchConsoleSession(ctx context.Context, id string, now time.Time) error {
	return s.inTx(ctx, func(tx *writeTx) error {
		res, err := s.exec(ctx, tx, `UPDATE console_sessions SET last_seen_at = MAX(last_seen_at, ?) WHERE id = ?`, micros(now), id)
		return affectedOne(res, err, "console session "+quote(id))
	})
}

// DeleteConsoleSession implements store.ConsoleSessions.
func (s *Store) DeleteConsoleSession(ctx context.Context, id string) error {
	return s.inTx(ctx, func(tx *writeTx) error {
		res, err := s.exec(ctx, tx, `DELETE FROM console_sessions WHERE id = ?`, id)
		return affectedOne(res, err, "console session "+quote(id))
	})
}

// PruneConsoleSessions implements store.ConsoleSessions.
func (s *Store) PruneConsoleSessions(ctx context.Context, now, idleCutoff time.Time) (int, error) {
	var n int
	err := s.inTx(ctx, func(tx *writeTx) error {
		res, err := s.exec(ctx, tx, `DELETE FROM console_sessions WHERE expires_at <= ? OR last_seen_at <= ?`,
			micros(now), micros(idleCutoff))
		n, err = affected(res, err, "console sessions")
		return err
	})
	return n, err
}
