package console_test

import (
	"context"
	"net/url"
	"testing"

	"github.com/heraldhq/herald"
	"github.com/heraldhq/herald/heraldtype"
)

// viewActions are every state change of the views, as a browser posts
// them.
var viewActions = []string{
	"/console/users/u-1/preferences",
	"/console/types/digest",
	"/console/rules/price-drop",
	"/console/reminders/cart-1",
	"/console/reminders/cart-1/cancel",
	"/console/reminders/cancel",
	"/console/campaigns/weekly",
	"/console/campaigns/weekly/run",
	"/console/webhooks/wh_x/test",
	"/console/webhooks/wh_x/enabled",
	"/console/webhooks/wh_x/rotate",
	"/console/webhooks/wh_x/replay",
}

// actionMarks are what a session that may change things sees and a
// read-only one must not.
var actionMarks = []string{`id="preferences-save"`, `id="type-save"`, `id="rule-save"`, `id="run-campaign"`, `id="campaign-save"`,
	`id="cancel-reminders"`, `class="cancel-reminder"`, `id="reminder-save"`, `id="new-rule"`, `id="new-campaign"`,
	`id="test-endpoint"`, `id="toggle-endpoint"`, `id="rotate-secret"`, `id="replay-all"`, `class="replay"`}

// TestViewsReadOnlySession: a console-scope (read-only) session reads
// every view, sees no action, and is refused every action with 403
// permission_denied (with a valid CSRF token) — as the API refuses the
// scope; without the token, every action is refused csrf_invalid first.
func TestViewsReadOnlySession(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOptions{})
	seedCatalog(t, e)
	res, err := e.client.Enqueue(context.Background(), herald.Request{UserID: "u-1", Type: "digest", Title: "Hi", Channels: []heraldtype.Channel{heraldtype.ChannelPush}})
	if err != nil {
		t.Fatal(err)
	}
	id := res.Notifications[0].ID
	e.signIn("key-console").expect(t, 303)
	var csrf string
	for _, path := range []string{"/console/notifications", "/console/notifications/" + id, "/console/why?user=u-1&type=digest",
		"/console/users", "/console/users/u-1", "/console/types", "/console/types/digest", "/console/rules", "/console/rules/price-drop",
		"/console/reminders?user=u-1", "/console/reminders/cart-1", "/console/campaigns", "/console/campaigns/weekly",
		"/console/engagement", "/console/webhooks", "/console/digests"} {
		p := e.get(path).expect(t, 200)
		wellFormed(t, p.body)
		p.lacks(t, actionMarks...)
		csrf = p.csrf(t)
	}
	e.get("/console/rules/price-drop").has(t, `id="rule-form"`, `readonly`, `id="dry-run-form"`)
	e.get("/console/types/digest").has(t, `<fieldset disabled>`)
	e.get("/console/reminders/cart-1").has(t, `id="reminder-form"`, `readonly`)
	for _, path := range viewActions {
		e.post(path, url.Values{"csrf": {csrf}, "user": {"u-1"}}).expect(t, 403).has(t, `<p id="error" data-code="permission_denied"`)
		e.post(path, url.Values{"user": {"u-1"}}).expect(t, 403).has(t, `<p id="error" data-code="csrf_invalid"`)
	}
	// The dry run reads only (rules:read), as its API route does.
	e.post("/console/rules/price-drop/dry-run", url.Values{"csrf": {csrf}, "event": {`{"name": "PRICE_CHANGE"}`}}).expect(t, 200).has(t, `id="dry-run-result"`)
	e.post("/console/rules/price-drop/dry-run", url.Values{"event": {`{"name": "PRICE_CHANGE"}`}}).expect(t, 403).has(t, `data-code="csrf_invalid"`)

	// Nothing changed.
	if r, err := e.client.GetReminder(context.Background(), "cart-1"); err != nil || r.State != heraldtype.ReminderActive {
		t.Fatalf("cart-1: %+v, %v", r, err)
	}
}

// TestViewsAdminSession: a signed-in admin sees the actions, and a page
// without a session sends the browser to sign in and back.
func TestViewsAdminSession(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOptions{})
	seedCatalog(t, e)
	if r := e.get("/console/users/u-1").expect(t, 303); r.header.Get("Location") != "/console/sign-in?next=%2Fconsole%2Fusers%2Fu-1" {
		t.Fatalf("redirected to %q", r.header.Get("Location"))
	}
	e.signIn("key-admin").expect(t, 303)
	e.get("/console/users/u-1").expect(t, 200).has(t, `id="preferences-save"`, `<table id="devices">`)
	e.get("/console/campaigns/weekly").expect(t, 200).has(t, `id="run-campaign"`)
	e.get("/console/reminders?user=u-1").expect(t, 200).has(t, `id="cancel-reminders"`)
}
