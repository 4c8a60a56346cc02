package e2e

import (
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/heraldhq/herald/internal/browsertest"
)

// postedForm is a console form's target and fields (without its CSRF
// token), read from a page to be posted from another.
type postedForm struct {
	Action string            `json:"action"`
	Fields map[string]string `json:"fields"`
}

// postAnswer is the status of a console POST and the code of the error
// page it answered, if any (<p id="error" data-code="…">).
type postAnswer struct {
	Status int    `json:"status"`
	Code   string `json:"code"`
}

// readForm reads the form matching sel on the page.
func readForm(t *testing.T, p *browsertest.Page, sel string) postedForm {
	t.Helper()
	return browsertest.Eval[postedForm](t, p, fmt.Sprintf(`(() => {
		const f = document.querySelector(%q);
		if (!f) return {action: "", fields: {}};
		const fields = {};
		for (const [k, v] of new FormData(f)) if (k !== "csrf") fields[k] = v;
		return {action: f.action, fields};
	})()`, sel))
}

// postForm posts the form's fields with fetch from the page, as the page's
// own script could — with the session's cookie, and with the page's CSRF
// token when withCSRF.
func postForm(t *testing.T, p *browsertest.Page, f postedForm, withCSRF bool) postAnswer {
	t.Helper()
	fields, err := json.Marshal(f.Fields)
	if err != nil {
		t.Fatal(err)
	}
	return browsertest.Eval[postAnswer](t, p, fmt.Sprintf(`(async () => {
		const body = new URLSearchParams(%s);
		if (%t) body.set("csrf", document.querySelector('meta[name="csrf-token"]').content);
		const r = await fetch(%q, {method: "POST", body, credentials: "same-origin", redirect: "manual"});
		const doc = new DOMParser().parseFromString(await r.text(), "text/html");
		return {status: r.status, code: doc.querySelector("#error")?.dataset.code || ""};
	})()`, fields, withCSRF, f.Action))
}

// csrfRefused posts the dead letters' bulk replay (as a dry run, so
// nothing would change even if it went through) without its CSRF token.
func csrfRefused(t *testing.T, p *browsertest.Page, deadURL string) {
	t.Helper()
	t.Run("csrf", func(t *testing.T) {
		p.Navigate(t, deadURL)
		f := readForm(t, p, "#bulk-replay")
		if f.Action == "" {
			t.Fatal("no #bulk-replay form on the dead letters")
		}
		f.Fields["dry_run"] = "1"
		if got := postForm(t, p, f, false); got.Status != 403 || got.Code != "csrf_invalid" {
			t.Errorf("a POST without the CSRF token: %d %q, want 403 csrf_invalid", got.Status, got.Code)
		}
	})
}

// editPreference changes quinn's daily cap on the user page: a bad value
// is refused with the API's message beside the field, a good one is saved
// and the API answers it.
func editPreference(t *testing.T, s *consoleServer, p *browsertest.Page) {
	t.Helper()
	const field = `#preferences-form [name="daily_cap"]`
	p.WaitFor(t, "the preferences form's daily cap", `document.querySelector('`+field+`')`, 10*time.Second)
	p.Do(t, "type a bad cap", chromedp.SetValue(chromedp.CSS(field), "-1"))
	p.Load(t, "save the bad cap", submitOf("#preferences-form"))
	p.WaitFor(t, "the API's message beside the field", `document.querySelector("#error-daily_cap.field-error")?.textContent.trim()`, 10*time.Second)
	p.Do(t, "type a good cap", chromedp.SetValue(chromedp.CSS(field), "7"))
	p.Load(t, "save the good cap", submitOf("#preferences-form"))
	if browsertest.Eval[bool](t, p, `!!document.querySelector("#preferences-form .field-error")`) {
		t.Errorf("a good cap was refused: %s", browsertest.Eval[string](t, p, `document.querySelector("#preferences-form .field-error").textContent`))
	}
	prefs, err := s.api.GetPreferences(t.Context(), "quinn")
	if err != nil {
		t.Fatal(err)
	}
	if prefs.DailyCap != 7 {
		t.Errorf("after saving the form the API's daily cap is %d, want 7", prefs.DailyCap)
	}
	if prefs.QuietHours == nil {
		t.Error("saving the form lost the user's quiet hours")
	}
}

// submitOf clicks the form's (first) submit button.
func submitOf(form string) chromedp.Action[chromedp.Void] {
	return chromedp.Click(chromedp.CSS(form + ` [type="submit"], ` + form + ` button:not([type])`))
}
