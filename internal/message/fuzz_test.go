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

// FuzzRender: whatever an operator saves as a type's template (here as an
// SMS text and as an e-mail's HTML, in a locale picked from the input) and
// whatever a trigger carries, Compile refuses it or a render ends within
// its budget — never a panic, never past its deadline, never "<no
// value>" — and the plain part made from the HTML is made.
func FuzzRender(f *testing.F) {
	for _, seed := range []string{
		`{{plural .n "one" "# item" "other" "# items"}} {{currency "KRW" .n}} {{date "long" .at}}`,
		`{{$x:="0123456789abcdef"}}{{range 34}}{{$x = print $x $x}}{{end}}{{$x}}`,
		`<a href="{{.s}}">{{.s}}</a><script>var x = {{.s}};</script>`,
		`{{range 2000}}{{range 2000}}{{number .n}}{{end}}{{end}}`,
		`{{.missing}}`,
		`{{plural .s "=1" "x" "other" "#"}}{{number 1e308}}`,
	} {
		f.Add(seed, "3", "<b>&\"'", "ar-EG")
	}
	lim := tmpl.Limits{MaxSteps: 2000, MaxBytes: 64 << 10}
	f.Fuzz(func(t *testing.T, text, n, s, locale string) {
		mt := heraldtype.MessageTemplates{DefaultLocale: "en", Locales: map[string]heraldtype.ChannelTemplates{
			"en": {SMS: &heraldtype.SMSTemplate{Text: text}},
			"ko": {Email: &heraldtype.EmailTemplate{Subject: "s", HTML: text}},
			"ar": {Push: &heraldtype.PushTemplate{Title: text, Body: "b"}},
		}}
		c, err := Compile(context.Background(), &mt, Config{Templates: lim})
		if err != nil {
			return
		}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		data := map[string]string{"n": n, "s": s, "at": "2026-11-28T15:30:00Z"}
		for _, l := range []string{locale, "en", "ko", "ar"} {
			r, err := c.Render(ctx, Recipient{Locale: l, Zone: time.UTC}, data)
			if errors.Is(err, context.DeadlineExceeded) {
				t.Fatalf("%q ran past its budget", text)
			}
			if err != nil {
				continue
			}
			_ = r.Check()
			for _, out := range []string{str(r.SMS), strEmail(r.Email), strPush(r.Push)} {
				if strings.Contains(out, "<no value>") && !strings.Contains(text+n+s, "<no value>") {
					t.Fatalf("%q rendered <no value>: %q", text, out)
				}
			}
		}
	})
}

func str(s *SMS) string {
	if s == nil {
		return ""
	}
	return s.Text
}

func strEmail(e *Email) string {
	if e == nil {
		return ""
	}
	return e.HTML + e.Text
}

func strPush(p *Push) string {
	if p == nil {
		return ""
	}
	return p.Title + p.Body
}
