package browsertest

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

// The two widths every view is rendered at: a phone held upright (390 CSS
// pixels, the width of the common current phones, at their 3× density and
// with touch, as Chrome's device mode emulates one), and a laptop.
const (
	NarrowWidth  = 390
	narrowHeight = 844
	WideWidth    = 1280
	wideHeight   = 800
)

// Narrow emulates the phone: 390 px wide, mobile (the page's viewport meta
// decides its layout width, as on a phone), touch.
func Narrow() chromedp.Action[chromedp.Void] {
	return chromedp.EmulateViewport(NarrowWidth, narrowHeight, chromedp.EmulateScale(3), chromedp.EmulateMobile, chromedp.EmulateTouch)
}

// Wide emulates the laptop screen, the size pages are opened at (no
// touch, density 1).
func Wide() chromedp.Action[chromedp.Void] {
	return chromedp.EmulateViewport(WideWidth, wideHeight)
}

// sidewaysJS measures, at the current viewport, the page's width against
// the window's, and whether the page declares a phone-width layout: one
// without a width=device-width viewport meta lays out 980 px wide on a
// phone and shows everything tiny. (A phone also widens its layout
// viewport to a page wider than the screen, so both widths count.)
// wide names the last elements that reach past the window outside a
// scrolling box (or positioned absolutely, which a box whose position is
// static does not clip), for the failure message.
const sidewaysJS = `({
	scroll: document.scrollingElement.scrollWidth, inner: window.innerWidth,
	meta: /width\s*=\s*device-width/.test(document.querySelector('meta[name="viewport"]')?.content || ""),
	wide: [...document.querySelectorAll('body *')]
		.filter(e => e.getBoundingClientRect().right > window.innerWidth + 1 &&
			(!e.parentElement.closest('.scroll') || getComputedStyle(e).position === 'absolute'))
		.map(e => e.tagName.toLowerCase() + (e.id ? '#' + e.id : '') + (typeof e.className === 'string' && e.className ? '.' + e.className : ''))
		.slice(-3)
})`

type widths struct {
	Scroll int      `json:"scroll"`
	Inner  int      `json:"inner"`
	Meta   bool     `json:"meta"`
	Wide   []string `json:"wide"`
}

// NarrowProblem renders the page at 390 px and says what is wrong with it
// there ("" when nothing is): no phone-width layout, or a page wider than
// the screen, which a phone user would have to scroll sideways.
func (p *Page) NarrowProblem(t testing.TB) string {
	t.Helper()
	p.Do(t, "emulate a 390 px phone", Narrow())
	defer p.Do(t, "back to the laptop size", Wide())
	w := Eval[widths](t, p, sidewaysJS)
	switch {
	case !w.Meta:
		return fmt.Sprintf("at %d px the page lays out %d px wide: it needs <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">", NarrowWidth, w.Inner)
	case max(w.Scroll, w.Inner) > NarrowWidth:
		return fmt.Sprintf("at %d px the page is %d px wide and scrolls sideways (reaching past the window: %s)", NarrowWidth,
			max(w.Scroll, w.Inner), strings.Join(w.Wide, ", "))
	}
	return ""
}

// Screenshot renders the page at 390 px and at 1280 px, writes both as
// full-page PNGs to the artifacts folder (NAME-390.png, NAME-1280.png), and
// fails the test when the page scrolls sideways at 390 px. It returns the
// wide image's path.
func (p *Page) Screenshot(t testing.TB, name string) string {
	t.Helper()
	if problem := p.NarrowProblem(t); problem != "" {
		t.Errorf("%s: %s", name, problem)
	}
	if err := os.MkdirAll(p.artifacts, 0o755); err != nil {
		t.Fatal(err)
	}
	var wide string
	for _, size := range []struct {
		width int
		view  chromedp.Action[chromedp.Void]
	}{{NarrowWidth, Narrow()}, {WideWidth, Wide()}} {
		p.Do(t, "resize for the screenshot", size.view)
		img := p.capture(t)
		path := filepath.Join(p.artifacts, fmt.Sprintf("%s-%d.png", name, size.width))
		if err := os.WriteFile(path, img, 0o644); err != nil {
			t.Fatal(err)
		}
		wide = path
	}
	t.Logf("screenshots of %s in %s", name, p.artifacts)
	return wide
}

// capture takes a full-page PNG of the page at its current size.
func (p *Page) capture(t testing.TB) []byte {
	t.Helper()
	ctx, cancel := context.WithTimeout(p.ctx, ActionTimeout)
	defer cancel()
	img, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	if err != nil {
		t.Fatalf("screenshot: %v", err)
	}
	return img
}
