// Package tmpl is the Go text/template that campaigns and event rules
// render users' messages with, bounded so a template written by an
// operator cannot hurt the process or a user: a field the data lacks is an
// error (missingkey=error), never "<no value>" in someone's push; printf
// widths and precisions are capped; and a render stops at a size limit.
package tmpl

import (
	"fmt"
	"regexp"
	"strings"
	"text/template"
)

// Parse parses a template named name with Herald's options.
func Parse(name, text string) (*template.Template, error) {
	return template.New(name).Option("missingkey=error").
		Funcs(template.FuncMap{"printf": boundedPrintf}).Parse(text)
}

// ErrTooLong is the error of a render that would exceed its limit.
type ErrTooLong struct{ Max int }

func (e *ErrTooLong) Error() string { return fmt.Sprintf("renders more than %d bytes", e.Max) }

// Execute renders t with data, failing with *ErrTooLong once the output
// would exceed max bytes.
func Execute(t *template.Template, data any, max int) (string, error) {
	w := &limitedBuilder{max: max}
	if err := t.Execute(w, data); err != nil {
		return "", err
	}
	return w.String(), nil
}

// limitedBuilder is a strings.Builder that refuses to grow past max, so a
// template ranging over a huge list cannot take the process's memory.
type limitedBuilder struct {
	strings.Builder
	max int
}

func (b *limitedBuilder) Write(p []byte) (int, error) {
	if b.Len()+len(p) > b.max {
		return 0, &ErrTooLong{Max: b.max}
	}
	return b.Builder.Write(p)
}

// printfWidths finds the widths and precisions of a format's verbs.
var printfWidths = regexp.MustCompile(`%[-+# 0]*(\d+|\*)?(?:\.(\d+|\*))?`)

// boundedPrintf is text/template's printf with widths and precisions of
// at most 99: the builtin would build whatever "%999999999d" asks for
// before any output limit could refuse it.
func boundedPrintf(format string, args ...any) (string, error) {
	for _, m := range printfWidths.FindAllStringSubmatch(format, -1) {
		for _, n := range m[1:] {
			if n == "*" || len(n) > 2 {
				return "", fmt.Errorf("printf: a width or precision above 99 (%q)", m[0])
			}
		}
	}
	return fmt.Sprintf(format, args...), nil
}
