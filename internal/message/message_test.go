package message

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/heraldhq/herald/heraldtype"
	"github.com/heraldhq/herald/internal/tmpl"
)

// order is a type's templates in English, Korean and Arabic (a
// right-to-left language), the shape a shop's order notice takes.
func order() heraldtype.MessageTemplates {
	return heraldtype.MessageTemplates{
		DefaultLocale: "en",
		SampleData:    map[string]string{"name": "Mina", "count": "3", "total": "12500", "at": "2026-11-28T15:30:00Z"},
		Locales: map[string]heraldtype.ChannelTemplates{
			"en": {
				Push:  &heraldtype.PushTemplate{Title: "Order for {{.name}}", Body: `{{plural .count "one" "# item" "other" "# items"}}, {{currency "KRW" .total}}`, Data: map[string]string{"n": "{{.count}}"}},
				SMS:   &heraldtype.SMSTemplate{Text: `{{.name}}: {{plural .count "one" "# item" "other" "# items"}} arrive {{date "datetime" .at}}`},
				Email: &heraldtype.EmailTemplate{Subject: "Your order, {{.name}}", HTML: `<h1>Hello {{.name}}</h1><p>Total <b>{{currency "KRW" .total}}</b></p><p><a href="https://shop.example/o">Track it</a></p>`},
				InApp: &heraldtype.InAppTemplate{Title: "Order", Body: "{{number .total}}", ActionURL: "https://shop.example/o/{{.name}}"},
			},
			"ko": {
				Push: &heraldtype.PushTemplate{Title: "{{.name}}님의 주문", Body: `상품 {{plural .count "other" "#개"}} · {{currency "KRW" .total}}`},
				SMS:  &heraldtype.SMSTemplate{Text: `{{.name}}님, 상품 {{.count}}개가 {{date "datetime" .at}}에 도착합니다`},
			},
			"ar": {
				Push: &heraldtype.PushTemplate{Title: "طلب {{.name}}", Body: `{{plural .count "one" "منتج واحد" "two" "منتجان" "few" "# منتجات" "many" "# منتجًا" "other" "# منتج"}}`},
				SMS:  &heraldtype.SMSTemplate{Text: `{{date "long" .at}}`},
			},
		},
	}
}

func compile(t *testing.T, mt heraldtype.MessageTemplates) *Compiled {
	t.Helper()
	c, err := Compile(context.Background(), &mt, Config{})
	if err != nil {
		t.Fatalf("compile: %v", err)
	}
	return c
}

func TestFallbackChain(t *testing.T) {
	mt := order()
	mt.Locales["ko-KR"] = heraldtype.ChannelTemplates{SMS: &heraldtype.SMSTemplate{Text: "ko-KR {{.name}}"}}
	c := compile(t, mt)
	for user, want := range map[string]string{
		"ko-KR": "ko-KR", "ko_KR": "ko-KR", "ko-kr": "ko-KR", "ko": "ko", "ko-KP": "ko", "ko-Kore-KR": "ko",
		"en-GB": "en", "ar-EG": "ar", "ar": "ar", "he": "en", "fr-CA": "en", "": "en", "not a locale!": "en",
	} {
		if got := c.Pick(user); got != want {
			t.Errorf("%q picks %s, want %s", user, got, want)
		}
	}
}

func TestRenderLocales(t *testing.T) {
	c := compile(t, order())
	seoul, _ := time.LoadLocation("Asia/Seoul")
	ny, _ := time.LoadLocation("America/New_York")
	cairo, _ := time.LoadLocation("Africa/Cairo")
	data := map[string]string{"name": "Mina", "count": "3", "total": "12500", "at": "2026-11-28T15:30:00Z"}
	for _, tc := range []struct {
		locale   string
		zone     *time.Location
		data     map[string]string
		title    string
		body     string
		smsHas   string
		encoding string
	}{
		{"en-US", ny, data, "Order for Mina", "3 items, ₩ 12,500", "November 28, 2026 at 10:30 AM", EncodingGSM7},
		{"en", ny, map[string]string{"name": "Mina", "count": "1", "total": "1000", "at": "2026-11-28T15:30:00Z"}, "Order for Mina", "1 item, ₩ 1,000", "1 item", EncodingGSM7},
		{"ko-KR", seoul, data, "Mina님의 주문", "상품 3개 · ₩ 12,500", "2026년 11월 29일 오전 12:30", EncodingUCS2},
		{"ar", cairo, data, "طلب Mina", "٣ منتجات", "٢٨ نوفمبر ٢٠٢٦", EncodingUCS2},
		{"ar", cairo, map[string]string{"name": "Mina", "count": "11", "total": "0", "at": "2026-11-28T15:30:00Z"}, "طلب Mina", "١١ منتجًا", "", EncodingUCS2},
		{"ar", cairo, map[string]string{"name": "Mina", "count": "2", "total": "0", "at": "2026-11-28T15:30:00Z"}, "طلب Mina", "منتجان", "", EncodingUCS2},
	} {
		r, err := c.Render(context.Background(), Recipient{Locale: tc.locale, Zone: tc.zone}, tc.data)
		if err != nil {
			t.Fatalf("%s: %v", tc.locale, err)
		}
		if r.Push.Title != tc.title || r.Push.Body != tc.body {
			t.Errorf("%s push: %q / %q, want %q / %q", tc.locale, r.Push.Title, r.Push.Body, tc.title, tc.body)
		}
		if !strings.Contains(r.SMS.Text, tc.smsHas) || r.SMS.Encoding != tc.encoding {
			t.Errorf("%s sms: %q %+v, want it to hold %q in %s", tc.locale, r.SMS.Text, smsCount(r.SMS), tc.smsHas, tc.encoding)
		}
		if err := r.Check(); err != nil {
			t.Errorf("%s: %v", tc.locale, err)
		}
	}
}

func TestPluralAndNumbers(t *testing.T) {
	mt := heraldtype.MessageTemplates{DefaultLocale: "en", Locales: map[string]heraldtype.ChannelTemplates{}}
	for _, l := range []string{"en", "ko", "he", "ar", "fr"} {
		mt.Locales[l] = heraldtype.ChannelTemplates{SMS: &heraldtype.SMSTemplate{Text: `{{plural .n "=0" "none" "one" "one:#" "two" "two:#" "few" "few:#" "many" "many:#" "other" "other:#"}}|{{number .n}}`}}
	}
	c := compile(t, mt)
	for _, tc := range []struct{ locale, n, want string }{
		{"en", "0", "none|0"}, {"en", "1", "one:1|1"}, {"en", "1.0", "other:1|1"}, {"en", "2", "other:2|2"}, {"en", "1234.5", "other:1,234.5|1,234.5"},
		{"ko", "1", "other:1|1"}, {"ko", "2", "other:2|2"},
		{"he", "1", "one:1|1"}, {"he", "2", "two:2|2"}, {"he", "3", "other:3|3"},
		{"ar", "2", "two:٢|٢"}, {"ar", "3", "few:٣|٣"}, {"ar", "11", "many:١١|١١"}, {"ar", "100", "other:١٠٠|١٠٠"},
		{"fr", "1234", "other:1 234|1 234"}, {"fr", "1.5", "one:1,5|1,5"},
	} {
		r, err := c.Render(context.Background(), Recipient{Locale: tc.locale}, map[string]string{"n": tc.n})
		if err != nil {
			t.Fatalf("%s %s: %v", tc.locale, tc.n, err)
		}
		if got := strings.ReplaceAll(r.SMS.Text, "\u00a0", " "); got != tc.want && strings.ReplaceAll(got, "\u202f", " ") != tc.want {
			t.Errorf("%s %s: %q, want %q", tc.locale, tc.n, r.SMS.Text, tc.want)
		}
	}
	for _, text := range []string{`{{number .s}}`, `{{currency "XXXX" .n}}`, `{{plural .n "one" "x"}}`, `{{plural .n "lots" "x" "other" "y"}}`, `{{date "someday" .n}}`, `{{date "long" .s}}`} {
		mt := heraldtype.MessageTemplates{DefaultLocale: "en", Locales: map[string]heraldtype.ChannelTemplates{"en": {SMS: &heraldtype.SMSTemplate{Text: text}}}}
		c := compile(t, mt)
		if _, err := c.Render(context.Background(), Recipient{}, map[string]string{"n": "1", "s": "many"}); err == nil {
			t.Errorf("%s rendered", text)
		}
	}
}

// TestEmail: the HTML is escaped where each value lands, and the plain
// part is made from it when the template gives none.
func TestEmail(t *testing.T) {
	c := compile(t, order())
	r, err := c.Render(context.Background(), Recipient{Locale: "en"}, map[string]string{"name": `<img src=x onerror=alert(1)>`, "count": "1", "total": "5", "at": "2026-01-01"}, heraldtype.ChannelEmail)
	if err != nil {
		t.Fatal(err)
	}
	if r.Push != nil || r.SMS != nil || r.Email == nil {
		t.Fatalf("rendered other channels: %+v", r)
	}
	if strings.Contains(r.Email.HTML, "<img") || !strings.Contains(r.Email.HTML, "&lt;img") {
		t.Errorf("the HTML is not escaped: %s", r.Email.HTML)
	}
	want := "Hello <img src=x onerror=alert(1)>\n\nTotal ₩ 5\n\nTrack it (https://shop.example/o)"
	if r.Email.Text != want {
		t.Errorf("plain text:\n%q\nwant\n%q", r.Email.Text, want)
	}
}

func TestPlainText(t *testing.T) {
	for in, want := range map[string]string{
		`<html><head><title>x</title><style>p{}</style></head><body><p>One   two</p><ul><li>a</li><li>b</li></ul>x<br>y</body></html>`: "One two\n\n- a\n- b\n\nx\ny",
		`<p>안녕하세요 <a href="https://e.example/k">여기</a></p><script>bad()</script>`:                                                      "안녕하세요 여기 (https://e.example/k)",
		`<div dir="rtl">שלום <b>עולם</b></div>`:                                                                                        "שלום עולם",
		`plain &amp; simple`: "plain & simple",
	} {
		if got := PlainText(in); got != want {
			t.Errorf("%s:\n%q\nwant\n%q", in, got, want)
		}
	}
}

// TestMissingFieldFails: a field the data lacks fails the render, naming
// the template, and is refused at the save when the sample data lacks it.
func TestMissingFieldFails(t *testing.T) {
	c := compile(t, order())
	_, err := c.Render(context.Background(), Recipient{Locale: "ko"}, map[string]string{"name": "Mina"})
	var re *RenderError
	if !errors.As(err, &re) || !strings.HasPrefix(re.Field, "templates.locales.ko.") || strings.Contains(err.Error(), "<no value>") {
		t.Fatalf("a missing field: %v", err)
	}
	mt := order()
	mt.Locales["ko"].Push.Title = "{{.nickname}}님"
	_, err = Compile(context.Background(), &mt, Config{})
	var he *heraldtype.Error
	if !errors.As(err, &he) || he.Field != "templates.locales.ko.push.title" || he.Code != heraldtype.EINVALID {
		t.Fatalf("saved with a field the sample lacks: %v", err)
	}
	mt.SampleData = nil
	if _, err := Compile(context.Background(), &mt, Config{}); err != nil {
		t.Fatalf("without sample data it cannot be known: %v", err)
	}
}

func TestCompileRefuses(t *testing.T) {
	for field, edit := range map[string]func(*heraldtype.MessageTemplates){
		"templates.default_locale":           func(m *heraldtype.MessageTemplates) { m.DefaultLocale = "de" },
		"templates.locales.x y":              func(m *heraldtype.MessageTemplates) { m.Locales["x y"] = m.Locales["en"] },
		"templates.locales.en":               func(m *heraldtype.MessageTemplates) { m.Locales["EN"] = m.Locales["en"] },
		"templates.locales.en.push.title":    func(m *heraldtype.MessageTemplates) { m.Locales["en"].Push.Title = "{{.name" },
		"templates.locales.ko.sms.text":      func(m *heraldtype.MessageTemplates) { m.Locales["ko"].SMS.Text = `{{define "a"}}{{end}}` },
		"templates.locales.en.email.html":    func(m *heraldtype.MessageTemplates) { m.Locales["en"].Email.HTML = strings.Repeat("x", MaxHTMLBytes+1) },
		"templates.locales.en.email.subject": func(m *heraldtype.MessageTemplates) { m.Locales["en"].Email.Subject = "" },
		"templates.locales.en.in_app.title":  func(m *heraldtype.MessageTemplates) { *m.Locales["en"].InApp = heraldtype.InAppTemplate{} },
		"templates.locales.fr":               func(m *heraldtype.MessageTemplates) { m.Locales["fr"] = heraldtype.ChannelTemplates{} },
		"templates.sms_max_segments":         func(m *heraldtype.MessageTemplates) { m.SMSMaxSegments = 11 },
		"templates.locales.en.push.data.n":   func(m *heraldtype.MessageTemplates) { m.Locales["en"].Push.Data["n"] = "{{range 99999999}}{{end}}" },
		"templates.locales.ar.sms.text":      func(m *heraldtype.MessageTemplates) { m.Locales["ar"].SMS.Text = `{{date "long" .name}}` },
		"templates.locales.en.push.body":     func(m *heraldtype.MessageTemplates) { m.Locales["en"].Push.Body = `{{currency "KRW" .name}}` },
		"templates.locales.ko.push.body": func(m *heraldtype.MessageTemplates) {
			m.Locales["ko"].Push.Body = `{{.name | printf "%s"}}{{call .name}}`
		},
		"templates.locales.en.in_app.action_url": func(m *heraldtype.MessageTemplates) { m.Locales["en"].InApp.ActionURL = "{{.nope}}" },
	} {
		mt := order()
		edit(&mt)
		_, err := Compile(context.Background(), &mt, Config{})
		var he *heraldtype.Error
		if !errors.As(err, &he) || he.Field != field {
			t.Errorf("%s: %v", field, err)
		}
	}
}

// TestLimits: a push over a provider's 4 KB and an SMS over its segments
// render (a preview shows them) but fail Check; the type's maximum is
// below the server's.
func TestLimits(t *testing.T) {
	mt := heraldtype.MessageTemplates{DefaultLocale: "ko", SMSMaxSegments: 2, Locales: map[string]heraldtype.ChannelTemplates{"ko": {
		Push: &heraldtype.PushTemplate{Title: "t", Body: "{{.body}}"},
		SMS:  &heraldtype.SMSTemplate{Text: "{{.body}}"},
	}}}
	c := compile(t, mt)
	render := func(body string) *Rendered {
		r, err := c.Render(context.Background(), Recipient{Locale: "ko"}, map[string]string{"body": body})
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	if r := render(strings.Repeat("가", 134)); r.Check() != nil || r.SMS.Segments != 2 {
		t.Fatalf("134 Korean characters: %+v %v", smsCount(r.SMS), r.Check())
	}
	var le *LimitError
	if r := render(strings.Repeat("가", 135)); !errors.As(r.Check(), &le) || le.Channel != heraldtype.ChannelSMS || r.SMS.Segments != 3 {
		t.Fatalf("135 Korean characters: %+v %v", smsCount(r.SMS), r.Check())
	}
	c2, err := Compile(context.Background(), &heraldtype.MessageTemplates{DefaultLocale: "en", Locales: map[string]heraldtype.ChannelTemplates{"en": {Push: &heraldtype.PushTemplate{Title: "t", Body: "{{.body}}"}}}}, Config{})
	if err != nil {
		t.Fatal(err)
	}
	r, err := c2.Render(context.Background(), Recipient{}, map[string]string{"body": strings.Repeat("가", 1400)})
	if err != nil {
		t.Fatal(err)
	}
	if !errors.As(r.Check(), &le) || le.Channel != heraldtype.ChannelPush || r.Push.APNsBytes <= 4096 {
		t.Fatalf("a 4.2 KB push: %d bytes, %v", r.Push.APNsBytes, r.Check())
	}
}

// TestBudget: one budget bounds the whole message, whatever its channels.
func TestBudget(t *testing.T) {
	mt := heraldtype.MessageTemplates{DefaultLocale: "en", Locales: map[string]heraldtype.ChannelTemplates{"en": {
		Email: &heraldtype.EmailTemplate{Subject: "s", HTML: `{{$x := "0123456789abcdef"}}{{range 34}}{{$x = print $x $x}}{{end}}{{$x}}`},
	}}}
	c, err := Compile(context.Background(), &mt, Config{Templates: tmpl.Limits{MaxBytes: 64 << 10}})
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.Render(context.Background(), Recipient{}, map[string]string{})
	if limit, ok := tmpl.OverBudget(err); !ok || limit != "bytes" {
		t.Fatalf("a doubling in an HTML body: %v", err)
	}
}

func smsCount(s *SMS) SMSCount {
	return SMSCount{Encoding: s.Encoding, Units: s.Units, Segments: s.Segments}
}

// TestPluralCannotMultiply: a plural form from the data holding many #s,
// each replaced by a long number, is refused by the budget before the
// string is built.
func TestPluralCannotMultiply(t *testing.T) {
	mt := heraldtype.MessageTemplates{DefaultLocale: "en", Locales: map[string]heraldtype.ChannelTemplates{"en": {
		SMS: &heraldtype.SMSTemplate{Text: `{{plural .n "other" .text}}`}}}}
	c, err := Compile(context.Background(), &mt, Config{Templates: tmpl.Limits{MaxBytes: 1 << 20}})
	if err != nil {
		t.Fatal(err)
	}
	data := map[string]string{"n": strings.Repeat("9", 300), "text": strings.Repeat("#", 100_000)}
	_, err = c.Render(context.Background(), Recipient{}, data)
	if limit, ok := tmpl.OverBudget(err); !ok || limit != "bytes" {
		t.Fatalf("100,000 #s times a 300-digit number: %v", err)
	}
}
