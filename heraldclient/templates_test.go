package heraldclient_test

import (
	"context"
	"strings"
	"testing"

	"github.com/heraldhq/herald/heraldclient"
	"github.com/heraldhq/herald/heraldtype"
)

// TestTemplates (issue 37 items 5 and 6): a type's templates saved,
// refused naming the template, read back by version, previewed in every
// locale and for a user, and test-sent; the notification records the
// version.
func TestTemplates(t *testing.T) {
	s := newServer(t, serverOptions{})
	c := s.client(t)
	ctx := context.Background()
	tpl := heraldtype.MessageTemplates{DefaultLocale: "en", SampleData: map[string]string{"name": "Mina", "n": "3"},
		Locales: map[string]heraldtype.ChannelTemplates{
			"en": {Push: &heraldtype.PushTemplate{Title: "Hi {{.name}}", Body: `{{plural .n "one" "# item" "other" "# items"}}`},
				SMS: &heraldtype.SMSTemplate{Text: "{{.name}}: {{.n}} items"}},
			"ko": {Push: &heraldtype.PushTemplate{Title: "{{.name}}님", Body: "상품 {{.n}}개"}, SMS: &heraldtype.SMSTemplate{Text: "{{.name}}님, 상품 {{.n}}개가 도착했습니다"}},
			"he": {Push: &heraldtype.PushTemplate{Title: "שלום {{.name}}", Body: "{{.n}}"}},
		}}
	bad := tpl
	bad.Locales = map[string]heraldtype.ChannelTemplates{"en": {SMS: &heraldtype.SMSTemplate{Text: "{{.nickname}}"}}}
	var herr *heraldclient.Error
	if _, err := c.PutTemplates(ctx, "order", bad); !asError(err, &herr) || herr.Field != "templates.locales.en.sms.text" {
		t.Fatalf("a template its sample data cannot render: %v", err)
	}
	v, err := c.PutTemplates(ctx, "order", tpl)
	if err != nil || v.Version != 1 {
		t.Fatalf("PutTemplates: %+v %v", v, err)
	}
	got, err := c.GetTemplates(ctx, "order", 1)
	if err != nil || got.Templates.Locales["ko"].SMS == nil {
		t.Fatalf("GetTemplates: %+v %v", got, err)
	}
	if _, err := c.PutTemplates(ctx, "order", tpl); err != nil {
		t.Fatal(err)
	}
	if vs, err := c.ListTemplateVersions(ctx, "order", 0, 0); err != nil || len(vs) != 2 || vs[0].Version != 2 {
		t.Fatalf("ListTemplateVersions: %+v %v", vs, err)
	}
	if vs, err := c.ListTemplateVersions(ctx, "order", 2, 1); err != nil || len(vs) != 1 || vs[0].Version != 1 {
		t.Fatalf("ListTemplateVersions before 2: %+v %v", vs, err)
	}
	if _, err := c.GetTemplates(ctx, "order", 7); !heraldclient.IsCode(err, heraldclient.CodeNotFound) {
		t.Errorf("an unknown version: %v", err)
	}
	if _, err := c.PutUser(ctx, "kim", heraldclient.UserInput{Locale: "ko-KR", Timezone: "Asia/Seoul"}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.RegisterDevice(ctx, "kim", heraldclient.DeviceInput{DeviceID: "d1", Token: "tok-1", Platform: "android"}); err != nil {
		t.Fatal(err)
	}
	p, err := c.PreviewTemplates(ctx, "order", heraldclient.PreviewRequest{UserID: "kim"})
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Locales) != 3 || p.Version != 2 || p.User == nil || p.User.Locale != "ko-KR" || p.User.LocalePreview.Locale != "ko" || len(p.User.Devices) != 1 {
		t.Fatalf("preview: %+v", p)
	}
	if m := p.User.Message; m == nil || m.Push.Title != "Mina님" || m.SMS.Encoding != "UCS-2" || m.SMS.Segments != 1 || m.Push.APNsBytes == 0 {
		t.Errorf("the user's render: %+v", p.User.Message)
	}
	draft := tpl
	draft.Locales = map[string]heraldtype.ChannelTemplates{"en": {SMS: &heraldtype.SMSTemplate{Text: strings.Repeat("가", 71) + "{{.missing}}"}}}
	p, err = c.PreviewTemplates(ctx, "order", heraldclient.PreviewRequest{Templates: &draft})
	if err != nil || p.Version != 0 || len(p.Locales) != 1 || !strings.Contains(p.Locales[0].Error, "missing") {
		t.Fatalf("a draft that does not render: %+v %v", p, err)
	}
	res, err := c.TestSendTemplates(ctx, "order", heraldclient.TestSendRequest{UserID: "kim"})
	if err != nil || len(res.Notifications) != 1 || len(res.Channels) != 1 || res.Channels[0].Status != "queued" {
		t.Fatalf("TestSendTemplates: %+v %v", res, err)
	}
	n, err := c.GetNotification(ctx, res.Notifications[0].ID)
	if err != nil || n.TemplateVersion != 2 || n.Title != "Mina님" {
		t.Errorf("the test-sent notification: version %d title %q %v", n.TemplateVersion, n.Title, err)
	}
	if _, err := c.TestSendTemplates(ctx, "none", heraldclient.TestSendRequest{UserID: "kim"}); !heraldclient.IsCode(err, heraldclient.CodeInvalidArgument) {
		t.Errorf("a test-send of a type without templates: %v", err)
	}
}
