package tmpl

import (
	"errors"
	"strings"
	"testing"
)

func TestBounds(t *testing.T) {
	tp, err := Parse("t", "{{.a}}-{{.b}}")
	if err != nil {
		t.Fatal(err)
	}
	if out, err := Execute(tp, map[string]string{"a": "1", "b": "2"}, 100); err != nil || out != "1-2" {
		t.Fatalf("render: %q %v", out, err)
	}
	if _, err := Execute(tp, map[string]string{"a": "1"}, 100); err == nil || !strings.Contains(err.Error(), `"b"`) {
		t.Fatalf("a missing key rendered: %v", err)
	}
	var tooLong *ErrTooLong
	if _, err := Execute(tp, map[string]string{"a": strings.Repeat("x", 200), "b": ""}, 100); !errors.As(err, &tooLong) {
		t.Fatalf("over the limit: %v", err)
	}
	for _, text := range []string{`{{printf "%999999999d" 1}}`, `{{printf "%.999999f" 1.0}}`, `{{printf "%*d" 9 1}}`} {
		tp, err := Parse("t", text)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := Execute(tp, nil, 1<<20); err == nil {
			t.Fatalf("%s rendered", text)
		}
	}
	if tp, _ := Parse("t", `{{printf "%5.2f" 3.14159}}`); tp != nil {
		if out, err := Execute(tp, nil, 100); err != nil || out != " 3.14" {
			t.Fatalf("a small width: %q %v", out, err)
		}
	}
}
