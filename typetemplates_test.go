package herald

import (
	"strings"
	"testing"

	"github.com/heraldhq/herald/heraldtype"
)

func orderTemplates() heraldtype.MessageTemplates {
	return heraldtype.MessageTemplates{DefaultLocale: "en", SampleData: map[string]string{"name": "Mina", "count": "2"},
		Locales: map[string]heraldtype.ChannelTemplates{
			"en":    {Push: &heraldtype.PushTemplate{Title: "Hi {{.name}}", Body: `{{plural .count "one" "# item" "other" "# items"}}`}},
			"ko_kr": {Push: &heraldtype.PushTemplate{Title: "{{.name}}님", Body: "상품 {{.count}}개"}, SMS: &heraldtype.SMSTemplate{Text: "{{.name}}님, 상품 {{.count}}개"}},
			"he":    {InApp: &heraldtype.InAppTemplate{Title: "שלום {{.name}}", Body: "b"}},
		}}
}

// Issue 37 items 3 and 6 through the Client: templates are checked at the
// save (a field the sample data lacks names its template), each save is a
// new version, and the earlier ones stay readable.
func TestPutTemplatesVersions(t *testing.T) {
	t.Parallel()
	p := newPipeline(t, nil)
	v1, err := p.client.PutTemplates(p.ctx, "order", orderTemplates())
	if err != nil || v1.Version != 1 {
		t.Fatalf("save: %+v %v", v1, err)
	}
	if _, ok := v1.Templates.Locales["ko-KR"]; !ok {
		t.Fatalf("locale keys not made canonical: %v", v1.Templates.Locales)
	}
	bad := orderTemplates()
	bad.Locales["he"].InApp.Body = "{{.missing}}"
	_, err = p.client.PutTemplates(p.ctx, "order", bad)
	if heraldtype.ErrorCode(err) != heraldtype.EINVALID || !strings.Contains(err.Error(), "templates.locales.he.in_app.body") {
		t.Fatalf("a field the sample lacks saved: %v", err)
	}
	next := orderTemplates()
	next.Locales["en"].Push.Title = "Hello {{.name}}"
	v2, err := p.client.PutTemplates(p.ctx, "order", next)
	if err != nil || v2.Version != 2 {
		t.Fatalf("second save: %+v %v", v2, err)
	}
	got, err := p.client.GetTemplates(p.ctx, "order", 1)
	if err != nil || got.Templates.Locales["en"].Push.Title != "Hi {{.name}}" {
		t.Fatalf("version 1 after a second save: %+v %v", got, err)
	}
	if got, err = p.client.GetTemplates(p.ctx, "order", 0); err != nil || got.Version != 2 {
		t.Fatalf("latest: %+v %v", got, err)
	}
	list, err := p.client.ListTemplateVersions(p.ctx, "order", 0, 0)
	if err != nil || len(list) != 2 || list[0].Version != 2 {
		t.Fatalf("versions: %+v %v", list, err)
	}
	if list, err = p.client.ListTemplateVersions(p.ctx, "none", 0, 0); err != nil || list == nil || len(list) != 0 {
		t.Fatalf("no versions: %#v %v", list, err)
	}
	if _, err := p.client.GetTemplates(p.ctx, "none", 0); heraldtype.ErrorCode(err) != heraldtype.ENOTFOUND {
		t.Fatalf("no templates: %v", err)
	}
	if _, err := p.client.PutTemplates(p.ctx, "Bad Type", orderTemplates()); heraldtype.ErrorCode(err) != heraldtype.EINVALID {
		t.Fatalf("a bad type name: %v", err)
	}
}
