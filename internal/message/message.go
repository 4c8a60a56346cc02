// Package message is Herald's one template home (issue 37; docs/
// ARCHITECTURE.md "Messages: templates per channel and locale"): a
// notification type's templates — per locale, a form per channel (push,
// SMS, e-mail, in-app) — checked when saved and rendered for one user in
// their locale, through the fallback chain (ko-KR → ko → the type's
// default), and their time zone.
//
// Every text renders through internal/tmpl under one budget per message
// (steps, bytes, time; missingkey=error, so a missing field fails the
// render and nothing is sent with "<no value>"); an e-mail's HTML is an
// html/template, escaped for where each value lands. Besides
// text/template's builtins a template may call only number, currency,
// plural and date (Funcs), which format by CLDR through golang.org/x/text.
// What a provider would refuse is checked after the render: a push
// payload over APNs' or FCM's 4 KB, an SMS over its segments.
package message

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"time"

	"golang.org/x/text/language"

	"github.com/heraldhq/herald/heraldtype"
	"github.com/heraldhq/herald/internal/tmpl"
)

// Config bounds the templates and their renders. Zero fields take the
// defaults.
type Config struct {
	// Templates is the budget of one message's render (templates.max_*).
	Templates tmpl.Limits
	// APNsMaxBytes and FCMMaxBytes bound a push's payload as each
	// provider counts it (templates.apns_max_bytes, fcm_max_bytes).
	// Default 4096: both providers refuse more.
	APNsMaxBytes int
	FCMMaxBytes  int
	// SMSMaxSegments bounds an SMS's parts (templates.sms_max_segments);
	// a type may set a lower maximum. Default 10.
	SMSMaxSegments int
}

// Defaults of Config.
const (
	DefaultAPNsMaxBytes   = 4096
	DefaultFCMMaxBytes    = 4096
	DefaultSMSMaxSegments = 10
	// MaxTextBytes bounds each template but an e-mail's bodies (a rule's
	// title and body have the same bound); MaxHTMLBytes those.
	MaxTextBytes = 4000
	MaxHTMLBytes = 64 << 10
	// MaxLocales bounds the locales of one type.
	MaxLocales = 100
)

func (c Config) withDefaults() Config {
	c.APNsMaxBytes = cmp.Or(c.APNsMaxBytes, DefaultAPNsMaxBytes)
	c.FCMMaxBytes = cmp.Or(c.FCMMaxBytes, DefaultFCMMaxBytes)
	c.SMSMaxSegments = cmp.Or(c.SMSMaxSegments, DefaultSMSMaxSegments)
	return c
}

// Compiled is a type's templates, parsed and checked, ready to render for
// any user. It is safe for concurrent renders.
type Compiled struct {
	cfg     Config
	def     string
	locales map[string]*locale
	smsMax  int
}

type locale struct {
	tag   language.Tag
	push  *pushT
	sms   *tmpl.Template
	email *emailT
	inApp *inAppT
}

type pushT struct {
	title, body *tmpl.Template
	data        map[string]*tmpl.Template
}

type emailT struct{ subject, html, text *tmpl.Template }

type inAppT struct{ title, body, actionURL *tmpl.Template }

// Compile checks a type's templates and parses them: each refusal is
// invalid_argument naming its field under "templates.". Locale keys are
// made canonical in mt (ko_kr → ko-KR). With sample data, every template
// of every locale is rendered with it, so a template naming a field the
// data lacks, or one over a limit, is refused at its save.
func Compile(ctx context.Context, mt *heraldtype.MessageTemplates, cfg Config) (*Compiled, error) {
	cfg = cfg.withDefaults()
	c := &Compiled{cfg: cfg, locales: map[string]*locale{}, smsMax: cfg.SMSMaxSegments}
	if len(mt.Locales) == 0 {
		return nil, heraldtype.FieldErrorf("templates.locales", "needs at least one locale")
	}
	if len(mt.Locales) > MaxLocales {
		return nil, heraldtype.FieldErrorf("templates.locales", "has %d locales, at most %d", len(mt.Locales), MaxLocales)
	}
	switch {
	case mt.SMSMaxSegments < 0 || mt.SMSMaxSegments > cfg.SMSMaxSegments:
		return nil, heraldtype.FieldErrorf("templates.sms_max_segments", "must be between 1 and %d (templates.sms_max_segments), got %d", cfg.SMSMaxSegments, mt.SMSMaxSegments)
	case mt.SMSMaxSegments > 0:
		c.smsMax = mt.SMSMaxSegments
	}
	canonical := make(map[string]heraldtype.ChannelTemplates, len(mt.Locales))
	for _, key := range slices.Sorted(maps.Keys(mt.Locales)) {
		tag, err := language.Parse(key)
		if err != nil || key == "" {
			return nil, heraldtype.FieldErrorf("templates.locales."+key, "%q is not a BCP 47 locale (en, ko, ko-KR, ar)", key)
		}
		name := tag.String()
		if _, dup := canonical[name]; dup {
			return nil, heraldtype.FieldErrorf("templates.locales."+key, "names the locale %s twice", name)
		}
		l, err := compileLocale("templates.locales."+name, tag, mt.Locales[key], cfg)
		if err != nil {
			return nil, err
		}
		canonical[name] = mt.Locales[key]
		c.locales[name] = l
	}
	mt.Locales = canonical
	def, err := language.Parse(mt.DefaultLocale)
	if mt.DefaultLocale == "" || err != nil {
		return nil, heraldtype.FieldErrorf("templates.default_locale", "is required: one of the template's locales")
	}
	if _, ok := c.locales[def.String()]; !ok {
		return nil, heraldtype.FieldErrorf("templates.default_locale", "%s has no templates", def)
	}
	mt.DefaultLocale, c.def = def.String(), def.String()
	if mt.SampleData != nil {
		for _, name := range slices.Sorted(maps.Keys(c.locales)) {
			r, err := c.render(ctx, c.locales[name], time.UTC, mt.SampleData, nil)
			if err == nil {
				err = r.Check()
			}
			if err != nil {
				var re *RenderError
				if errors.As(err, &re) {
					return nil, heraldtype.FieldErrorf(re.Field, "does not render with the sample data: %v", re.Err)
				}
				return nil, err
			}
		}
	}
	return c, nil
}

func compileLocale(at string, tag language.Tag, ct heraldtype.ChannelTemplates, cfg Config) (*locale, error) {
	l := &locale{tag: tag}
	var err error
	parse := func(field, text string, html bool) *tmpl.Template {
		if err != nil || text == "" {
			return nil
		}
		max := MaxTextBytes
		if html {
			max = MaxHTMLBytes
		}
		if len(text) > max {
			err = heraldtype.FieldErrorf(at+"."+field, "must be at most %d bytes", max)
			return nil
		}
		var t *tmpl.Template
		t, err = tmpl.ParseWith(at+"."+field, text, cfg.Templates, tmpl.Options{HTML: html, Funcs: funcs})
		if err != nil {
			err = heraldtype.FieldErrorf(at+"."+field, "is not a valid template: %v", err)
		}
		return t
	}
	if p := ct.Push; p != nil {
		if p.Title == "" && p.Body == "" {
			return nil, heraldtype.FieldErrorf(at+".push.title", "a push needs a title or a body")
		}
		l.push = &pushT{title: parse("push.title", p.Title, false), body: parse("push.body", p.Body, false)}
		if len(p.Data) > 0 {
			l.push.data = map[string]*tmpl.Template{}
			for _, k := range slices.Sorted(maps.Keys(p.Data)) {
				l.push.data[k] = parse("push.data."+k, p.Data[k], false)
			}
		}
	}
	if s := ct.SMS; s != nil {
		if s.Text == "" {
			return nil, heraldtype.FieldErrorf(at+".sms.text", "is required")
		}
		l.sms = parse("sms.text", s.Text, false)
	}
	if e := ct.Email; e != nil {
		switch {
		case e.Subject == "":
			return nil, heraldtype.FieldErrorf(at+".email.subject", "is required")
		case e.HTML == "" && e.Text == "":
			return nil, heraldtype.FieldErrorf(at+".email.html", "an e-mail needs an HTML or a text body")
		}
		l.email = &emailT{subject: parse("email.subject", e.Subject, false), html: parse("email.html", e.HTML, true), text: parse("email.text", e.Text, false)}
	}
	if a := ct.InApp; a != nil {
		if a.Title == "" && a.Body == "" {
			return nil, heraldtype.FieldErrorf(at+".in_app.title", "an inbox item needs a title or a body")
		}
		l.inApp = &inAppT{title: parse("in_app.title", a.Title, false), body: parse("in_app.body", a.Body, false), actionURL: parse("in_app.action_url", a.ActionURL, false)}
	}
	if ct.Push == nil && ct.SMS == nil && ct.Email == nil && ct.InApp == nil {
		return nil, heraldtype.FieldErrorf(at, "has no channel's template (push, sms, email, in_app)")
	}
	return l, err
}

// DefaultLocale is the locale a user's falls back to.
func (c *Compiled) DefaultLocale() string { return c.def }

// Locales are the template's locales, sorted.
func (c *Compiled) Locales() []string { return slices.Sorted(maps.Keys(c.locales)) }

// Pick is the locale a user's locale renders in: the first of it and its
// parents (ko-KR, then ko) that has templates, else the default. An empty
// or unreadable locale takes the default.
func (c *Compiled) Pick(userLocale string) string {
	tag, err := language.Parse(userLocale)
	if userLocale == "" || err != nil {
		return c.def
	}
	for t := tag; ; t = t.Parent() {
		if _, ok := c.locales[t.String()]; ok {
			return t.String()
		}
		if t.IsRoot() {
			return c.def
		}
	}
}

// Has reports whether the locale a user's picks has a form for ch.
func (c *Compiled) Has(userLocale string, ch heraldtype.Channel) bool {
	l := c.locales[c.Pick(userLocale)]
	switch ch {
	case heraldtype.ChannelPush:
		return l.push != nil
	case heraldtype.ChannelSMS:
		return l.sms != nil
	case heraldtype.ChannelEmail:
		return l.email != nil
	case heraldtype.ChannelInApp:
		return l.inApp != nil
	}
	return false
}

// Recipient is who a message renders for: their locale and time zone.
type Recipient struct {
	Locale string
	Zone   *time.Location
}

// Render renders the forms of the given channels (all the locale has,
// when none is given) for r in the locale r's picks, under one budget.
// A template that fails — a missing field, a bad value, the budget — is a
// *RenderError naming it; limits are checked apart (Rendered.Check), so a
// preview can show what is over.
func (c *Compiled) Render(ctx context.Context, r Recipient, data any, channels ...heraldtype.Channel) (*Rendered, error) {
	return c.render(ctx, c.locales[c.Pick(r.Locale)], r.Zone, data, channels)
}

// RenderLocale renders in the named locale (a preview of each).
func (c *Compiled) RenderLocale(ctx context.Context, name string, zone *time.Location, data any) (*Rendered, error) {
	l, ok := c.locales[name]
	if !ok {
		return nil, fmt.Errorf("no templates for %s", name)
	}
	return c.render(ctx, l, zone, data, nil)
}
