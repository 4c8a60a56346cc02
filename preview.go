package herald

import (
	"context"
	"errors"
	"time"

	"github.com/heraldhq/herald/heraldtype"
	"github.com/heraldhq/herald/internal/message"
)

// PreviewRequest is the body of POST /v1/types/{type}/preview (issue 37
// item 5).
type PreviewRequest = heraldtype.PreviewRequest

// PreviewTemplates renders a type's templates in every locale — and for
// a named user — reporting each channel's sizes and SMS segments, and,
// per locale, a template that did not render or a form over its limit.
// Nothing is sent or stored.
func (c *Client) PreviewTemplates(ctx context.Context, typ string, in PreviewRequest) (heraldtype.TemplatePreview, error) {
	out := heraldtype.TemplatePreview{Type: typ, Locales: []heraldtype.LocalePreview{}}
	if err := validTypeName(typ); err != nil {
		return out, err
	}
	var mt heraldtype.MessageTemplates
	switch {
	case in.Templates != nil && in.Version != 0:
		return out, heraldtype.FieldErrorf("version", "give templates (a draft) or a version, not both")
	case in.Templates != nil:
		mt = *in.Templates
	case in.Version < 0:
		return out, heraldtype.FieldErrorf("version", "must not be negative")
	default:
		tv, err := c.store.GetTemplates(ctx, typ, in.Version)
		if err != nil {
			return out, err
		}
		mt, out.Version = tv.Templates, tv.Version
	}
	data := in.Data
	if data == nil {
		data = mt.SampleData
	}
	if data == nil {
		data = map[string]string{}
	}
	if err := validData(data, false); err != nil {
		return out, err
	}
	out.Data = data
	zone := time.UTC
	if in.TimeZone != "" {
		loc, err := time.LoadLocation(in.TimeZone)
		if err != nil {
			return out, heraldtype.FieldErrorf("time_zone", "%q is not an IANA time zone", in.TimeZone)
		}
		zone = loc
	}
	mt.SampleData = nil // the preview shows each locale's failure instead
	comp, err := message.Compile(ctx, &mt, c.messageConfig())
	if err != nil {
		return out, err
	}
	for _, name := range comp.Locales() {
		r, err := comp.RenderLocale(ctx, name, zone, data)
		out.Locales = append(out.Locales, localePreview(name, r, err))
	}
	if in.UserID == "" {
		return out, ctx.Err()
	}
	u, err := c.store.GetUser(ctx, in.UserID)
	if err != nil {
		if heraldtype.ErrorCode(err) == heraldtype.ENOTFOUND {
			return out, heraldtype.FieldErrorf("user_id", "user %q not found", in.UserID)
		}
		return out, err
	}
	devices, err := c.store.ListDevices(ctx, u.ID)
	if err != nil {
		return out, err
	}
	up := &heraldtype.UserPreview{UserID: u.ID, Locale: u.Locale, TimeZone: u.Timezone, Devices: []heraldtype.PreviewDevice{}}
	for _, d := range devices {
		if d.Status == heraldtype.DeviceActive && d.PushOptIn {
			up.Devices = append(up.Devices, heraldtype.PreviewDevice{ID: d.ID, Platform: d.Platform})
		}
	}
	r, err := comp.Render(ctx, message.Recipient{Locale: u.Locale, Zone: userZone(u.Timezone)}, data)
	up.LocalePreview = localePreview(comp.Pick(u.Locale), r, err)
	out.User = up
	return out, ctx.Err()
}

// localePreview is one locale's render for a preview.
func localePreview(name string, r *message.Rendered, err error) heraldtype.LocalePreview {
	lp := heraldtype.LocalePreview{Locale: name}
	if err != nil {
		lp.Error = err.Error()
		return lp
	}
	lp.Message = &r.RenderedMessage
	var over *message.LimitError
	if errors.As(r.Check(), &over) {
		lp.OverLimit = over.Error()
	}
	return lp
}
