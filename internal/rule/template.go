package rule

import (
	"context"
	"errors"
	"strings"

	"github.com/heraldhq/herald/internal/message"
	"github.com/heraldhq/herald/internal/tmpl"
)

// MaxRendered bounds what one template may render (bytes): the title,
// body and data limits of a trigger are far below it, and a template
// cannot make the server build a huge string on its way to being
// refused.
const MaxRendered = 16 << 10

// RenderError is a rule's message that could not be rendered — a field
// the event lacks, a template over its budget (tmpl.BudgetError), an
// output over MaxRendered — for the template named Field
// (notify.title, notify.data.<key>). The rule's decision fails
// render_failed (issue 31 item 1).
type RenderError struct {
	Field string
	Err   error
}

func (e *RenderError) Error() string { return "render_failed: " + e.Field + ": " + e.Err.Error() }

func (e *RenderError) Unwrap() error { return e.Err }

// parse compiles one template of a rule (internal/tmpl): a field the
// event lacks is an error at render time, never "<no value>" in a user's
// push.
func parse(name, text string, lim tmpl.Limits) (*tmpl.Template, error) {
	return message.ParseText(name, text, lim)
}

// render executes t with vars under the message's budget.
func render(t *tmpl.Template, b *tmpl.Budget, vars map[string]string) (string, error) {
	out, err := t.Execute(b, vars, MaxRendered)
	if err == nil {
		return out, nil
	}
	var tooLong *tmpl.ErrTooLong
	var over *tmpl.BudgetError
	if errors.As(err, &tooLong) || errors.As(err, &over) || errors.Is(err, context.Canceled) ||
		errors.Is(err, context.DeadlineExceeded) {
		return "", &RenderError{Field: t.Name(), Err: err}
	}
	// "template: notify.title:1:9: executing "notify.title" at
	// <.product_name>: map has no entry for key "product_name"":
	// keep what names the field.
	msg := err.Error()
	if i := strings.Index(msg, " at <"); i >= 0 {
		msg = msg[i+1:]
	}
	return "", &RenderError{Field: t.Name(), Err: errors.New(msg)}
}
