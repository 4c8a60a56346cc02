package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"time"

	"github.com/heraldhq/herald/heraldtype"
	"github.com/heraldhq/herald/store"
)

// Rules: store.Rules (issue 20 item 2).

const ruleColumns = `name, disabled, definition, created_at, updated_at`

func scanRule(row interface{ Scan(...any) error }) (heraldtype.Rule, error) {
	var r heraldtype.Rule
	var name, def string
	var disabled bool
	var created, updated int64
	if err := row.Scan(&name, &disabled, &def, &created, &updated); err != nil {
		return r, err
	}
	if err := json.Unmarshal([]byte(def), &r); err != nil {
		return r, err
	}
	r.Name, r.Disabled, r.CreatedAt, r.UpdatedAt = name, disabled, fromMicros(created), fromMicros(updated)
	return r, nil
}

// PutRule implements store.Rules in one transaction.
func (s *Store) PutRule(ctx context.Context, r heraldtype.Rule, now time.Time) (heraldtype.Rule, bool, error) {
	if err := store.CheckRule(r); err != nil {
		return r, false, err
	}
	r.CreatedAt, r.UpdatedAt = time.Time{}, time.Time{}
	def, err := json.Marshal(r)
	if err != nil {
		return r, false, err
	}
	var out heraldtype.Rule
	created := false
	err = s.inTx(ctx, func(tx *writeTx) error {
		var at int64
		err := tx.QueryRowContext(ctx, `SELECT created_at FROM rules WHERE name = ?`, r.Name).Scan(&at)
		if errors.Is(err, sql.ErrNoRows) {
			created = true
		} else if err != nil {
			return err
		}
		rows, err := s.query(ctx, tx, `INSERT INTO rules (name, source, event, disabled, definition, created_at, updated_at)
VALUES (?, ?, ?, ?, ?, ?, ?)
ON CONFLICT (name) DO UPDATE SET source = excluded.source, event = excluded.event, disabled = excluded.disabled,
	definition = excluded.definition, updated_at = excluded.updated_at
RETURNING `+ruleColumns, r.Name, store.RuleSourceColumn(r), r.When.Event, r.Disabled, string(def), micros(now), micros(now))
		if err != nil {
			return err
		}
		defer rows.Close()
		if !rows.Next() {
			return errors.Join(sql.ErrNoRows, rows.Err())
		}
		out, err = scanRule(rows)
		return err
	})
	return out, created, formatError(err, "rule "+quote(r.Name))
}

// GetRule implements store.Rules.
func (s *Store) GetRule(ctx context.Context, name string) (heraldtype.Rule, error) {
	r, err := scanRule(s.read.QueryRowContext(ctx, `SELECT `+ruleColumns+` FROM rules WHERE name = ?`, name))
	return r, formatError(err, "rule "+quote(name))
}

// DeleteRule implements store.Rules.
func (s *Store) DeleteRule(ctx context.Context, name string) error {
	return s.inTx(ctx, func(tx *writeTx) error {
		res, err := s.exec(ctx, tx, `DELETE FROM rules WHERE name = ?`, name)
		return affectedOne(res, err, "rule "+quote(name))
	})
}

// ListRules implements store.Rules.
func (s *Store) ListRules(ctx context.Context, f store.RuleFilter) ([]heraldtype.Rule, string, error) {
	limit, after, err := store.CheckRuleFilter(f)
	if err != nil {
		return nil, "", err
	}
	rows, err := s.read.QueryContext(ctx, `SELECT `+ruleColumns+` FROM rules
WHERE name > ? AND (? = '' OR source = ?) AND (? = '' OR event = ?) AND (NOT ? OR NOT disabled)
ORDER BY name LIMIT ?`, after, f.Source, f.Source, f.Event, f.Event, f.Enabled, limit+1)
	if err != nil {
		return nil, "", formatError(err, "rules")
	}
	defer rows.Close()
	rs := []heraldtype.Rule{}
	for rows.Next() {
		r, err := scanRule(rows)
		if err != nil {
			return nil, "", formatError(err, "rules")
		}
		rs = append(rs, r)
	}
	if err := rows.Err(); err != nil {
		return nil, "", formatError(err, "rules")
	}
	rs, next := store.RulePage(rs, limit)
	return rs, next, nil
}
