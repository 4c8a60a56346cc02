package store

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/heraldhq/herald/heraldtype"
)

// Templates keeps each notification type's message templates, every saved
// version of them (issue 37 item 6; internal/message renders them).
type Templates interface {
	// PutTemplates saves t as typ's next version — 1 for its first — with
	// CreatedAt = now, keeping every earlier version, and returns it.
	PutTemplates(ctx context.Context, typ string, t heraldtype.MessageTemplates, now time.Time) (heraldtype.TemplateVersion, error)
	// GetTemplates returns typ's version, its latest for version 0;
	// ENOTFOUND when typ has no templates or not that version.
	GetTemplates(ctx context.Context, typ string, version int) (heraldtype.TemplateVersion, error)
	// ListTemplateVersions returns typ's versions newest first, at most
	// limit (1..MaxTemplateVersionPage) of them, below version before (0: from the
	// latest).
	ListTemplateVersions(ctx context.Context, typ string, before, limit int) ([]heraldtype.TemplateVersion, error)
}

// EncodeTemplates is PutTemplates' half that is not SQL: the argument
// check, CreatedAt = now (UTC, to the microsecond) and the JSON both stores
// keep.
func EncodeTemplates(typ string, t heraldtype.MessageTemplates, now time.Time) (heraldtype.TemplateVersion, []byte, error) {
	v := heraldtype.TemplateVersion{Type: typ, Templates: t, CreatedAt: now.UTC().Truncate(time.Microsecond)}
	if typ == "" {
		return v, nil, heraldtype.FieldErrorf("type", "is required")
	}
	b, err := json.Marshal(t)
	if err != nil {
		return v, nil, fmt.Errorf("store: templates of %q: %w", typ, err)
	}
	return v, b, nil
}

// DecodeTemplates reverses EncodeTemplates.
func DecodeTemplates(typ string, version int, stored []byte, createdAt time.Time) (heraldtype.TemplateVersion, error) {
	v := heraldtype.TemplateVersion{Type: typ, Version: version, CreatedAt: createdAt.UTC()}
	if err := json.Unmarshal(stored, &v.Templates); err != nil {
		return v, fmt.Errorf("store: templates of %q version %d: %w", typ, version, err)
	}
	return v, nil
}

// CheckTemplateVersions is ListTemplateVersions' argument check.
func CheckTemplateVersions(typ string, before, limit int) error {
	switch {
	case typ == "":
		return heraldtype.FieldErrorf("type", "is required")
	case before < 0:
		return heraldtype.FieldErrorf("before", "must not be negative")
	case limit < 1 || limit > MaxTemplateVersionPage:
		return heraldtype.FieldErrorf("limit", "must be between 1 and %d", MaxTemplateVersionPage)
	}
	return nil
}

// MaxTemplateVersionPage bounds a page of template versions.
const MaxTemplateVersionPage = 100
