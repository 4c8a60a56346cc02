package tmpl

import (
	"context"
	"errors"
	"strings"
	"testing"
)

// TestHTMLEscapesAndStaysBounded: an HTML template (issue 37 item 3)
// escapes each value for where it lands, and runs under the same budget,
// output limit and missing-key rule as a text one.
func TestHTMLEscapesAndStaysBounded(t *testing.T) {
	parse := func(text string) *Template {
		t.Helper()
		tp, err := ParseWith("html", text, Limits{MaxSteps: 100, MaxBytes: 4096}, Options{HTML: true})
		if err != nil {
			t.Fatalf("parse %s: %v", text, err)
		}
		return tp
	}
	data := map[string]any{"name": `<script>alert(1)</script>`, "url": `javascript:alert(1)`, "list": make([]any, 500)}
	out, err := parse(`<p>Hi {{.name}}</p><a href="{{.url}}">go</a>`).Execute(NewBudget(context.Background(), Limits{MaxSteps: 100}), data, 4096)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(out, "<script>") || !strings.Contains(out, "&lt;script&gt;") || !strings.Contains(out, "#ZgotmplZ") {
		t.Fatalf("not escaped: %s", out)
	}
	if _, err := parse(`{{.missing}}`).Execute(NewBudget(context.Background(), Limits{}), data, 4096); err == nil || strings.Contains(err.Error(), "no value") && !strings.Contains(err.Error(), "missing") {
		t.Fatalf("a missing key rendered: %v", err)
	}
	if _, err := parse(`{{range .list}}x{{end}}`).Execute(NewBudget(context.Background(), Limits{MaxSteps: 100}), data, 4096); err == nil {
		t.Fatal("a range past the steps rendered")
	} else if limit, ok := OverBudget(err); !ok || limit != "steps" {
		t.Fatalf("over the steps: %v", err)
	}
	var long *ErrTooLong
	if _, err := parse(`{{.name}}{{.name}}`).Execute(NewBudget(context.Background(), Limits{}), data, 40); !errors.As(err, &long) {
		t.Fatalf("over the output limit: %v", err)
	}
	if _, err := ParseWith("html", `{{define "x"}}{{end}}`, Limits{}, Options{HTML: true}); err == nil {
		t.Fatal("a define parsed")
	}
}

// TestCallerFuncs: a caller's function sees the render's env and builds
// under its budget; it cannot replace a builtin.
func TestCallerFuncs(t *testing.T) {
	opt := Options{Funcs: func(cur func() Call) map[string]any {
		return map[string]any{
			"greet": func(s string) (string, error) {
				c := cur()
				return c.Budget.Build(len(s)+8, func() string { return c.Env.(string) + " " + s })
			},
			"print": func(...any) string { return "replaced" },
		}
	}}
	tp, err := ParseWith("t", `{{greet .n}} {{print "p"}}`, Limits{}, opt)
	if err != nil {
		t.Fatal(err)
	}
	for _, env := range []string{"안녕", "Hello"} {
		out, err := tp.ExecuteEnv(NewBudget(context.Background(), Limits{}), map[string]any{"n": "Mina"}, env, 100)
		if err != nil || out != env+" Mina p" {
			t.Fatalf("%s: %q %v", env, out, err)
		}
	}
	if _, err := tp.ExecuteEnv(NewBudget(context.Background(), Limits{MaxBytes: 4}), map[string]any{"n": "Mina"}, "x", 100); err == nil {
		t.Fatal("a caller's function built past the budget")
	}
}
