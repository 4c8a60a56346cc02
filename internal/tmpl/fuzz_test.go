package tmpl

import (
	"context"
	"errors"
	"testing"
	"time"
)

// FuzzRender (issue 31 item 7): whatever an operator saves as a template
// and whatever the event carries, a render ends — within its budget, its
// output within its limit — or fails with an error; it never panics,
// never spins and never builds more than the budget allows (the deadline
// below is a net far above what a budget of 2,000 steps can take: a
// render that reaches it escaped the budget).
func FuzzRender(f *testing.F) {
	for _, seed := range []string{
		`{{$x:="0123456789abcdef"}}{{range 34}}{{$x = print $x $x}}{{end}}`,
		`{{range 9000000000000000000}}{{end}}`,
		`{{range 2000}}{{range 2000}}{{end}}{{end}}`,
		`{{.a}} is {{printf "%.2f" 1.5}} {{html .b}} {{js .b}} {{urlquery .b}}`,
		`{{range $i, $c := .list}}{{$i}}={{$c}}{{else}}none{{end}}`,
		`{{define "x"}}{{template "x"}}{{end}}{{template "x"}}`,
		`{{printf "%99d%99d" 1 2}}{{println .a .b}}`,
		`{{with .a}}{{len .}}{{end}}{{if eq .a "x"}}y{{end}}`,
	} {
		f.Add(seed, "kettle", "<b>&")
	}
	lim := Limits{MaxSteps: 2000, MaxBytes: 64 << 10}
	f.Fuzz(func(t *testing.T, text, a, b string) {
		tp, err := Parse("t", text, lim)
		if err != nil {
			return
		}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		bud := NewBudget(ctx, lim)
		data := map[string]any{"a": a, "b": b, "list": []any{a, b, 3}}
		out, err := tp.Execute(bud, data, 4096)
		if errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("%q ran past its budget: %d steps, %d bytes", text, bud.steps, bud.bytes)
		}
		if err == nil && len(out) > 4096 {
			t.Fatalf("%q rendered %d bytes past its limit", text, len(out))
		}
		if bud.steps > lim.MaxSteps+1 {
			t.Fatalf("%q took %d steps", text, bud.steps)
		}
	})
}
