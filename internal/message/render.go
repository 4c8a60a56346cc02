package message

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/heraldhq/herald/heraldtype"
	"github.com/heraldhq/herald/internal/tmpl"
)

// Rendered is one message rendered in one locale: a form per channel the
// locale has (and was asked for), with the sizes its limits read, and the
// limits Check holds them to.
type Rendered struct {
	heraldtype.RenderedMessage

	apnsMax, fcmMax, smsMax int
}

// The rendered forms, as the public vocabulary names them.
type (
	Push  = heraldtype.RenderedPush
	SMS   = heraldtype.RenderedSMS
	Email = heraldtype.RenderedEmail
	InApp = heraldtype.RenderedInApp
)

// RenderError is a template that did not render: Field names it
// ("templates.locales.ko.sms.text"), Err says why (a missing field, a
// bad value for a function, the budget: tmpl.OverBudget tells).
type RenderError struct {
	Field string
	Err   error
}

func (e *RenderError) Error() string { return fmt.Sprintf("%s: %v", e.Field, e.Err) }
func (e *RenderError) Unwrap() error { return e.Err }

// LimitError is a rendered message a provider would refuse.
type LimitError struct {
	Channel heraldtype.Channel
	Message string
}

func (e *LimitError) Error() string { return fmt.Sprintf("%s: %s", e.Channel, e.Message) }

// Check reports the first form over its channel's limit.
func (r *Rendered) Check() error {
	if p := r.Push; p != nil {
		if p.APNsBytes > r.apnsMax {
			return &LimitError{heraldtype.ChannelPush, fmt.Sprintf("the APNs payload is %d bytes, over %d (templates.apns_max_bytes)", p.APNsBytes, r.apnsMax)}
		}
		if p.FCMBytes > r.fcmMax {
			return &LimitError{heraldtype.ChannelPush, fmt.Sprintf("the FCM payload is %d bytes, over %d (templates.fcm_max_bytes)", p.FCMBytes, r.fcmMax)}
		}
	}
	if s := r.SMS; s != nil && s.Segments > r.smsMax {
		return &LimitError{heraldtype.ChannelSMS, fmt.Sprintf("the SMS takes %d segments (%s, %d units), over %d (sms_max_segments)", s.Segments, s.Encoding, s.Units, r.smsMax)}
	}
	return nil
}

// out renders the templates of one message under one budget, remembering
// the first failure.
type out struct {
	b    *tmpl.Budget
	data any
	env  *env
	err  error
}

func (o *out) exec(t *tmpl.Template, max int) string {
	if o.err != nil || t == nil {
		return ""
	}
	s, err := t.ExecuteEnv(o.b, o.data, o.env, max)
	if err != nil {
		o.err = &RenderError{Field: t.Name(), Err: err}
	}
	return s
}

func (c *Compiled) render(ctx context.Context, l *locale, zone *time.Location, data any, channels []heraldtype.Channel) (*Rendered, error) {
	want := func(ch heraldtype.Channel) bool { return len(channels) == 0 || slices.Contains(channels, ch) }
	o := &out{b: tmpl.NewBudget(ctx, c.cfg.Templates), data: data, env: newEnv(l.tag, zone)}
	r := &Rendered{RenderedMessage: heraldtype.RenderedMessage{Locale: l.tag.String()}, apnsMax: c.cfg.APNsMaxBytes,
		fcmMax: c.cfg.FCMMaxBytes, smsMax: c.smsMax}
	maxBody := c.cfg.Templates.MaxBytes
	if maxBody <= 0 {
		maxBody = tmpl.DefaultMaxBytes
	}
	if p := l.push; p != nil && want(heraldtype.ChannelPush) {
		r.Push = &Push{Title: o.exec(p.title, MaxTextBytes*4), Body: o.exec(p.body, MaxTextBytes*4)}
		for _, k := range slices.Sorted(maps.Keys(p.data)) {
			if r.Push.Data == nil {
				r.Push.Data = map[string]string{}
			}
			r.Push.Data[k] = o.exec(p.data[k], MaxTextBytes*4)
		}
		r.Push.APNsBytes, r.Push.FCMBytes = payloadSizes(r.Push)
	}
	if l.sms != nil && want(heraldtype.ChannelSMS) {
		text := plainSpaces(o.exec(l.sms, MaxTextBytes*4))
		n := CountSMS(text)
		r.SMS = &SMS{Text: text, Encoding: n.Encoding, Units: n.Units, Segments: n.Segments}
	}
	if e := l.email; e != nil && want(heraldtype.ChannelEmail) {
		r.Email = &Email{Subject: o.exec(e.subject, MaxTextBytes*4), HTML: o.exec(e.html, maxBody), Text: o.exec(e.text, maxBody)}
		if e.text == nil && o.err == nil {
			r.Email.Text = PlainText(r.Email.HTML)
		}
		r.Email.Bytes = len(r.Email.Subject) + len(r.Email.HTML) + len(r.Email.Text)
	}
	if a := l.inApp; a != nil && want(heraldtype.ChannelInApp) {
		r.InApp = &InApp{Title: o.exec(a.title, MaxTextBytes*4), Body: o.exec(a.body, MaxTextBytes*4), ActionURL: o.exec(a.actionURL, MaxTextBytes)}
	}
	if o.err != nil {
		return nil, o.err
	}
	return r, nil
}

// payloadSizes are the bytes of a push's payload as APNs counts it (the
// JSON body: aps.alert's title and body, the data keys beside aps) and as
// FCM counts its 4 KB (the message's notification and data), without the
// device token and the fields a provider adds of its own (a few dozen
// bytes, well inside the margin of a 4 KB limit a message nears only with
// a large data map).
func payloadSizes(p *Push) (apns, fcm int) {
	a := map[string]any{"aps": map[string]any{"alert": map[string]string{"title": p.Title, "body": p.Body}}}
	for k, v := range p.Data {
		if k != "aps" {
			a[k] = v
		}
	}
	ab, _ := json.Marshal(a)
	fb, _ := json.Marshal(map[string]any{"notification": map[string]string{"title": p.Title, "body": p.Body}, "data": p.Data})
	return len(ab), len(fb)
}
