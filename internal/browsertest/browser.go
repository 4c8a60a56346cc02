// Package browsertest drives a real headless Chromium for Herald's browser
// tests (issue 34 item 4): it starts Debian's chromium through chromedp,
// opens pages each in a browser context of its own (its own cookies), and
// checks what a person using the page would meet — axe-core's serious and
// critical accessibility findings, a keyboard walk with the Tab key, the
// page at 390 px wide with no sideways scroll — keeping screenshots of each
// view as test artifacts.
//
// Without a chromium on the machine the tests that need one are skipped
// with a message, except with CI=true, where they fail (.ci/run installs
// Debian's chromium when it is missing).
package browsertest

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
)

// ActionTimeout bounds one call of Page.Do, Page.Eval or Page.WaitFor, so
// a page that never shows what a test waits for fails the test with the
// step's name instead of hanging it until go test's own timeout.
const ActionTimeout = 30 * time.Second

// Browser is one headless Chromium process, shut down when the test that
// started it ends.
type Browser struct {
	ctx       context.Context // the browser's chromedp context, run once
	artifacts string
}

// ExecPath finds Debian's chromium (or a chromium-browser of another
// distribution) on PATH; HERALD_TEST_CHROMIUM names another binary.
func ExecPath() (string, bool) {
	if p := os.Getenv("HERALD_TEST_CHROMIUM"); p != "" {
		return p, true
	}
	for _, name := range []string{"chromium", "chromium-browser"} {
		if p, err := exec.LookPath(name); err == nil {
			return p, true
		}
	}
	return "", false
}

// Flags are the command-line switches Chromium runs with in these tests.
// The four named by the test plan — headless, no sandbox (the tests run as
// root in CI containers, where the sandbox cannot start), no GPU, no
// background networking (the machines have no internet, and the browser
// must not try to reach it) — plus what every automated run needs: no
// first-run or default-browser prompts and a debugging port chromedp picks.
// chromedp's own default list is not used: it carries twenty other
// switches this harness does not need.
func Flags() []chromedp.ExecAllocatorOption {
	return []chromedp.ExecAllocatorOption{
		chromedp.Flag("headless", true),
		chromedp.Flag("no-sandbox", true),
		chromedp.Flag("disable-gpu", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.NoFirstRun,
		chromedp.NoDefaultBrowserCheck,
	}
}

// Start starts Chromium for the test, or skips the test when there is none
// (fails it with CI=true). The browser stops when the test ends.
func Start(t testing.TB) *Browser {
	t.Helper()
	path, ok := ExecPath()
	if !ok {
		if os.Getenv("CI") == "true" {
			t.Fatal("chromium is not installed, and CI=true makes the browser tests fail without it (apt-get install chromium)")
		}
		t.Skip("chromium is not installed: the browser tests are skipped (apt-get install chromium)")
	}
	opts := append(Flags(), chromedp.ExecPath(path), chromedp.UserDataDir(t.TempDir()))
	allocCtx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancel := chromedp.NewContext(allocCtx)
	// The first Run starts the process; it must not carry a timeout, which
	// would stop the whole browser when it fires.
	if err := chromedp.Do(ctx); err != nil {
		cancel()
		cancelAlloc()
		t.Fatalf("start %s: %v", path, err)
	}
	t.Cleanup(func() {
		cancel()
		cancelAlloc()
	})
	return &Browser{ctx: ctx, artifacts: artifactsDir(t)}
}

// Page is one tab in a browser context of its own: pages do not share
// cookies, so an admin's and a read-only operator's sessions can be open
// at once.
type Page struct {
	ctx       context.Context
	artifacts string

	mu         sync.Mutex
	exceptions []string
}

// NewPage opens a blank tab in a fresh browser context. JavaScript
// exceptions the page throws fail the test when it ends: a console whose
// script breaks would otherwise look fine until its live refresh is
// needed.
func (b *Browser) NewPage(t testing.TB) *Page {
	t.Helper()
	p := &Page{artifacts: b.artifacts}
	ctx, cancel := chromedp.NewContext(b.ctx, chromedp.WithNewBrowserContext(),
		chromedp.WithListener(p.listen))
	if err := chromedp.Do(ctx, Wide(), focused()); err != nil {
		cancel()
		t.Fatalf("open a tab: %v", err)
	}
	p.ctx = ctx
	t.Cleanup(func() {
		p.mu.Lock()
		defer p.mu.Unlock()
		for _, e := range p.exceptions {
			t.Errorf("the page threw: %s", e)
		}
		cancel()
	})
	return p
}

// focused makes the tab behave as the window a person is looking at
// (focused, visible) although other tabs are open: focus styles, and the
// console's live refresh, which pauses in a hidden tab, depend on it.
func focused() chromedp.Action[chromedp.Void] {
	return chromedp.Func(func(ctx context.Context, t *chromedp.Target) error {
		_, err := cdp.Call(ctx, t, emulation.SetFocusEmulationEnabled, emulation.SetFocusEmulationEnabledParams{Enabled: true})
		return err
	})
}

// Open opens a tab in a fresh browser context at url.
func (b *Browser) Open(t testing.TB, url string) *Page {
	t.Helper()
	p := b.NewPage(t)
	p.Navigate(t, url)
	return p
}

// Navigate loads url, waits for the page to load and returns the HTTP
// status of the document (after redirects).
func (p *Page) Navigate(t testing.TB, url string) int64 {
	t.Helper()
	return p.Load(t, "navigate to "+url, chromedp.Navigate(url))
}

// Load runs an action that loads a new document — a click on a link or a
// form's submit button — waits for it to load, and returns its HTTP
// status; it fails the test, naming what, when nothing loads.
func (p *Page) Load(t testing.TB, what string, a chromedp.Action[chromedp.Void]) int64 {
	t.Helper()
	ctx, cancel := context.WithTimeout(p.ctx, ActionTimeout)
	defer cancel()
	resp, err := chromedp.RunResponse(ctx, a)
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	if resp == nil {
		t.Fatalf("%s: no document loaded", what)
	}
	return resp.Status
}

// Do runs the actions within ActionTimeout and fails the test, naming
// what, on an error.
func (p *Page) Do(t testing.TB, what string, actions ...chromedp.Action[chromedp.Void]) {
	t.Helper()
	if err := p.do(actions...); err != nil {
		t.Fatalf("%s: %v", what, err)
	}
}

func (p *Page) do(actions ...chromedp.Action[chromedp.Void]) error {
	ctx, cancel := context.WithTimeout(p.ctx, ActionTimeout)
	defer cancel()
	return chromedp.Do(ctx, actions...)
}

// Context is the tab's chromedp context, for actions this package does not
// wrap; derive a timeout from it for each call.
func (p *Page) Context() context.Context { return p.ctx }

// Eval evaluates a JavaScript expression in the page and decodes its
// JSON value into T (a promise is awaited).
func Eval[T any](t testing.TB, p *Page, expr string) T {
	t.Helper()
	v, err := eval[T](p, expr)
	if err != nil {
		t.Fatalf("evaluate %s: %v", short(expr), err)
	}
	return v
}

func eval[T any](p *Page, expr string) (T, error) {
	ctx, cancel := context.WithTimeout(p.ctx, ActionTimeout)
	defer cancel()
	return chromedp.Run(ctx, chromedp.Evaluate[T](expr, chromedp.EvalAwaitPromise))
}

// WaitFor waits until the JavaScript expression is truthy, polling every
// 100 ms for at most within, and fails the test naming what it waited for.
//
// A document that is replaced while the poll runs (a redirect, a form's
// submit, a reload) takes the poll's JavaScript context with it; the wait
// then goes on in the new document instead of failing the test.
func (p *Page) WaitFor(t testing.TB, what, expr string, within time.Duration) {
	t.Helper()
	deadline := time.Now().Add(within)
	for {
		left := time.Until(deadline)
		if left <= 0 {
			left = time.Millisecond
		}
		ctx, cancel := context.WithTimeout(p.ctx, left+time.Second)
		_, err := chromedp.Run(ctx, chromedp.Poll[chromedp.Void](expr,
			chromedp.WithPollingInterval(100*time.Millisecond), chromedp.WithPollingTimeout(left)))
		cancel()
		if err == nil {
			return
		}
		if !contextReplaced(err) || time.Now().After(deadline) {
			t.Fatalf("waiting %v for %s (%s): %v", within, what, short(expr), err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// contextReplaced reports whether err says the JavaScript context an
// evaluation ran in went away with its document (Chromium's wording).
func contextReplaced(err error) bool {
	msg := err.Error()
	return strings.Contains(msg, "Cannot find context with specified id") ||
		strings.Contains(msg, "Execution context was destroyed") ||
		strings.Contains(msg, "Inspected target navigated or closed")
}

// URL is the page's current address.
func (p *Page) URL(t testing.TB) string {
	t.Helper()
	return Eval[string](t, p, "location.href")
}

// listen keeps the text of every exception the page throws.
func (p *Page) listen(ev any) {
	if e, ok := ev.(*runtime.EventExceptionThrown); ok && e.ExceptionDetails != nil {
		text := e.ExceptionDetails.Text
		if e.ExceptionDetails.Exception != nil && e.ExceptionDetails.Exception.Description != "" {
			text = e.ExceptionDetails.Exception.Description
		}
		p.mu.Lock()
		p.exceptions = append(p.exceptions, text+" at "+e.ExceptionDetails.URL)
		p.mu.Unlock()
	}
}

// artifactsDir is where the test's screenshots go: HERALD_TEST_ARTIFACTS,
// else e2e/artifacts at the module's root (ignored by git), one folder per
// test.
func artifactsDir(t testing.TB) string {
	base := os.Getenv("HERALD_TEST_ARTIFACTS")
	if base == "" {
		base = filepath.Join(moduleRoot(), "e2e", "artifacts")
	}
	return filepath.Join(base, strings.NewReplacer("/", "_", " ", "_").Replace(t.Name()))
}

// moduleRoot is the nearest folder above the working directory that holds
// go.mod (a test runs in its package's folder), or the working directory.
func moduleRoot() string {
	wd, err := os.Getwd()
	if err != nil {
		return "."
	}
	for dir := wd; ; dir = filepath.Dir(dir) {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		if filepath.Dir(dir) == dir {
			return wd
		}
	}
}

// short cuts a script to its first line for an error message.
func short(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i] + " …"
	}
	if len(s) > 120 {
		s = s[:120] + " …"
	}
	return s
}
