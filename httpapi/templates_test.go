package httpapi_test

import (
	"testing"

	"github.com/heraldhq/herald/heraldtype"
)

// Issue 37 over the API: templates saved and refused naming the template,
// read by version, a bad version parameter refused, a preview of a draft.
func TestTemplateRoutes(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOptions{})
	tpl := map[string]any{"default_locale": "en", "sample_data": map[string]string{"name": "Mina"},
		"locales": map[string]any{
			"en": map[string]any{"sms": map[string]any{"text": "Hi {{.name}}"}, "email": map[string]any{"subject": "Hi", "html": "<p>{{.name}}</p>"}},
			"ar": map[string]any{"in_app": map[string]any{"title": "مرحبا {{.name}}", "body": "b"}},
		}}
	var v heraldtype.TemplateVersion
	e.do("PUT", "/v1/types/order/templates", tpl).expect(t, 200, &v)
	if v.Version != 1 || v.Type != "order" {
		t.Fatalf("PUT: %+v", v)
	}
	bad := map[string]any{"default_locale": "en", "locales": map[string]any{"en": map[string]any{"sms": map[string]any{"text": "{{.name"}}}}
	if r := e.do("PUT", "/v1/types/order/templates", bad); r.status != 400 || r.errorBody(t).Field != "templates.locales.en.sms.text" {
		t.Fatalf("a template that does not parse: %d %s", r.status, r.body)
	}
	e.do("GET", "/v1/types/order/templates?version=1", nil).expect(t, 200, &v)
	if r := e.do("GET", "/v1/types/order/templates?version=x", nil); r.status != 400 || r.errorBody(t).Field != "version" {
		t.Fatalf("a bad version: %d %s", r.status, r.body)
	}
	if r := e.do("GET", "/v1/types/none/templates", nil); r.status != 404 {
		t.Fatalf("a type without templates: %d", r.status)
	}
	var p heraldtype.TemplatePreview
	e.do("POST", "/v1/types/order/preview", map[string]any{"data": map[string]string{"name": "<b>Kim</b>"}}).expect(t, 200, &p)
	if len(p.Locales) != 2 || p.Locales[1].Message.Email.HTML != "<p>&lt;b&gt;Kim&lt;/b&gt;</p>" || p.Locales[1].Message.Email.Text != "<b>Kim</b>" {
		t.Fatalf("preview: %+v", p.Locales)
	}
	e.do("POST", "/v1/types/order/preview", nil).expect(t, 200, &p)
}
