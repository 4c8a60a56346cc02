package campaign

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"text/template"

	"github.com/heraldhq/herald/heraldtype"
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
// notification.
type Content struct {
	title, body *template.Template
	data        map[string]*template.Template
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

// Parse parses a campaign's templates; a template that does not parse is
// an invalid_argument naming its field (title, body, data.<key>).
func Parse(c heraldtype.Campaign) (*Content, error) {
	var out Content
	var err error
	if out.title, err = parse("title", c.Title); err != nil {
		return nil, err
	}
	if out.body, err = parse("body", c.Body); err != nil {
		return nil, err
	}
	if len(c.Data) > 0 {
		out.data = make(map[string]*template.Template, len(c.Data))
		for _, k := range slices.Sorted(maps.Keys(c.Data)) {
			if out.data[k], err = parse("data."+k, c.Data[k]); err != nil {
				return nil, err
			}
		}
	}
	return &out, nil
}

func parse(field, text string) (*template.Template, error) {
	t, err := tmpl.Parse(field, text)
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

// Render renders the content for v.
func (c *Content) Render(v View) (Rendered, error) {
	var r Rendered
	var err error
	if r.Title, err = execute(c.title, v); err != nil {
		return r, err
	}
	if r.Body, err = execute(c.body, v); err != nil {
		return r, err
	}
	if len(c.data) > 0 {
		r.Data = make(map[string]string, len(c.data))
		for k, t := range c.data {
			if r.Data[k], err = execute(t, v); err != nil {
				return r, err
			}
		}
	}
	return r, nil
}

// maxRendered bounds what one template may produce, far above every
// field's own limit (checked when the notification is built).
const maxRendered = 64 << 10

func execute(t *template.Template, v View) (string, error) {
	out, err := tmpl.Execute(t, v, maxRendered)
	if err != nil {
		return "", fmt.Errorf("render %s: %w", t.Name(), err)
	}
	return out, nil
}
