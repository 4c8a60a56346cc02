package console_test

import (
	"context"
	"net/url"
	"strings"
	"testing"

	"github.com/heraldhq/herald"
	"github.com/heraldhq/herald/heraldtype"
)

// TestTypeTemplatesPage (issue 37 item 5): the type's page links to its
// templates, which show every locale rendered with the sample data — an
// RTL locale marked — and a user's render when one is named; a test-send
// lists a skipped channel with why, else opens the notification it made,
// whose timeline says it is a test; a type without templates says so.
func TestTypeTemplatesPage(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOptions{dev: true})
	ctx := context.Background()
	e.get("/console/types/order/templates").expect(t, 200).has(t, `id="templates-none"`)
	if _, err := e.client.PutTemplates(ctx, "order", heraldtype.MessageTemplates{DefaultLocale: "en",
		SampleData: map[string]string{"name": "<Mina>"},
		Locales: map[string]heraldtype.ChannelTemplates{
			"en": {InApp: &heraldtype.InAppTemplate{Title: "Hi {{.name}}", Body: "b"}, SMS: &heraldtype.SMSTemplate{Text: "Hi {{.name}}"}},
			"ko": {InApp: &heraldtype.InAppTemplate{Title: "{{.name}}님", Body: "b"}, SMS: &heraldtype.SMSTemplate{Text: "{{.name}}님 안녕하세요"}},
			"ar": {InApp: &heraldtype.InAppTemplate{Title: "مرحبا {{.name}}", Body: "b"}},
		}}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.client.PutUser(ctx, "kim", herald.UserInput{Timezone: "Asia/Seoul", Locale: "ko-KR"}); err != nil {
		t.Fatal(err)
	}
	e.get("/console/types/order").expect(t, 200).has(t, `href="/console/types/order/templates"`)
	p := e.get("/console/types/order/templates?user=kim").expect(t, 200)
	wellFormed(t, p.body)
	p.has(t, `data-version="1"`, `id="locale-ar-h" lang="ar"`, `<tbody lang="ar" dir="auto">`, `&lt;Mina&gt;님 안녕하세요`,
		`1 segment(s), UCS-2`, `id="templates-user"`, `picks <code>ko</code>`, `id="test-send-form"`)
	// kim has no device yet: the push is skipped, and the page says so
	// before linking the notification.
	skipped := e.post("/console/types/order/test-send", url.Values{"csrf": {p.csrf(t)}, "user_id": {"kim"}}).expect(t, 200)
	wellFormed(t, skipped.body)
	skipped.has(t, `id="test-send-result"`, `data-channel="push" data-status="skipped"`, `no device that takes push notifications (no_device)`,
		`href="/console/notifications/`)
	if _, err := e.client.RegisterDevice(ctx, "kim", herald.DeviceInput{DeviceID: "d1", Token: "tok-kim", Platform: "android"}); err != nil {
		t.Fatal(err)
	}
	r := e.post("/console/types/order/test-send", url.Values{"csrf": {p.csrf(t)}, "user_id": {"kim"}}).expect(t, 303)
	loc := r.header.Get("Location")
	if !strings.HasPrefix(loc, "/console/notifications/") {
		t.Fatalf("after a test-send: %q", loc)
	}
	// The notification's timeline names the version it was rendered
	// from, which opens that version.
	n := e.get(loc).expect(t, 200)
	n.has(t, `id="template-version" href="/console/types/order/templates?version=1"`, `Test-send of the type&#39;s templates`)
	e.get("/console/types/order/templates?version=1").expect(t, 200).has(t, `data-version="1"`, `id="templates-versions"`, `<strong aria-current="page">1</strong>`)
	e.get("/console/types/order/templates?version=9").expect(t, 404)
	e.get("/console/types/order/templates?version=x").expect(t, 400)
	bad := e.post("/console/types/order/test-send", url.Values{"csrf": {p.csrf(t)}, "user_id": {""}}).expect(t, 400)
	wellFormed(t, bad.body)
	bad.has(t, `id="error-user_id"`)
}
