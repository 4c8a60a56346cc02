package postgres

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/heraldhq/herald/heraldtype"
	"github.com/heraldhq/herald/store"
)

// PutTemplates implements store.Store: the next version is computed in
// the insert, under a transaction advisory lock of the type, so saves of
// one type queue for it instead of meeting on the primary key (a retry
// loop lost to eight concurrent saves).
func (s *Store) PutTemplates(ctx context.Context, typ string, t heraldtype.MessageTemplates, now time.Time) (heraldtype.TemplateVersion, error) {
	v, b, err := store.EncodeTemplates(typ, t, now)
	if err != nil {
		return v, err
	}
	err = s.inTx(ctx, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock($1)`, advisoryKey("herald templates "+s.schema+" "+typ)); err != nil {
			return err
		}
		return tx.QueryRow(ctx, s.q(`INSERT INTO {s}.type_templates (type, version, templates, created_at)
SELECT $1, COALESCE(MAX(version), 0) + 1, $2, $3 FROM {s}.type_templates WHERE type = $1
RETURNING version`), typ, b, v.CreatedAt).Scan(&v.Version)
	})
	return v, formatError(err, "templates")
}

// GetTemplates implements store.Store.
func (s *Store) GetTemplates(ctx context.Context, typ string, version int) (heraldtype.TemplateVersion, error) {
	var (
		b       []byte
		created time.Time
	)
	what := fmt.Sprintf("templates of type %s", quote(typ))
	if version != 0 {
		what = fmt.Sprintf("version %d of type %s's templates", version, quote(typ))
	}
	err := s.pool.QueryRow(ctx, s.q(`SELECT version, templates, created_at FROM {s}.type_templates
WHERE type = $1 AND ($2 = 0 OR version = $2) ORDER BY version DESC LIMIT 1`), typ, version).Scan(&version, &b, &created)
	if err != nil {
		return heraldtype.TemplateVersion{}, formatError(err, what)
	}
	return store.DecodeTemplates(typ, version, b, created)
}

// ListTemplateVersions implements store.Store.
func (s *Store) ListTemplateVersions(ctx context.Context, typ string, before, limit int) ([]heraldtype.TemplateVersion, error) {
	if err := store.CheckTemplateVersions(typ, before, limit); err != nil {
		return nil, err
	}
	rows, err := s.pool.Query(ctx, s.q(`SELECT version, templates, created_at FROM {s}.type_templates
WHERE type = $1 AND ($2 = 0 OR version < $2) ORDER BY version DESC LIMIT $3`), typ, before, limit)
	if err != nil {
		return nil, formatError(err, "template versions")
	}
	type row struct {
		Version   int
		Templates []byte
		CreatedAt time.Time
	}
	got, err := pgx.CollectRows(rows, pgx.RowToStructByPos[row])
	if err != nil {
		return nil, formatError(err, "template versions")
	}
	out := make([]heraldtype.TemplateVersion, 0, len(got))
	for _, r := range got {
		v, err := store.DecodeTemplates(typ, r.Version, r.Templates, r.CreatedAt)
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, nil
}
