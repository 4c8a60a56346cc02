package rule

import (
	"errors"
	"strings"
	"text/template"

	"github.com/heraldhq/herald/internal/tmpl"
)

// MaxRendered bounds what one template may render (bytes): the title,
// body and data limits of a trigger are far below it, and a template
// cannot make the server build a huge string on its way to being
// refused.
const MaxRendered = 16 << 10

// parse compiles one template of a rule (internal/tmpl): a field the
// event lacks is an error at render time, never "<no value>" in a user's
// push.
func parse(name, text string) (*template.Template, error) { return tmpl.Parse(name, text) }

// render executes t with vars.
func render(t *template.Template, vars map[string]string) (string, error) {
	out, err := tmpl.Execute(t, vars, MaxRendered)
	if err != nil {
		var tooLong *tmpl.ErrTooLong
		if errors.As(err, &tooLong) {
			return "", tooLong
		}
		// "template: notify.title:1:9: executing "notify.title" at
		// <.product_name>: map has no entry for key "product_name"":
		// keep what names the field.
		msg := err.Error()
		if i := strings.Index(msg, " at <"); i >= 0 {
			msg = msg[i+1:]
		}
		return "", errors.New(msg)
	}
	return out, nil
}
