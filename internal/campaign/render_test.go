package campaign

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/heraldhq/herald/heraldtype"
	"github.com/heraldhq/herald/internal/tmpl"
)

func TestRender(t *testing.T) {
	c, err := Parse(heraldtype.Campaign{Title: "Hi {{.User.ID}}", Body: `{{printf "%.2f" (index .Fields "price")}} {{len .Items}}`,
		Data: map[string]string{"first": "{{(index .Items 0).id}}"}}, tmpl.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	r, err := c.Render(context.Background(), View{User: ViewUser{ID: "u1"}, Items: []any{map[string]any{"id": "p1"}}, Fields: map[string]any{"price": 9.5}})
	if err != nil || r.Title != "Hi u1" || r.Body != "9.50 1" || r.Data["first"] != "p1" {
		t.Fatalf("render = %+v, %v", r, err)
	}
	for name, tc := range map[string]struct {
		body, want string
	}{
		"missing field key": {"{{.Fields.name}}", `map has no entry for key "name"`},
		"missing item":      {"{{index .Items 3}}", "out of range"},
		"unknown field":     {"{{.User.Email}}", "can't evaluate field Email"},
		"huge printf width": {`{{printf "%999999999d" 1}}`, "above 99"},
		"huge output":       {`{{range .Items}}{{printf "%99d" 1}}{{printf "%99d" 1}}{{end}}`, "renders more than"},
	} {
		c, err := Parse(heraldtype.Campaign{Body: tc.body}, tmpl.Limits{})
		if err != nil {
			t.Fatalf("%s: parse: %v", name, err)
		}
		items := []any{1}
		if name == "huge output" {
			items = make([]any, 1000)
		}
		if _, err := c.Render(context.Background(), View{Items: items}); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want an error containing %q", name, err, tc.want)
		}
	}
	if _, err := Parse(heraldtype.Campaign{Data: map[string]string{"x": "{{"}}, tmpl.Limits{}); heraldtype.ErrorCode(err) != heraldtype.EINVALID || !strings.Contains(err.Error(), "data.x") {
		t.Fatalf("a data template that does not parse = %v", err)
	}
}

// Issue 31 item 1: a recipient's templates render under one budget and
// the caller's context.
func TestRenderBudget(t *testing.T) {
	lim := tmpl.Limits{MaxSteps: 100, MaxBytes: 4096}
	if _, err := Parse(heraldtype.Campaign{Body: `{{range 9000000000000000000}}{{end}}`}, lim); heraldtype.ErrorCode(err) != heraldtype.EINVALID ||
		!strings.Contains(err.Error(), "body") {
		t.Fatalf("a range over 9e18: %v", err)
	}
	c, err := Parse(heraldtype.Campaign{Title: `{{range .Items}}{{end}}`, Body: `{{range .Items}}{{end}}`}, lim)
	if err != nil {
		t.Fatal(err)
	}
	v := View{Items: make([]any, 60)}
	if _, ok := tmpl.OverBudget(func() error { _, err := c.Render(context.Background(), v); return err }()); !ok {
		t.Fatal("60 + 60 steps rendered under a budget of 100")
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := c.Render(ctx, View{Items: make([]any, 1)}); !errors.Is(err, context.Canceled) {
		t.Fatalf("a canceled render: %v", err)
	}
}

// TestRenderInTheUsersLocale (issue 37): a campaign's templates render
// through internal/message — number, currency and plural for each
// recipient's locale, dates in their zone.
func TestRenderInTheUsersLocale(t *testing.T) {
	c, err := Parse(heraldtype.Campaign{Title: `{{plural (len .Items) "one" "# pick" "other" "# picks"}}`,
		Body: `{{currency "KRW" (index .Fields "price")}} · {{date "short" "2026-03-08T21:05:00Z"}}`}, tmpl.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		user        ViewUser
		title, body string
	}{
		{ViewUser{ID: "ann"}, "2 picks", "₩ 12,500 · 3/8/26"},
		{ViewUser{ID: "kim", Locale: "ko-KR", Timezone: "Asia/Seoul"}, "2 picks", "₩ 12,500 · 26. 3. 9."},
		{ViewUser{ID: "dan", Locale: "he", Timezone: "Asia/Jerusalem"}, "2 picks", "₩ 12,500 · 8.3.2026"},
	} {
		r, err := c.Render(context.Background(), View{User: tc.user, Items: []any{1, 2}, Fields: map[string]any{"price": 12500}})
		if err != nil || r.Title != tc.title || r.Body != tc.body {
			t.Errorf("%s: %q, %q, %v; want %q, %q", tc.user.ID, r.Title, r.Body, err, tc.title, tc.body)
		}
	}
}
