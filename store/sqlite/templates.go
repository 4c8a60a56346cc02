package sqlite

import (
	"context"
	"fmt"
	"time"

	"github.com/heraldhq/herald/heraldtype"
	"github.com/heraldhq/herald/store"
)

// PutTemplates implements store.Store: the next version is computed in
// the insert, under SQLite's one writer.
func (s *Store) PutTemplates(ctx context.Context, typ string, t heraldtype.MessageTemplates, now time.Time) (heraldtype.TemplateVersion, error) {
	v, b, err := store.EncodeTemplates(typ, t, now)
	if err != nil {
		return v, err
	}
	err = s.inTx(ctx, func(tx *writeTx) error {
		return formatError(tx.QueryRowContext(ctx, `INSERT INTO type_templates (type, version, templates, created_at)
SELECT ?, COALESCE(MAX(version), 0) + 1, ?, ? FROM type_templates WHERE type = ?
RETURNING version`, typ, string(b), micros(v.CreatedAt), typ).Scan(&v.Version), "templates")
	})
	return v, err
}

// GetTemplates implements store.Store.
func (s *Store) GetTemplates(ctx context.Context, typ string, version int) (heraldtype.TemplateVersion, error) {
	var (
		b       []byte
		created int64
	)
	what := fmt.Sprintf("templates of type %s", quote(typ))
	if version != 0 {
		what = fmt.Sprintf("version %d of type %s's templates", version, quote(typ))
	}
	err := s.read.QueryRowContext(ctx, `SELECT version, templates, created_at FROM type_templates
WHERE type = ? AND (? = 0 OR version = ?) ORDER BY version DESC LIMIT 1`, typ, version, version).Scan(&version, &b, &created)
	if err != nil {
		return heraldtype.TemplateVersion{}, formatError(err, what)
	}
	return store.DecodeTemplates(typ, version, b, fromMicros(created))
}

// ListTemplateVersions implements store.Store.
func (s *Store) ListTemplateVersions(ctx context.Context, typ string, before, limit int) ([]heraldtype.TemplateVersion, error) {
	if err := store.CheckTemplateVersions(typ, before, limit); err != nil {
		return nil, err
	}
	rows, err := s.read.QueryContext(ctx, `SELECT version, templates, created_at FROM type_templates
WHERE type = ? AND (? = 0 OR version < ?) ORDER BY version DESC LIMIT ?`, typ, before, before, limit)
	if err != nil {
		return nil, formatError(err, "template versions")
	}
	defer rows.Close()
	var out []heraldtype.TemplateVersion
	for rows.Next() {
		var (
			version int
			b       []byte
			created int64
		)
		if err := rows.Scan(&version, &b, &created); err != nil {
			return nil, formatError(err, "template versions")
		}
		v, err := store.DecodeTemplates(typ, version, b, fromMicros(created))
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, formatError(rows.Err(), "template versions")
}
