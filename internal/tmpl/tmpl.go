// Package tmpl is the Go text/template that campaigns and event rules
// render users' messages with, bounded so a template written by an
// operator cannot hurt the process or a user (issue 31 item 1):
//
//   - a field the data lacks is an error (missingkey=error), never
//     "<no value>" in someone's push;
//   - every render runs under a Budget: a number of steps (each iteration
//     of a range, each string a function builds), a number of bytes built
//     (what it writes and every intermediate string a function builds,
//     written or not), a time checked at each step, and the caller's
//     context — a render over budget stops with a *BudgetError instead of
//     spinning a core or taking the process's memory;
//   - printf widths and precisions are capped, and each template's output
//     stops at a size limit (*ErrTooLong);
//   - what can be refused when a template is saved is refused then: a
//     {{define}}, {{block}} or {{template}} (a template calling templates
//     can recurse, or expand exponentially without a loop), and a range
//     over an integer literal above the step budget.
//
// The budget works from inside the template: Parse walks the parsed tree
// and puts a call of a step-counting function at the start of every range
// body, so each iteration asks the budget before it runs (an error from a
// function aborts text/template's Execute), and the builtins that build
// strings (print, printf, println, html, js, urlquery) are overridden by
// versions that ask the budget for their result's size before they build
// it.
package tmpl

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"text/template"
)

// Template is a parsed, instrumented template. It is safe for concurrent
// renders: each render borrows its own clone (bound to that render's
// Budget) from a pool, so parsing happens once and a render clones only
// when every clone is busy.
type Template struct {
	t    *template.Template
	lim  Limits
	pool sync.Pool // *instance
}

// Parse parses a template named name with Herald's options and checks it
// against lim (zero fields take the defaults): a template that defines or
// calls templates, or ranges over an integer literal above lim.MaxSteps,
// is refused.
func Parse(name, text string, lim Limits) (*Template, error) {
	lim = lim.withDefaults()
	t, err := template.New(name).Option("missingkey=error").Funcs((&instance{}).funcs()).Parse(text)
	if err != nil {
		return nil, err
	}
	for _, other := range t.Templates() {
		if other.Name() != name {
			return nil, fmt.Errorf("defines a template (%q): a message template cannot define or call templates", other.Name())
		}
	}
	if t.Tree != nil && t.Tree.Root != nil {
		if err := instrument(t.Tree.Root, lim); err != nil {
			return nil, err
		}
	}
	return &Template{t: t, lim: lim}, nil
}

// Name is the template's name.
func (t *Template) Name() string { return t.t.Name() }

// Limits are the limits the template was parsed with.
func (t *Template) Limits() Limits { return t.lim }

// ErrTooLong is the error of a render that would exceed its output limit.
type ErrTooLong struct{ Max int }

func (e *ErrTooLong) Error() string { return fmt.Sprintf("renders more than %d bytes", e.Max) }

// Execute renders t with data under b, failing with *ErrTooLong once the
// output would exceed max bytes, with *BudgetError once b is spent, and
// with the context's error (wrapped) once b's context is done.
func (t *Template) Execute(b *Budget, data any, max int) (string, error) {
	in := t.borrow()
	defer t.pool.Put(in)
	in.b = b
	defer func() { in.b = nil }()
	w := &limitedBuilder{max: max, b: b}
	if err := in.t.Execute(w, data); err != nil {
		var over *BudgetError
		switch {
		case errors.As(err, &over):
			return "", over
		case b.ctx.Err() != nil:
			return "", fmt.Errorf("render stopped: %w", b.ctx.Err())
		}
		return "", err
	}
	return w.String(), nil
}

// instance is one clone of a Template, its functions bound to the Budget
// of the render that borrowed it.
type instance struct {
	t *template.Template
	b *Budget
}

func (t *Template) borrow() *instance {
	if in, ok := t.pool.Get().(*instance); ok {
		return in
	}
	in := &instance{}
	c, err := t.t.Clone()
	if err != nil {
		// Clone fails only for an html/template already executed.
		panic(fmt.Sprintf("tmpl: clone: %v", err))
	}
	in.t = c.Funcs(in.funcs())
	return in
}

// limitedBuilder is a strings.Builder that refuses to grow past max, and
// charges what it is given to the render's byte budget, so a template
// ranging over a huge list cannot take the process's memory.
type limitedBuilder struct {
	strings.Builder
	max int
	b   *Budget
}

func (w *limitedBuilder) Write(p []byte) (int, error) {
	if w.Len()+len(p) > w.max {
		return 0, &ErrTooLong{Max: w.max}
	}
	if err := w.b.charge(len(p)); err != nil {
		return 0, err
	}
	return w.Builder.Write(p)
}
