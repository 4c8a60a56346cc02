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
	htmltemplate "html/template"
	"io"
	"strings"
	"sync"
	"text/template"
	"text/template/parse"
)

// Template is a parsed, instrumented template. It is safe for concurrent
// renders: each render borrows its own clone (bound to that render's
// Budget) from a pool, so parsing happens once and a render clones only
// when every clone is busy.
type Template struct {
	t    *template.Template     // a text template, or
	h    *htmltemplate.Template // an HTML one (Options.HTML)
	lim  Limits
	opt  Options
	pool sync.Pool // *instance
}

// Options are what a caller adds to Herald's template: contextual HTML
// escaping, and functions of its own.
type Options struct {
	// HTML parses the template with html/template: every value printed
	// is escaped for where it lands (text, attribute, URL, script), so an
	// e-mail body built from a user's data cannot carry markup the
	// template's author did not write (issue 37 item 3). The budget
	// applies as to a text template: the steps at every range iteration,
	// the string-building builtins, the output written, the time.
	HTML bool
	// Funcs makes the caller's functions for one clone of the template:
	// cur returns the render in progress (its Budget, and the Env handed
	// to ExecuteEnv), so a function can charge what it builds
	// (Budget.Build) and read the render's locale or zone. Outside a
	// render — when Parse checks the names — the functions are never
	// called. A function must not override a builtin.
	Funcs func(cur func() Call) map[string]any
}

// Call is the render in progress, as the caller's functions see it.
type Call struct {
	Budget *Budget
	Env    any
}

// Parse parses a template named name with Herald's options and checks it
// against lim (zero fields take the defaults): a template that defines or
// calls templates, or ranges over an integer literal above lim.MaxSteps,
// is refused.
func Parse(name, text string, lim Limits) (*Template, error) {
	return ParseWith(name, text, lim, Options{})
}

// ParseWith is Parse with the caller's Options.
func ParseWith(name, text string, lim Limits, opt Options) (*Template, error) {
	lim = lim.withDefaults()
	out := &Template{lim: lim, opt: opt}
	probe := &instance{}
	var tree *parse.Tree
	var names []string
	if opt.HTML {
		h, err := htmltemplate.New(name).Option("missingkey=error").Funcs(probe.funcs(opt)).Parse(text)
		if err != nil {
			return nil, err
		}
		for _, other := range h.Templates() {
			names = append(names, other.Name())
		}
		out.h, tree = h, h.Tree
	} else {
		t, err := template.New(name).Option("missingkey=error").Funcs(probe.funcs(opt)).Parse(text)
		if err != nil {
			return nil, err
		}
		for _, other := range t.Templates() {
			names = append(names, other.Name())
		}
		out.t, tree = t, t.Tree
	}
	for _, other := range names {
		if other != name {
			return nil, fmt.Errorf("defines a template (%q): a message template cannot define or call templates", other)
		}
	}
	if tree != nil && tree.Root != nil {
		if err := instrument(tree.Root, lim); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// Name is the template's name.
func (t *Template) Name() string {
	if t.h != nil {
		return t.h.Name()
	}
	return t.t.Name()
}

// Limits are the limits the template was parsed with.
func (t *Template) Limits() Limits { return t.lim }

// ErrTooLong is the error of a render that would exceed its output limit.
type ErrTooLong struct{ Max int }

func (e *ErrTooLong) Error() string { return fmt.Sprintf("renders more than %d bytes", e.Max) }

// Execute renders t with data under b, failing with *ErrTooLong once the
// output would exceed max bytes, with *BudgetError once b is spent, and
// with the context's error (wrapped) once b's context is done.
func (t *Template) Execute(b *Budget, data any, max int) (string, error) {
	return t.ExecuteEnv(b, data, nil, max)
}

// ExecuteEnv is Execute with env handed to the caller's functions
// (Options.Funcs) as Call.Env.
func (t *Template) ExecuteEnv(b *Budget, data, env any, max int) (string, error) {
	in := t.borrow()
	defer t.pool.Put(in)
	in.b, in.env = b, env
	defer func() { in.b, in.env = nil, nil }()
	w := &limitedBuilder{max: max, b: b}
	if err := in.exec.Execute(w, data); err != nil {
		var over *BudgetError
		var long *ErrTooLong
		switch {
		case errors.As(err, &over):
			return "", over
		case errors.As(err, &long):
			return "", long
		case b.ctx.Err() != nil:
			return "", fmt.Errorf("render stopped: %w", b.ctx.Err())
		}
		return "", err
	}
	return w.String(), nil
}

// instance is one clone of a Template, its functions bound to the Budget
// (and the caller's env) of the render that borrowed it.
type instance struct {
	exec interface {
		Execute(w io.Writer, data any) error
	}
	b   *Budget
	env any
}

func (t *Template) borrow() *instance {
	if in, ok := t.pool.Get().(*instance); ok {
		return in
	}
	in := &instance{}
	// The parsed template itself is never executed, so Clone — which
	// html/template refuses once a template has run — always works.
	if t.h != nil {
		c, err := t.h.Clone()
		if err != nil {
			panic(fmt.Sprintf("tmpl: clone: %v", err))
		}
		in.exec = c.Funcs(in.funcs(t.opt))
		return in
	}
	c, err := t.t.Clone()
	if err != nil {
		panic(fmt.Sprintf("tmpl: clone: %v", err))
	}
	in.exec = c.Funcs(in.funcs(t.opt))
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
