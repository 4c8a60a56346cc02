package herald

import (
	"context"
	"encoding/json"

	"github.com/heraldhq/herald/heraldtype"
	"github.com/heraldhq/herald/internal/message"
	"github.com/heraldhq/herald/store"
)

// MaxTemplatesBytes bounds one version of a type's templates, as JSON.
const MaxTemplatesBytes = 1 << 20

// DefaultTemplateVersionPage is a page of template versions when the
// caller names no limit.
const DefaultTemplateVersionPage = 20

// PutTemplates saves a type's message templates (issue 37) as its next
// version; the earlier versions are kept, and a notification records the
// version that rendered it. The templates are checked first — every
// locale, channel and template, and, with sample data, a render of each
// locale with it — and each refusal is invalid_argument naming its field
// under "templates.". The type need not be declared.
func (c *Client) PutTemplates(ctx context.Context, typ string, t heraldtype.MessageTemplates) (heraldtype.TemplateVersion, error) {
	if err := validTypeName(typ); err != nil {
		return heraldtype.TemplateVersion{}, err
	}
	if b, err := json.Marshal(t); err != nil || len(b) > MaxTemplatesBytes {
		return heraldtype.TemplateVersion{}, heraldtype.FieldErrorf("templates", "must be at most %d bytes of JSON", MaxTemplatesBytes)
	}
	if _, err := message.Compile(ctx, &t, c.messageConfig()); err != nil {
		return heraldtype.TemplateVersion{}, err
	}
	return c.store.PutTemplates(ctx, typ, t, c.now().UTC())
}

// GetTemplates returns a version of a type's templates, the latest for
// version 0; not_found when the type has none or not that version.
func (c *Client) GetTemplates(ctx context.Context, typ string, version int) (heraldtype.TemplateVersion, error) {
	if err := validTypeName(typ); err != nil {
		return heraldtype.TemplateVersion{}, err
	}
	if version < 0 {
		return heraldtype.TemplateVersion{}, heraldtype.FieldErrorf("version", "must not be negative")
	}
	return c.store.GetTemplates(ctx, typ, version)
}

// ListTemplateVersions lists a type's template versions newest first:
// at most limit (0: DefaultTemplateVersionPage; at most
// store.MaxTemplateVersionPage), those below version before when it is
// not 0.
func (c *Client) ListTemplateVersions(ctx context.Context, typ string, before, limit int) ([]heraldtype.TemplateVersion, error) {
	if err := validTypeName(typ); err != nil {
		return nil, err
	}
	if limit == 0 {
		limit = DefaultTemplateVersionPage
	}
	if err := store.CheckTemplateVersions(typ, before, limit); err != nil {
		return nil, err
	}
	out, err := c.store.ListTemplateVersions(ctx, typ, before, limit)
	if out == nil && err == nil {
		out = []heraldtype.TemplateVersion{}
	}
	return out, err
}
