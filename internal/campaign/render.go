package campaign

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/heraldhq/herald/heraldtype"
	"github.com/heraldhq/herald/internal/message"
	"github.com/heraldhq/herald/internal/tmpl"
)

// Content is a campaign's message templates, parsed: title, body and the
// values of data, each a Go text/template.
//
// A template sees one recipient (View): {{.User.ID}}, {{.User.Timezone}},
// {{.User.Locale}}, {{.Campaign}}, {{.Run}}, and what the fetch endpoint
// returned for the user: {{.Items}} (a list; {{(index .Items 0).name}}) and
// {{.Fields}} (an object; {{.Fields.greeting}}). A missing key, a missing
// field or an index out of range is an error for that recipient — counted
// render_failed on the run with the error — never "<no value>" in someone's
// notification. So is a recipient whose templates go over their budget
// (internal/tmpl: steps, bytes built; issue 31 item 1).
type Content struct {
	title, body *tmpl.Template
	data        map[string]*tmpl.Template
	lim         tmpl.Limits
}

// View is what a template sees of one recipient.
type View struct {
	User     ViewUser
	Campaign string
	Run      string
	Items    []any
	Fields   map[string]any
}

// ViewUser is the recipient as a template sees it.
type ViewUser struct {
	ID       string
	Timezone string
	Locale   string
}

// Parse parses a campaign's templates under lim; a template that does not
// parse, or that internal/tmpl refuses (it defines or calls templates, it
// ranges over an integer above the step budget), is an invalid_argument
// naming its field (title, body, data.<key>).
func Parse(c heraldtype.Campaign, lim tmpl.Limits) (*Content, error) {
	out := Content{lim: lim}
	var err error
	if out.title, err = parse("title", c.Title, lim); err != nil {
		return nil, err
	}
	if out.body, err = parse("body", c.Body, lim); err != nil {
		return nil, err
	}
	if len(c.Data) > 0 {
		out.data = make(map[string]*tmpl.Template, len(c.Data))
		for _, k := range slices.Sorted(maps.Keys(c.Data)) {
			if out.data[k], err = parse("data."+k, c.Data[k], lim); err != nil {
				return nil, err
			}
		}
	}
	return &out, nil
}

func parse(field, text string, lim tmpl.Limits) (*tmpl.Template, error) {
	t, err := message.ParseText(field, text, lim)
	if err != nil {
		msg := strings.TrimPrefix(err.Error(), "template: ")
		return nil, heraldtype.FieldErrorf(field, "is not a valid template: %s", msg)
	}
	return t, nil
}

// Rendered is one recipient's message.
type Rendered struct {
	Title, Body string
	Data        map[string]string
}

// Render renders the content for v, its templates together under one
// budget and ctx.
func (c *Content) Render(ctx context.Context, v View) (Rendered, error) {
	var r Rendered
	var err error
	b := tmpl.NewBudget(ctx, c.lim)
	if r.Title, err = execute(c.title, b, v); err != nil {
		return r, err
	}
	if r.Body, err = execute(c.body, b, v); err != nil {
		return r, err
	}
	if len(c.data) > 0 {
		r.Data = make(map[string]string, len(c.data))
		for k, t := range c.data {
			if r.Data[k], err = execute(t, b, v); err != nil {
				return r, err
			}
		}
	}
	return r, nil
}

// maxRendered bounds what one template may produce, far above every
// field's own limit (checked when the notification is built).
const maxRendered = 64 << 10

// execute renders t for v's user: number, currency, plural and date
// format in the user's locale and zone.
func execute(t *tmpl.Template, b *tmpl.Budget, v View) (string, error) {
	out, err := t.ExecuteEnv(b, v, message.Env(message.Recipient{Locale: v.User.Locale, Zone: zoneOf(v.User.Timezone)}), maxRendered)
	if err != nil {
		return "", fmt.Errorf("render %s: %w", t.Name(), err)
	}
	return out, nil
}

// zoneOf is a user's zone for a template's dates; UTC when unknown.
func zoneOf(name string) *time.Location {
	if loc, err := time.LoadLocation(name); err == nil && name != "" {
		return loc
	}
	return time.UTC
}
