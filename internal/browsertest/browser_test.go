package browsertest

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// goodPage is what every console view is built to be: a skip link first,
// labelled fields, visible focus, a table that scrolls in its own box.
const goodPage = `<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Good page</title>
<style>
  body { font: 16px sans-serif; margin: 0; }
  .skip { position: absolute; left: -10000px; }
  .skip:focus { left: 0; }
  .scroll { overflow-x: auto; }
  table { min-width: 700px; }
</style></head>
<body>
<a class="skip" href="#main">Skip to the content</a>
<header><nav aria-label="Console"><a href="/a">Overview</a> <a href="/b">Dead letters</a></nav></header>
<main id="main">
  <h1>Good page</h1>
  <form id="f"><label for="q">User</label> <input id="q" name="q">
    <label for="since">Since</label> <input id="since" name="since" type="datetime-local">
    <fieldset><legend>Channel</legend>
      <label><input type="radio" name="ch" value="push" checked> push</label>
      <label><input type="radio" name="ch" value="sms"> sms</label>
    </fieldset>
    <button type="submit">Find</button></form>
  <div class="scroll" tabindex="0" role="region" aria-label="Deliveries"><table><caption>Deliveries</caption>
    <tr><th scope="col">State</th><th scope="col">Count</th></tr><tr><td>pending</td><td>3</td></tr></table></div>
  <p id="late"></p>
</main>
<script>setTimeout(() => { document.getElementById("late").textContent = "ready"; }, 50);</script>
</body></html>`

// pages serves the good page and each deliberately broken one by path.
func pages(t *testing.T) string {
	t.Helper()
	broken := map[string]string{
		// An image without a text alternative and a button with no name:
		// axe rates both critical.
		"/axe": strings.Replace(goodPage, `</main>`, `<img src="data:image/gif;base64,R0lGODlhAQABAAAAACw=" width="10" height="10"><button type="button"></button></main>`, 1),
		// No skip link, and a button whose focus is not drawn.
		"/focus": strings.Replace(strings.Replace(goodPage, `<a class="skip" href="#main">Skip to the content</a>`, "", 1),
			`<button type="submit">`, `<button type="submit" style="outline: none">`, 1),
		// A field that swallows Tab.
		"/trap": strings.Replace(goodPage, `<input id="q" name="q">`,
			`<input id="q" name="q" onkeydown="if (event.key === 'Tab') event.preventDefault()">`, 1),
		// A block wider than a phone.
		"/wide": strings.Replace(goodPage, `</main>`, `<p style="width: 600px">wide</p></main>`, 1),
		// No viewport meta: a phone lays the page out 980 px wide.
		"/noviewport": strings.Replace(goodPage, `<meta name="viewport" content="width=device-width, initial-scale=1">`, "", 1),
		"/throws":     strings.Replace(goodPage, `</main>`, `<script>null.boom();</script></main>`, 1),
	}
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasPrefix(r.URL.Path, "/hop/") {
			// A chain of documents each replacing itself with the next
			// while the test polls, the last one carrying #arrived.
			n, _ := strconv.Atoi(strings.TrimPrefix(r.URL.Path, "/hop/"))
			next := `<p id="arrived">arrived</p>`
			if n > 0 {
				next = fmt.Sprintf(`<script>setTimeout(() => location.replace("/hop/%d"), 30);</script>`, n-1)
			}
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			fmt.Fprintf(w, `<!doctype html><html lang="en"><head><title>hop %d</title></head><body>%s</body></html>`, n, next)
			return
		}
		body, ok := broken[r.URL.Path]
		if !ok {
			body = goodPage
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Write([]byte(body))
	}))
	t.Cleanup(ts.Close)
	return ts.URL
}

func TestGoodPagePasses(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("HERALD_TEST_ARTIFACTS", dir)
	b := Start(t)
	p := b.Open(t, pages(t)+"/good")
	p.WaitFor(t, "the late paragraph", `document.getElementById("late").textContent === "ready"`, 5*time.Second)
	p.Axe(t)
	p.TabThrough(t)
	wide := p.Screenshot(t, "good")
	for _, name := range []string{"good-390.png", "good-1280.png"} {
		path := filepath.Join(dir, t.Name(), name)
		img, err := os.ReadFile(path)
		if err != nil || !strings.HasPrefix(string(img), "\x89PNG") {
			t.Errorf("%s: not a PNG (%v)", path, err)
		}
	}
	if filepath.Base(wide) != "good-1280.png" {
		t.Errorf("Screenshot returned %s", wide)
	}
	// Back at the laptop size after the phone's.
	if w := Eval[int](t, p, "window.innerWidth"); w != WideWidth {
		t.Errorf("width after the screenshots: %d", w)
	}
}

func TestAxeReportsSeriousFindings(t *testing.T) {
	p := Start(t).Open(t, pages(t)+"/axe")
	vs := p.AxeViolations(t)
	var ids []string
	for _, v := range vs {
		if Blocking(v) {
			ids = append(ids, v.ID)
		}
		if len(v.Targets) == 0 || v.Impact == "" {
			t.Errorf("violation without its elements or impact: %+v", v)
		}
	}
	for _, want := range []string{"image-alt", "button-name"} {
		if !slices.Contains(ids, want) {
			t.Errorf("axe did not report %s as serious or critical; it reported %v", want, vs)
		}
	}
	if s := vs[0].String(); !strings.Contains(s, vs[0].ID) || !strings.Contains(s, vs[0].Targets[0]) {
		t.Errorf("a violation reads %q", s)
	}
}

func TestTabThroughFindsKeyboardProblems(t *testing.T) {
	base := pages(t)
	b := Start(t)
	for _, tc := range []struct {
		path string
		want []string
	}{
		{"/focus", []string{"the first Tab stop is a \"Overview\"", "button \"Find\" has focus but shows no focus indicator"}},
		{"/trap", []string{"focus came back to input#q", "keyboard trap"}},
	} {
		problems := strings.Join(b.Open(t, base+tc.path).TabProblems(t), "\n")
		for _, want := range tc.want {
			if !strings.Contains(problems, want) {
				t.Errorf("%s: the problems do not say %q:\n%s", tc.path, want, problems)
			}
		}
	}
	// The good page: every stop, in order, once, each radio group once,
	// a date-and-time field's parts as one stop.
	if problems := b.Open(t, base+"/good").TabProblems(t); len(problems) > 0 {
		t.Errorf("the good page: %v", problems)
	}
}

func TestNarrowFindsSidewaysScroll(t *testing.T) {
	base := pages(t)
	b := Start(t)
	for path, want := range map[string]string{
		"/wide":       "scrolls sideways",
		"/noviewport": "viewport",
		"/good":       "",
	} {
		got := b.Open(t, base+path).NarrowProblem(t)
		if want == "" && got != "" || !strings.Contains(got, want) {
			t.Errorf("%s: %q, want one saying %q", path, got, want)
		}
	}
}

func TestPageExceptionsAreKept(t *testing.T) {
	p := Start(t).Open(t, pages(t)+"/throws")
	deadline := time.Now().Add(5 * time.Second)
	for {
		p.mu.Lock()
		got := slices.Clone(p.exceptions)
		// Cleared, so this test does not fail for the exception it wants.
		p.exceptions = nil
		p.mu.Unlock()
		if len(got) > 0 {
			if !strings.Contains(got[0], "null") {
				t.Errorf("exception: %q", got[0])
			}
			return
		}
		if time.Now().After(deadline) {
			t.Fatal("the page's exception was not seen")
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// A wait that spans documents replacing each other (a redirect, a form's
// submit) goes on in the new document: the old one's JavaScript context
// going away is not the test's failure.
func TestWaitForSpansNavigations(t *testing.T) {
	t.Setenv("HERALD_TEST_ARTIFACTS", t.TempDir())
	b := Start(t)
	base := pages(t)
	p := b.NewPage(t)
	for range 3 {
		p.Navigate(t, base+"/hop/20")
		p.WaitFor(t, "the last of 20 documents", `document.querySelector("#arrived")`, 10*time.Second)
	}
}
