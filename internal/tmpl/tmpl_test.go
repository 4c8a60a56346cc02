package tmpl

import (
	"context"
	"errors"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"
)

func render(t *testing.T, text string, data any, max int) (string, error) {
	t.Helper()
	tp, err := Parse("t", text, Limits{})
	if err != nil {
		t.Fatalf("parse %s: %v", text, err)
	}
	return tp.Execute(NewBudget(context.Background(), tp.Limits()), data, max)
}

func TestBounds(t *testing.T) {
	if out, err := render(t, "{{.a}}-{{.b}}", map[string]string{"a": "1", "b": "2"}, 100); err != nil || out != "1-2" {
		t.Fatalf("render: %q %v", out, err)
	}
	if _, err := render(t, "{{.a}}-{{.b}}", map[string]string{"a": "1"}, 100); err == nil || !strings.Contains(err.Error(), `"b"`) {
		t.Fatalf("a missing key rendered: %v", err)
	}
	var tooLong *ErrTooLong
	if _, err := render(t, "{{.a}}-{{.b}}", map[string]string{"a": strings.Repeat("x", 200), "b": ""}, 100); !errors.As(err, &tooLong) {
		t.Fatalf("over the limit: %v", err)
	}
	for _, text := range []string{`{{printf "%999999999d" 1}}`, `{{printf "%.999999f" 1.0}}`, `{{printf "%*d" 9 1}}`} {
		if _, err := render(t, text, nil, 1<<20); err == nil {
			t.Fatalf("%s rendered", text)
		}
	}
	if out, err := render(t, `{{printf "%5.2f" 3.14159}}`, nil, 100); err != nil || out != " 3.14" {
		t.Fatalf("a small width: %q %v", out, err)
	}
}

// TestBuiltinsStillWork: the overridden builtins behave as text/template's.
func TestBuiltinsStillWork(t *testing.T) {
	data := map[string]any{"s": `a<b&"c"`, "n": 3, "list": []any{"x", "y"}, "none": []any{}}
	for text, want := range map[string]string{
		`{{print .s 1 2}}`:              `a<b&"c"1 2`,
		`{{println .s}}`:                "a<b&\"c\"\n",
		`{{printf "%s-%d" .s .n}}`:      `a<b&"c"-3`,
		`{{html .s}}`:                   `a&lt;b&amp;&#34;c&#34;`,
		`{{js .s}}`:                     `a\u003Cb\u0026\"c\"`,
		`{{urlquery .s}}`:               `a%3Cb%26%22c%22`,
		`{{.s | html}}`:                 `a&lt;b&amp;&#34;c&#34;`,
		`{{range .list}}[{{.}}]{{end}}`: "[x][y]",
		`{{range $i, $e := .list}}{{$i}}{{$e}}{{end}}`:                  "0x1y",
		`{{range 3}}{{.}}{{end}}`:                                       "012",
		`{{range .none}}x{{else}}empty{{end}}`:                          "empty",
		`{{range .list}}{{if eq . "x"}}{{continue}}{{end}}{{.}}{{end}}`: "y",
		`{{range .list}}{{.}}{{break}}{{end}}`:                          "x",
		`{{with .s}}{{len .}}{{end}}`:                                   "7",
		`{{if and .n .s}}yes{{end}}`:                                    "yes",
	} {
		out, err := render(t, text, data, 1000)
		if err != nil || out != want {
			t.Errorf("%s = %q, %v; want %q", text, out, err, want)
		}
	}
}

// TestRefusedAtParse: what can be refused statically is refused when the
// template is saved (issue 31 item 1).
func TestRefusedAtParse(t *testing.T) {
	for text, want := range map[string]string{
		`{{range 9000000000000000000}}{{end}}`:                    "ranges over 9000000000000000000",
		`{{range 18000000000000000000}}{{end}}`:                   "ranges over",
		`{{range 10001}}{{end}}`:                                  "templates.max_steps",
		`{{define "x"}}a{{end}}{{template "x"}}`:                  "cannot define or call templates",
		`{{block "x" .}}a{{end}}`:                                 "cannot define or call templates",
		`{{template "t"}}`:                                        "cannot define or call templates",
		`{{if 1}}{{range 1}}{{range 99999}}{{end}}{{end}}{{end}}`: "ranges over 99999",
	} {
		if _, err := Parse("t", text, Limits{}); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want an error containing %q", text, err, want)
		}
	}
	if _, err := Parse("t", `{{range 10000}}{{end}}`, Limits{}); err != nil {
		t.Errorf("a range within the budget: %v", err)
	}
}

// TestBudget: the payloads of issue 31 item 1 and their relatives stop at
// the budget, quickly and with little memory.
func TestBudget(t *testing.T) {
	lim := Limits{MaxSteps: 1000, MaxBytes: 64 << 10}
	for name, tc := range map[string]struct {
		text, limit string
	}{
		"doubling":            {`{{$x:="0123456789abcdef"}}{{range 34}}{{$x = print $x $x}}{{end}}`, "bytes"},
		"doubling printf":     {`{{$x:="0123456789abcdef"}}{{range 34}}{{$x = printf "%s%s" $x $x}}{{end}}`, "bytes"},
		"doubling println":    {`{{$x:="0123456789abcdef"}}{{range 34}}{{$x = println $x $x}}{{end}}`, "bytes"},
		"escaping":            {`{{$x:="<<<<<<<<<<<<<<<<"}}{{range 34}}{{$x = js $x}}{{end}}`, "bytes"},
		"html":                {`{{$x:="&&&&&&&&"}}{{range 34}}{{$x = html $x $x}}{{end}}`, "bytes"},
		"urlquery":            {`{{$x:="%%%%"}}{{range 34}}{{$x = urlquery $x $x}}{{end}}`, "bytes"},
		"spin":                {`{{range 1000}}{{range 1000}}{{end}}{{end}}`, "steps"},
		"nested spin":         {`{{range 999}}{{range 999}}{{range 999}}{{end}}{{end}}{{end}}`, "steps"},
		"continue spin":       {`{{range 999}}{{range 999}}{{continue}}{{end}}{{end}}`, "steps"},
		"spin in else":        {`{{range 0}}{{else}}{{range 999}}{{range 999}}{{end}}{{end}}{{end}}`, "steps"},
		"spin in with":        {`{{with 1}}{{range 999}}{{range 999}}{{end}}{{end}}{{end}}`, "steps"},
		"many small strings":  {`{{range 999}}{{range 999}}{{$y := print "a"}}{{end}}{{end}}`, "steps"},
		"range over variable": {`{{$n := 999}}{{range $n}}{{range $n}}{{end}}{{end}}`, "steps"},
	} {
		tp, err := Parse("t", tc.text, lim)
		if err != nil {
			t.Fatalf("%s: parse: %v", name, err)
		}
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		_, err = tp.Execute(NewBudget(context.Background(), lim), nil, 1<<20)
		runtime.ReadMemStats(&after)
		var over *BudgetError
		if !errors.As(err, &over) || over.Limit != tc.limit {
			t.Errorf("%s: %v, want the %s budget", name, err, tc.limit)
		}
		// What the render allocated: the byte budget, the escapers'
		// expansion of what was left, and text/template's own per-step
		// work — never the 256 GiB the doubling asks for.
		if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 8<<20 {
			t.Errorf("%s: allocated %d bytes", name, alloc)
		}
	}
}

// TestBudgetSharedByTemplates: one Budget bounds every template of a
// message together.
func TestBudgetSharedByTemplates(t *testing.T) {
	lim := Limits{MaxSteps: 10, MaxBytes: 1000}
	tp, err := Parse("t", `{{range 6}}x{{end}}`, lim)
	if err != nil {
		t.Fatal(err)
	}
	b := NewBudget(context.Background(), lim)
	if out, err := tp.Execute(b, nil, 100); err != nil || out != "xxxxxx" {
		t.Fatalf("first: %q %v", out, err)
	}
	var over *BudgetError
	if _, err := tp.Execute(b, nil, 100); !errors.As(err, &over) || over.Limit != "steps" {
		t.Fatalf("second: %v", err)
	}
	if out, err := tp.Execute(NewBudget(context.Background(), lim), nil, 100); err != nil || out != "xxxxxx" {
		t.Fatalf("a new budget: %q %v", out, err)
	}
}

// TestContext: a render stops when its caller's context ends.
func TestContext(t *testing.T) {
	tp, err := Parse("t", `{{range 10000}}{{range 10000}}{{end}}{{end}}`, Limits{MaxSteps: 1 << 40})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	if _, err := tp.Execute(NewBudget(ctx, tp.Limits()), nil, 100); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("a render past its deadline: %v", err)
	}
	ctx, cancel = context.WithCancel(context.Background())
	cancel()
	if _, err := tp.Execute(NewBudget(ctx, tp.Limits()), nil, 100); !errors.Is(err, context.Canceled) {
		t.Fatalf("a render of a canceled caller: %v", err)
	}
}

// TestTimeBudget: work a step does that neither count measures — here 200
// comparisons of two 1 MiB strings that differ only at their end, per
// iteration, 100 s of work in all — stops at the time budget.
func TestTimeBudget(t *testing.T) {
	lim := Limits{MaxSteps: 10_000, MaxBytes: 1 << 20, MaxDuration: 50 * time.Millisecond}
	tp, err := Parse("t", `{{range 10000}}`+strings.Repeat(`{{if lt $.a $.b}}{{end}}`, 200)+`{{end}}`, lim)
	if err != nil {
		t.Fatal(err)
	}
	a := strings.Repeat("x", 1<<20)
	data := map[string]string{"a": a + "a", "b": a + "b"}
	var over *BudgetError
	if _, err := tp.Execute(NewBudget(context.Background(), lim), data, 100); !errors.As(err, &over) || over.Limit != "time" ||
		!strings.Contains(err.Error(), "templates.max_duration") {
		t.Fatalf("%v, want the time budget", err)
	}
}

// TestConcurrentRenders: renders of one Template at once each have their
// own budget (run with -race).
func TestConcurrentRenders(t *testing.T) {
	lim := Limits{MaxSteps: 100}
	tp, err := Parse("t", `{{range .}}{{print .}}{{end}}`, lim)
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Go(func() {
			for range 50 {
				n := 10 + i*20 // under and over the budget, interleaved
				_, err := tp.Execute(NewBudget(context.Background(), lim), make([]int, n), 10000)
				if (2*n > 100) != (err != nil) {
					t.Errorf("%d items: %v", n, err)
				}
			}
		})
	}
	wg.Wait()
}

// BenchmarkExecute is the cost of a render with its budget: a rule's
// title on the event intake's hot path.
func BenchmarkExecute(b *testing.B) {
	tp, err := Parse("t", `{{.name}} is {{printf "%.0f" 15.2}}% off`, Limits{})
	if err != nil {
		b.Fatal(err)
	}
	data := map[string]string{"name": "Kettle"}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := tp.Execute(NewBudget(context.Background(), tp.Limits()), data, 1000); err != nil {
			b.Fatal(err)
		}
	}
}
