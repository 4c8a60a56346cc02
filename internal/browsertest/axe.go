package browsertest

import (
	_ "embed"
	"fmt"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

// axeSource is axe-core's browser bundle, vendored for the tests (its
// version, checksum and licence in axe/README.md): the tests run it in the
// page without Node or a network.
//
//go:embed axe/axe.min.js
var axeSource string

// Violation is one axe-core rule a page fails, with the elements that fail
// it.
type Violation struct {
	ID      string   `json:"id"`
	Impact  string   `json:"impact"`
	Help    string   `json:"help"`
	Targets []string `json:"targets"`
}

func (v Violation) String() string {
	return fmt.Sprintf("%s (%s): %s — %s", v.ID, v.Impact, v.Help, strings.Join(v.Targets, ", "))
}

// axeRun loads axe-core into the page once and runs it over the whole
// document with its default rules (WCAG 2.x A and AA and best practices),
// returning the violations, each with the CSS selectors of its elements.
const axeRun = `(async () => {
	const r = await axe.run(document, {resultTypes: ["violations"]});
	return r.violations.map(v => ({
		id: v.id, impact: v.impact || "", help: v.help,
		targets: v.nodes.map(n => n.target.join(" ")),
	}));
})()`

// AxeViolations runs axe-core over the page as it is now and returns every
// violation, whatever its impact.
func (p *Page) AxeViolations(t testing.TB) []Violation {
	t.Helper()
	if !Eval[bool](t, p, `typeof window.axe === "object"`) {
		if _, err := eval[chromedp.Void](p, axeSource); err != nil {
			t.Fatalf("load axe-core into the page: %v", err)
		}
	}
	return Eval[[]Violation](t, p, axeRun)
}

// Axe fails the test on every serious or critical axe-core violation of
// the page as it is now, naming the rule, its impact and the elements;
// moderate and minor ones are logged.
func (p *Page) Axe(t testing.TB) {
	t.Helper()
	for _, v := range p.AxeViolations(t) {
		if Blocking(v) {
			t.Errorf("axe: %s", v)
		} else {
			t.Logf("axe (not failing): %s", v)
		}
	}
}

// Blocking reports whether a violation fails the test: serious or
// critical impact.
func Blocking(v Violation) bool { return v.Impact == "serious" || v.Impact == "critical" }
