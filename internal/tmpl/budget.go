package tmpl

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"regexp"
	"text/template"
	"time"
)

// Limits bound one render (a message: its title, body and data together).
// Zero fields take the defaults.
type Limits struct {
	// MaxSteps bounds the steps of a render: each iteration of a range
	// (nested ones each count) and each string a function builds.
	// Default DefaultMaxSteps.
	MaxSteps int
	// MaxBytes bounds the bytes a render builds: what it writes and every
	// string a function builds on the way, written or not (a variable
	// doubled in a loop is refused before it is built). Default
	// DefaultMaxBytes.
	MaxBytes int
	// MaxDuration bounds a render's time, checked at each step: the
	// backstop for work a step does that neither count measures —
	// comparing or hashing long strings (eq, lt, index), once per call,
	// however many calls a range body holds. Default DefaultMaxDuration.
	MaxDuration time.Duration
}

// Defaults of Limits: far above a real message (a title and a body of 2,000
// characters, 4 KiB of data, a list of a few hundred items), far below
// what hurts a server — a render does at most a few milliseconds of work.
const (
	DefaultMaxSteps    = 10_000
	DefaultMaxBytes    = 256 << 10
	DefaultMaxDuration = 250 * time.Millisecond
)

func (l Limits) withDefaults() Limits {
	if l.MaxSteps <= 0 {
		l.MaxSteps = DefaultMaxSteps
	}
	if l.MaxBytes <= 0 {
		l.MaxBytes = DefaultMaxBytes
	}
	if l.MaxDuration <= 0 {
		l.MaxDuration = DefaultMaxDuration
	}
	return l
}

// BudgetError is a render stopped by its budget: Limit is "steps",
// "bytes" or "time", Max the limit (a count, bytes, or nanoseconds).
type BudgetError struct {
	Limit string
	Max   int64
}

func (e *BudgetError) Error() string {
	switch e.Limit {
	case "steps":
		return fmt.Sprintf("the template takes more than %d steps (templates.max_steps)", e.Max)
	case "time":
		return fmt.Sprintf("the template runs longer than %v (templates.max_duration)", time.Duration(e.Max))
	}
	return fmt.Sprintf("the template builds more than %d bytes (templates.max_bytes)", e.Max)
}

// Budget is what one render may still spend, under the caller's context.
// One Budget serves every template of one message; it is not safe for
// concurrent renders.
type Budget struct {
	ctx          context.Context
	lim          Limits
	steps, bytes int
	deadline     time.Time
}

// NewBudget starts a render's budget.
func NewBudget(ctx context.Context, lim Limits) *Budget {
	lim = lim.withDefaults()
	return &Budget{ctx: ctx, lim: lim, deadline: time.Now().Add(lim.MaxDuration)}
}

// step takes one step, or fails once the steps or the time are spent or
// the context is done.
func (b *Budget) step() error {
	b.steps++
	if b.steps > b.lim.MaxSteps {
		return &BudgetError{Limit: "steps", Max: int64(b.lim.MaxSteps)}
	}
	if time.Now().After(b.deadline) {
		return &BudgetError{Limit: "time", Max: int64(b.lim.MaxDuration)}
	}
	return b.ctx.Err()
}

// charge counts n bytes built, or fails once the bytes are spent.
func (b *Budget) charge(n int) error {
	b.bytes += n
	if b.bytes > b.lim.MaxBytes || n < 0 {
		b.bytes = b.lim.MaxBytes + 1 // spent: every later ask fails too
		return &BudgetError{Limit: "bytes", Max: int64(b.lim.MaxBytes)}
	}
	return nil
}

// reserve takes a step for a function about to build a string of at most
// n bytes (an estimate from its arguments' sizes), failing before it is
// built when n does not fit in what is left.
func (b *Budget) reserve(n int) error {
	if err := b.step(); err != nil {
		return err
	}
	if b.bytes+n > b.lim.MaxBytes || n < 0 {
		return &BudgetError{Limit: "bytes", Max: int64(b.lim.MaxBytes)}
	}
	return nil
}

// stepFunc is the name of the function Parse calls at the start of every
// range body.
const stepFunc = "_herald_step"

// funcs are the functions an instance's template calls: the step counter
// and the builtins that build strings, each asking in.b first. Outside a
// render (in.b nil, as when Parse checks names) they are never called.
func (in *instance) funcs(opt Options) map[string]any {
	fm := map[string]any{
		stepFunc: func() (string, error) { return "", in.b.step() },
		"print": func(args ...any) (string, error) {
			return in.build(argsSize(args), func() string { return fmt.Sprint(args...) })
		},
		"println": func(args ...any) (string, error) {
			return in.build(argsSize(args)+len(args)+1, func() string { return fmt.Sprintln(args...) })
		},
		"printf": func(format string, args ...any) (string, error) {
			if err := checkWidths(format); err != nil {
				return "", err
			}
			return in.build(len(format)+argsSize(args), func() string { return fmt.Sprintf(format, args...) })
		},
		"html": func(args ...any) (string, error) {
			return in.build(argsSize(args), func() string { return template.HTMLEscapeString(evalArgs(args)) })
		},
		"js": func(args ...any) (string, error) {
			return in.build(argsSize(args), func() string { return template.JSEscapeString(evalArgs(args)) })
		},
		"urlquery": func(args ...any) (string, error) {
			return in.build(argsSize(args), func() string { return url.QueryEscape(evalArgs(args)) })
		},
	}
	if opt.Funcs != nil {
		for name, f := range opt.Funcs(func() Call { return Call{Budget: in.b, Env: in.env} }) {
			if _, builtin := fm[name]; !builtin {
				fm[name] = f
			}
		}
	}
	return fm
}

// build reserves estimate bytes — at least what the string will take:
// its arguments' own bytes — builds the string and charges what it really
// took. So one call can build more than what is left only by its own
// expansion of what is left (an escaper's 6 bytes per byte at most, a
// printf verb's padding to 99 characters), once: the next ask fails.
// Reserving the worst case instead would refuse honest renders.
func (in *instance) build(estimate int, f func() string) (string, error) {
	return in.b.Build(estimate, f)
}

// Build is how a caller's function (Options.Funcs) builds a string under
// the render's budget: it takes a step, reserves estimate bytes — at
// least the string's own arguments' bytes — before building, and charges
// what f really built.
func (b *Budget) Build(estimate int, f func() string) (string, error) {
	if err := b.reserve(estimate); err != nil {
		return "", err
	}
	s := f()
	if err := b.charge(len(s)); err != nil {
		return "", err
	}
	return s, nil
}

// argsSize estimates the bytes that formatting args builds: a string's
// length, a number's few digits. A composite value (a list, a map from a
// campaign's fetched content) counts 0 here and is charged once built: it
// is bounded by the data already in memory, which its caller bounded.
func argsSize(args []any) int {
	n := 0
	for _, a := range args {
		switch v := a.(type) {
		case string:
			n += len(v)
		case []byte:
			n += len(v)
		case fmt.Stringer, error:
			// Unknown until formatted: charged after.
		default:
			n += 24 // a number, a bool: at most a float's digits
		}
	}
	return n
}

// evalArgs is text/template's own: one string argument as it is, anything
// else formatted with fmt.Sprint.
func evalArgs(args []any) string {
	if len(args) == 1 {
		if s, ok := args[0].(string); ok {
			return s
		}
	}
	return fmt.Sprint(args...)
}

// printfWidths finds the widths and precisions of a format's verbs.
var printfWidths = regexp.MustCompile(`%[-+# 0]*(\d+|\*)?(?:\.(\d+|\*))?`)

// checkWidths refuses widths and precisions above 99: the builtin printf
// would build whatever "%999999999d" asks for before any limit could
// refuse it.
func checkWidths(format string) error {
	for _, m := range printfWidths.FindAllStringSubmatch(format, -1) {
		for _, n := range m[1:] {
			if n == "*" || len(n) > 2 {
				return fmt.Errorf("printf: a width or precision above 99 (%q)", m[0])
			}
		}
	}
	return nil
}

// OverBudget reports whether err is a render stopped by its budget, and
// which limit stopped it ("steps", "bytes" or "time"), for a metric's
// label.
func OverBudget(err error) (limit string, ok bool) {
	var over *BudgetError
	if errors.As(err, &over) {
		return over.Limit, true
	}
	return "", false
}
