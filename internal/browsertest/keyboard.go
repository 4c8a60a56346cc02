package browsertest

import (
	"fmt"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
)

// describeJS names an element for a failure message: its tag, id or name,
// and the start of its text or label.
const describeJS = `const __btDescribe = el => {
	let s = el.tagName.toLowerCase();
	if (el.id) s += "#" + el.id;
	else if (el.name) s += "[name=" + el.name + "]";
	const text = (el.getAttribute("aria-label") || el.innerText || el.value || el.getAttribute("href") || "").trim().replace(/\s+/g, " ");
	if (text) s += " \"" + text.slice(0, 40) + "\"";
	return s;
};
const __btKey = el => {
	if (el.type === "radio" && el.name) return "radio:" + (el.form ? el.form.id || "form" : "") + "/" + el.name;
	const path = [];
	for (let e = el; e && e !== document.body; e = e.parentElement) {
		path.unshift(e.tagName.toLowerCase() + ":" + Array.prototype.indexOf.call(e.parentElement ? e.parentElement.children : [], e));
	}
	return path.join(">");
};`

// tabCollectJS lists every element a keyboard user should reach, in
// document order — links, buttons, form fields, summaries, anything with a
// tabindex ≥ 0 — leaving out what is disabled, hidden, inert or not
// rendered. Each is keyed by its place in the document, not by a mark on
// the element, so a live region that re-renders the same content during
// the walk keeps its keys; a radio group is one stop, as Tab moves between
// groups and the arrow keys within one. It then puts a focus starting
// point (tabindex -1) first in the body and focuses it, so the walk starts
// at the top of the page whatever had focus before.
const tabCollectJS = `(() => {` + describeJS + `
	const sel = 'a[href], area[href], button, input, select, textarea, summary, iframe, [tabindex], [contenteditable=""], [contenteditable="true"]';
	const start = document.createElement("span");
	start.id = "browsertest-start";
	start.tabIndex = -1;
	document.body.prepend(start);
	const stops = [], keys = new Set();
	for (const el of document.querySelectorAll(sel)) {
		if (el.disabled || el.matches('input[type=hidden]') || el.closest('[inert]')) continue;
		const ti = el.getAttribute("tabindex");
		if (ti !== null && Number(ti) < 0) continue;
		if (el.tagName === "SUMMARY" && el.parentElement.querySelector(":scope > summary") !== el) continue;
		if (getComputedStyle(el).visibility === "hidden" || el.getClientRects().length === 0) continue;
		const key = __btKey(el);
		if (keys.has(key)) continue;
		keys.add(key);
		stops.push({key, desc: __btDescribe(el)});
	}
	start.focus();
	window.scrollTo(0, 0);
	return stops;
})()`

// tabProbeJS reports where focus is after a Tab: the element's key ("" on
// the page itself), its name, whether it is a link to an in-page target
// holding the main content (the skip link), whether its focus is drawn —
// an outline or a box shadow, as the focus styles of browsers and of the
// console are — and whether it is a date or time field, whose parts
// (day, month, year, hours…) Tab visits one by one.
const tabProbeJS = `(() => {` + describeJS + `
	const el = document.activeElement;
	if (!el || el === document.body || el === document.documentElement || el.id === "browsertest-start") return {key: "", desc: "the page itself"};
	const cs = getComputedStyle(el);
	const ring = (cs.outlineStyle !== "none" && parseFloat(cs.outlineWidth) > 0) || (cs.boxShadow && cs.boxShadow !== "none");
	let skip = false;
	const href = el.getAttribute("href") || "";
	if (el.tagName === "A" && href.startsWith("#") && href.length > 1) {
		const target = document.getElementById(href.slice(1));
		skip = !!target && (target.tagName === "MAIN" || target.getAttribute("role") === "main" || !!target.querySelector("main"));
	}
	const segmented = el.tagName === "INPUT" && ["date", "datetime-local", "time", "month", "week"].includes(el.type);
	return {key: __btKey(el), desc: __btDescribe(el), ring: !!ring, skip: skip, segmented: segmented};
})()`

// tabCleanupJS takes the starting point out again.
const tabCleanupJS = `(() => { document.getElementById("browsertest-start")?.remove(); return true; })()`

type tabStop struct {
	Key       string `json:"key"`
	Desc      string `json:"desc"`
	Ring      bool   `json:"ring"`
	Skip      bool   `json:"skip"`
	Segmented bool   `json:"segmented"`
}

// maxSegments bounds the Tab presses one date or time field may take (a
// datetime-local has up to six parts: day, month, year, hours, minutes,
// AM/PM).
const maxSegments = 8

// TabThrough presses Tab from the top of the page until focus leaves it or
// comes back to the first stop, and fails the test on what a keyboard user
// would meet: a first stop that is not a skip link to the main content, a
// focused element with no visible focus indicator, focus that comes back
// to an element before the walk is through (a trap), and an interactive
// element Tab never reaches.
func (p *Page) TabThrough(t testing.TB) {
	t.Helper()
	for _, problem := range p.TabProblems(t) {
		t.Errorf("keyboard: %s", problem)
	}
}

// TabProblems walks the page as TabThrough does and returns what it found
// wrong, one sentence each.
func (p *Page) TabProblems(t testing.TB) []string {
	t.Helper()
	stops := Eval[[]tabStop](t, p, tabCollectJS)
	defer Eval[bool](t, p, tabCleanupJS)
	reached := map[string]bool{}
	var problems, order []string
	first, last := "", ""
	segments := 0
	limit := len(stops) + 10
	for press := 0; press < limit; press++ {
		if err := p.do(chromedp.KeyEvent(kb.Tab)); err != nil {
			t.Fatalf("press Tab: %v", err)
		}
		s := Eval[tabStop](t, p, tabProbeJS)
		if s.Key == "" || s.Key == first {
			if press == 0 && len(stops) > 0 {
				problems = append(problems, "Tab does not move focus into the page")
			}
			return append(problems, unreached(stops, reached)...)
		}
		if press == 0 {
			first = s.Key
			if !s.Skip {
				problems = append(problems, fmt.Sprintf("the first Tab stop is %s, not a skip link to the main content", s.Desc))
			}
		}
		if s.Key == last && s.Segmented && segments < maxSegments {
			// The next part of the same date or time field.
			segments++
			limit++
			continue
		}
		segments = 0
		last = s.Key
		if reached[s.Key] {
			return append(problems, fmt.Sprintf("focus came back to %s after %s: a keyboard trap", s.Desc, strings.Join(order, " → ")))
		}
		reached[s.Key] = true
		order = append(order, s.Desc)
		if !s.Ring {
			problems = append(problems, fmt.Sprintf("%s has focus but shows no focus indicator (no outline or box-shadow)", s.Desc))
		}
	}
	return append(problems, fmt.Sprintf("focus never left the page or came back to the first stop after %d presses of Tab (%s): a keyboard trap",
		limit, strings.Join(order, " → ")))
}

func unreached(stops []tabStop, reached map[string]bool) []string {
	var out []string
	for _, s := range stops {
		if !reached[s.Key] {
			out = append(out, fmt.Sprintf("%s is never reached with Tab", s.Desc))
		}
	}
	return out
}
