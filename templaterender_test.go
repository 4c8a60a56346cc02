package herald

import (
	"strings"
	"testing"
	"time"

	"github.com/heraldhq/herald/heraldtype"
)

// Issue 37 items 1, 2, 3 and 6 through the pipeline: a trigger without a
// title or a body, of a type with templates, is rendered in each user's
// locale and zone (ko-KR falls back to ko, an unknown locale to the
// default), the notification records its template version, and a push
// form that cannot render with the trigger's data fails that delivery
// visibly — render_failed with the reason — while a literal trigger of
// the same type is sent as written.
func TestDeliveriesRenderFromTemplates(t *testing.T) {
	t.Parallel()
	p := newPipeline(t, nil)
	for _, u := range []struct{ id, locale, tz string }{{"kim", "ko-KR", "Asia/Seoul"}, {"ann", "en-US", "America/New_York"}, {"omar", "ar", "Africa/Cairo"}, {"zed", "fr", "Europe/Paris"}} {
		if _, err := p.client.PutUser(p.ctx, u.id, UserInput{Locale: u.locale, Timezone: u.tz}); err != nil {
			t.Fatal(err)
		}
		if _, err := p.client.RegisterDevice(p.ctx, u.id, DeviceInput{DeviceID: "d-" + u.id, Token: "tok-" + u.id, Platform: "android"}); err != nil {
			t.Fatal(err)
		}
	}
	tpl := heraldtype.MessageTemplates{DefaultLocale: "en", SampleData: map[string]string{"count": "2", "at": "2026-11-28T15:30:00Z"},
		Locales: map[string]heraldtype.ChannelTemplates{
			"en": {Push: &heraldtype.PushTemplate{Title: `{{plural .count "one" "# order" "other" "# orders"}}`, Body: `Ready {{date "datetime" .at}}`},
				InApp: &heraldtype.InAppTemplate{Title: "Orders", Body: "{{.count}} ready", ActionURL: "https://shop.example/o"}},
			"ko": {Push: &heraldtype.PushTemplate{Title: "주문 {{.count}}건", Body: `{{date "datetime" .at}} 준비 완료`}},
			"ar": {Push: &heraldtype.PushTemplate{Title: `{{plural .count "one" "طلب واحد" "two" "طلبان" "few" "# طلبات" "other" "# طلب"}}`, Body: "جاهز"}},
		}}
	v, err := p.client.PutTemplates(p.ctx, "orders", tpl)
	if err != nil {
		t.Fatal(err)
	}
	res, err := p.client.Enqueue(p.ctx, Request{UserIDs: []string{"kim", "ann", "omar", "zed"}, Type: "orders",
		Channels: []heraldtype.Channel{heraldtype.ChannelPush, heraldtype.ChannelInApp},
		Data:     map[string]string{"count": "2", "at": "2026-11-28T15:30:00Z"}})
	if err != nil {
		t.Fatal(err)
	}
	p.work()
	want := map[string][2]string{
		"tok-kim":  {"주문 2건", "2026년 11월 29일 오전 12:30 준비 완료"},
		"tok-ann":  {"2 orders", "Ready November 28, 2026 at 10:30\u202fAM"},
		"tok-omar": {"طلبان", "جاهز"},
		"tok-zed":  {"2 orders", "Ready November 28, 2026 at 4:30\u202fPM"},
	}
	for tok, w := range want {
		msgs := p.em.MessagesTo(tok)
		if len(msgs) != 1 {
			t.Fatalf("%s got %d messages", tok, len(msgs))
		}
		body := string(msgs[0].Message)
		if !strings.Contains(body, w[0]) || !strings.Contains(body, w[1]) {
			t.Errorf("%s: %s, want %q and %q", tok, body, w[0], w[1])
		}
	}
	for _, n := range res.Notifications {
		st := p.status(n.ID)
		if st.TemplateVersion != v.Version {
			t.Errorf("%s: template version %d, want %d", n.UserID, st.TemplateVersion, v.Version)
		}
		// The inbox item is the locale's in-app form; a locale without
		// one (ko, ar) shows its push form's title rather than another
		// language's in-app form.
		wantTitle, wantURL := "Orders", "https://shop.example/o"
		switch n.UserID {
		case "kim":
			wantTitle, wantURL = "주문 2건", ""
		case "omar":
			wantTitle, wantURL = "طلبان", ""
		}
		if st.Title != wantTitle || st.Data["action_url"] != wantURL {
			t.Errorf("%s: the notification's title %q, data %v", n.UserID, st.Title, st.Data)
		}
	}

	// A push form naming a field the trigger lacks: the delivery fails
	// visibly; a literal trigger of the type is sent as it is written.
	broken := tpl
	broken.SampleData = nil
	broken.Locales = map[string]heraldtype.ChannelTemplates{"en": {
		Push:  &heraldtype.PushTemplate{Title: "{{.count}} for {{.nickname}}", Body: "b"},
		InApp: &heraldtype.InAppTemplate{Title: "Orders", Body: "{{.count}}"},
	}}
	if _, err := p.client.PutTemplates(p.ctx, "orders", broken); err != nil {
		t.Fatal(err)
	}
	bad, err := p.client.Enqueue(p.ctx, Request{UserID: "ann", Type: "orders", Channels: []heraldtype.Channel{heraldtype.ChannelPush, heraldtype.ChannelInApp},
		Data: map[string]string{"count": "3"}})
	if err != nil {
		t.Fatal(err)
	}
	literal, err := p.client.Enqueue(p.ctx, Request{UserID: "ann", Type: "orders", Title: "Literal title", Body: "as written"})
	if err != nil {
		t.Fatal(err)
	}
	p.work()
	var push heraldtype.Delivery
	for _, d := range p.status(bad.Notifications[0].ID).Deliveries {
		if d.Channel == heraldtype.ChannelPush {
			push = d
		}
	}
	if push.State != heraldtype.StateDead || push.LastErrorCode != "render_failed" || !strings.Contains(push.LastError, "nickname") {
		t.Errorf("a push whose template lacks a field: %s %s %q", push.State, push.LastErrorCode, push.LastError)
	}
	if st := p.status(literal.Notifications[0].ID); st.TemplateVersion != 0 || st.Title != "Literal title" {
		t.Errorf("a literal trigger: version %d, title %q", st.TemplateVersion, st.Title)
	}
	msgs := p.em.MessagesTo("tok-ann")
	if last := string(msgs[len(msgs)-1].Message); !strings.Contains(last, "Literal title") || strings.Contains(last, "<no value>") {
		t.Errorf("the literal push: %s", last)
	}

	// An in-app form that cannot render refuses the trigger itself.
	broken.Locales["en"].InApp.Body = "{{.missing}}"
	if _, err := p.client.PutTemplates(p.ctx, "orders", broken); err != nil {
		t.Fatal(err)
	}
	_, err = p.client.Enqueue(p.ctx, Request{UserID: "ann", Type: "orders", Data: map[string]string{"count": "3"}})
	if heraldtype.ErrorCode(err) != heraldtype.EINVALID || !strings.Contains(err.Error(), "missing") {
		t.Errorf("a trigger its in-app form cannot render: %v", err)
	}
}

// Issue 37 item 1: a reminder without a title or a body, of a type with
// templates, is rendered from them like a trigger — in its user's locale,
// with its data — each occurrence recording the version; saving one whose
// data the templates cannot render is refused.
func TestReminderRendersFromTemplates(t *testing.T) {
	p := newReminderPipeline(t)
	if _, err := p.client.PutUser(p.ctx, "u1", UserInput{Locale: "ko", Timezone: "Asia/Seoul"}); err != nil {
		t.Fatal(err)
	}
	if _, err := p.client.PutTemplates(p.ctx, "cart_reminder", heraldtype.MessageTemplates{DefaultLocale: "en",
		Locales: map[string]heraldtype.ChannelTemplates{
			"en": {Push: &heraldtype.PushTemplate{Title: "{{.items}} items in your cart", Body: "Still thinking?"}},
			"ko": {Push: &heraldtype.PushTemplate{Title: "장바구니에 상품 {{.items}}개", Body: "아직 고민 중이세요?"}},
		}}); err != nil {
		t.Fatal(err)
	}
	r := cartReminder("cart-7")
	r.Title, r.Body = "", ""
	if _, _, err := p.client.PutReminder(p.ctx, r); heraldtype.ErrorCode(err) != heraldtype.EINVALID {
		t.Fatalf("a reminder whose data its templates cannot render saved: %v", err)
	}
	r.Data = map[string]string{"items": "2"}
	if _, _, err := p.client.PutReminder(p.ctx, r); err != nil {
		t.Fatal(err)
	}
	p.clock.Advance(time.Hour)
	if c := p.tickReminders(); c["enqueued"] != 1 {
		t.Fatalf("enqueued %v", c)
	}
	got := p.reminder("cart-7")
	if n := p.status(got.LastNotificationID); n.TemplateVersion != 1 || n.Title != "장바구니에 상품 2개" {
		t.Fatalf("the occurrence: version %d title %q", n.TemplateVersion, n.Title)
	}
	p.work()
	if msgs := p.em.MessagesTo("tok-1"); len(msgs) != 1 || !strings.Contains(string(msgs[0].Message), "장바구니에 상품 2개") {
		t.Fatalf("the push: %v", msgs)
	}
}

// An escalation of a notification rendered from templates keeps its
// version: the step's push is the push form in the user's locale, not the
// in-app text the original showed (issue 37 with issue 36 item 3).
func TestEscalationKeepsTheTemplateVersion(t *testing.T) {
	p := newPipeline(t, func(c *Config) { c.Types = map[string]TypeConfig{"order": orderEscalation()} })
	p.device("u1", "d1", "tok-1")
	if _, err := p.client.PutUser(p.ctx, "u1", UserInput{Locale: "he", Timezone: "Asia/Jerusalem"}); err != nil {
		t.Fatal(err)
	}
	if _, err := p.client.PutTemplates(p.ctx, "order", heraldtype.MessageTemplates{DefaultLocale: "he",
		Locales: map[string]heraldtype.ChannelTemplates{"he": {
			InApp: &heraldtype.InAppTemplate{Title: "ההזמנה {{.id}} נשלחה", Body: "פרטים באפליקציה"},
			Push:  &heraldtype.PushTemplate{Title: "ההזמנה {{.id}} בדרך", Body: "לחצו לפרטים"},
		}}}); err != nil {
		t.Fatal(err)
	}
	res, err := p.client.Enqueue(p.ctx, Request{UserID: "u1", Type: "order", Data: map[string]string{"id": "7"}})
	if err != nil {
		t.Fatal(err)
	}
	id := res.Notifications[0].ID
	if n := p.status(id); n.Title != "ההזמנה 7 נשלחה" || n.TemplateVersion != 1 {
		t.Fatalf("the original: %q version %d", n.Title, n.TemplateVersion)
	}
	p.clock.Advance(10 * time.Minute)
	if n, err := p.client.runEscalationsOnce(p.ctx); err != nil || n != 1 {
		t.Fatalf("escalations: %d %v", n, err)
	}
	p.work()
	esc := p.status(id).Escalations[0].NotificationID
	if n := p.status(esc); n.TemplateVersion != 1 {
		t.Fatalf("the escalation's version: %d", n.TemplateVersion)
	}
	if msgs := p.em.MessagesTo("tok-1"); len(msgs) != 1 || !strings.Contains(string(msgs[0].Message), "ההזמנה 7 בדרך") {
		t.Fatalf("the escalated push: %v", msgs)
	}
}
