package rule

import (
	"bytes"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"text/template"
)

// MaxRendered bounds what one template may render (bytes): the title,
// body and data limits of a trigger are far below it, and a template
// cannot make the server build a huge string on its way to being
// refused.
const MaxRendered = 16 << 10

// printfWidth finds a width or precision in a format verb.
var printfWidth = regexp.MustCompile(`%[-+# 0]*(\d+|\*)?(\.(\d+|\*))?`)

// boundedPrintf is printf with widths and precisions of at most 64: the
// builtin would allocate whatever "%999999999d" asks for before any
// output limit could stop it.
func boundedPrintf(format string, args ...any) (string, error) {
	for _, m := range printfWidth.FindAllStringSubmatch(format, -1) {
		for _, n := range []string{m[1], m[3]} {
			if n == "*" || len(n) > 2 {
				return "", errors.New("printf: widths and precisions above 99 are not allowed")
			}
		}
	}
	return fmt.Sprintf(format, args...), nil
}

// parse compiles one template of a rule: Go text/template, where a
// field the event lacks is an error at render time (missingkey=error),
// never "<no value>" in a user's push.
func parse(name, text string) (*template.Template, error) {
	return template.New(name).Option("missingkey=error").
		Funcs(template.FuncMap{"printf": boundedPrintf}).Parse(text)
}

// limitWriter fails once more than n bytes were written.
type limitWriter struct {
	b bytes.Buffer
	n int
}

var errTooLong = fmt.Errorf("renders more than %d bytes", MaxRendered)

func (w *limitWriter) Write(p []byte) (int, error) {
	if w.b.Len()+len(p) > w.n {
		return 0, errTooLong
	}
	return w.b.Write(p)
}

// render executes t with vars.
func render(t *template.Template, vars map[string]string) (string, error) {
	w := &limitWriter{n: MaxRendered}
	if err := t.Execute(w, vars); err != nil {
		if errors.Is(err, errTooLong) {
			return "", errTooLong
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
	return w.b.String(), nil
}
