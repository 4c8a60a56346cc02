package herald

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"strconv"
	"sync"
	"time"

	"github.com/heraldhq/herald/heraldtype"
	"github.com/heraldhq/herald/internal/dispatch"
	"github.com/heraldhq/herald/internal/message"
	"github.com/heraldhq/herald/internal/tmpl"
)

// Rendering a type's templates (issue 37): a trigger that gives neither a
// title nor a body, of a type that has templates, is rendered from the
// latest version, which the notification records (TemplateVersion). Its
// title and body — what the inbox item, the history and every channel
// without a form of its own show — are rendered at the enqueue in each
// user's locale and zone from the in-app form (else push, SMS, e-mail), so
// a template that cannot render with the trigger's data is refused then,
// invalid_argument on "data". Each other delivery renders its channel's
// form of that version just before its send (dispatch.Config.Render); a
// failure there ends that delivery dead with code render_failed and the
// reason on its timeline. A trigger with a title or a body is sent as it
// wrote them, whatever the type's templates.

// compiledVersions caches compiled template versions by type and version:
// a version never changes, so an entry is never stale; past its limit an
// arbitrary entry makes room.
type compiledVersions struct {
	mu sync.Mutex
	m  map[string]*message.Compiled
}

// maxCompiledVersions bounds compiledVersions.
const maxCompiledVersions = 1024

func (cv *compiledVersions) get(key string) *message.Compiled {
	cv.mu.Lock()
	defer cv.mu.Unlock()
	return cv.m[key]
}

func (cv *compiledVersions) put(key string, c *message.Compiled) {
	cv.mu.Lock()
	defer cv.mu.Unlock()
	if cv.m == nil {
		cv.m = map[string]*message.Compiled{}
	}
	if len(cv.m) >= maxCompiledVersions {
		for k := range cv.m {
			delete(cv.m, k)
			break
		}
	}
	cv.m[key] = c
}

// errTemplateBroken marks a stored version that no longer compiles (the
// limits changed since it was saved): the template is at fault.
var errTemplateBroken = errors.New("the type's templates do not compile")

// compiled returns a version of typ's templates, compiled. A store error
// is returned as it is; a version that no longer compiles wraps
// errTemplateBroken.
func (c *Client) compiled(ctx context.Context, tv heraldtype.TemplateVersion) (*message.Compiled, error) {
	key := tv.Type + "\x00" + strconv.Itoa(tv.Version)
	if comp := c.compiledVersions.get(key); comp != nil {
		return comp, nil
	}
	mt := tv.Templates
	mt.SampleData = nil // checked when saved; a render has its own data
	comp, err := message.Compile(ctx, &mt, c.messageConfig())
	if err != nil {
		return nil, fmt.Errorf("%w: version %d: %v", errTemplateBroken, tv.Version, err)
	}
	c.compiledVersions.put(key, comp)
	return comp, nil
}

// compiledVersion is compiled for a version read from the store.
func (c *Client) compiledVersion(ctx context.Context, typ string, version int) (*message.Compiled, error) {
	if comp := c.compiledVersions.get(typ + "\x00" + strconv.Itoa(version)); comp != nil {
		return comp, nil
	}
	tv, err := c.store.GetTemplates(ctx, typ, version)
	if err != nil {
		if heraldtype.ErrorCode(err) == heraldtype.ENOTFOUND {
			return nil, fmt.Errorf("%w: %v", errTemplateBroken, err)
		}
		return nil, err
	}
	return c.compiled(ctx, tv)
}

// latestTemplates returns the latest version of typ's templates, or nil
// when it has none.
func (c *Client) latestTemplates(ctx context.Context, typ string) (*heraldtype.TemplateVersion, error) {
	tv, err := c.store.GetTemplates(ctx, typ, 0)
	switch {
	case err == nil:
		return &tv, nil
	case heraldtype.ErrorCode(err) == heraldtype.ENOTFOUND:
		return nil, nil
	}
	return nil, err
}

// userZone is a user's time zone; UTC when it is unknown.
func userZone(name string) *time.Location {
	if loc, err := time.LoadLocation(name); err == nil && name != "" {
		return loc
	}
	return time.UTC
}

// renderAtEnqueue fills each notification's title and body from the
// version's forms in its user's locale (the in-app form first).
func (c *Client) renderAtEnqueue(ctx context.Context, tv *heraldtype.TemplateVersion, ns []heraldtype.Notification) error {
	comp, err := c.compiled(ctx, *tv)
	if err != nil {
		return heraldtype.FieldErrorf("type", "%v", err)
	}
	// Every recipient's locale and zone in one read: one query per user
	// was half of a templated trigger's cost (docs/PERFORMANCE.md,
	// "Templates").
	ids := make([]string, len(ns))
	for i := range ns {
		ids[i] = ns[i].UserID
	}
	users, err := c.store.GetUsers(ctx, ids)
	if err != nil {
		return err
	}
	for i := range ns {
		n := &ns[i]
		n.TemplateVersion = tv.Version
		u, ok := users[n.UserID]
		if !ok {
			continue // the enqueue names the missing user
		}
		r := message.Recipient{Locale: u.Locale, Zone: userZone(u.Timezone)}
		for _, ch := range []heraldtype.Channel{heraldtype.ChannelInApp, heraldtype.ChannelPush, heraldtype.ChannelSMS, heraldtype.ChannelEmail} {
			if !comp.Has(u.Locale, ch) {
				continue
			}
			out, err := comp.Render(ctx, r, n.Data, ch)
			if err != nil {
				if ctx.Err() != nil {
					return ctx.Err()
				}
				return heraldtype.FieldErrorf("data", "the type's template does not render for user %q: %v", n.UserID, err)
			}
			switch {
			case out.InApp != nil:
				n.Title, n.Body = out.InApp.Title, out.InApp.Body
				if out.InApp.ActionURL != "" {
					n.Data = maps.Clone(n.Data)
					if n.Data == nil {
						n.Data = map[string]string{}
					}
					n.Data["action_url"] = out.InApp.ActionURL
				}
			case out.Push != nil:
				n.Title, n.Body = out.Push.Title, out.Push.Body
			case out.SMS != nil:
				n.Body = out.SMS.Text
			case out.Email != nil:
				n.Title, n.Body = out.Email.Subject, out.Email.Text
			}
			break
		}
		if len(n.Title) > MaxTitleLength || len(n.Body) > MaxBodyLength {
			return heraldtype.FieldErrorf("data", "the type's template renders a title over %d or a body over %d bytes for user %q", MaxTitleLength, MaxBodyLength, n.UserID)
		}
	}
	return nil
}

// renderDelivery is dispatch.Config.Render: the delivery's channel's form
// of the notification's template version, in its user's locale and zone.
func (c *Client) renderDelivery(ctx context.Context, job *heraldtype.Job) (*heraldtype.Notification, error) {
	n, ch := job.Notification, job.Delivery.Channel
	if ch == "" {
		ch = heraldtype.ChannelPush
	}
	comp, err := c.compiledVersion(ctx, n.Type, n.TemplateVersion)
	if errors.Is(err, errTemplateBroken) {
		return nil, &dispatch.RenderFailed{Reason: err.Error()}
	}
	if err != nil {
		return nil, err
	}
	u, err := c.store.GetUser(ctx, n.UserID)
	if err != nil {
		return nil, err
	}
	if !comp.Has(u.Locale, ch) {
		return nil, nil // sent with the title and body rendered at the enqueue
	}
	r, err := comp.Render(ctx, message.Recipient{Locale: u.Locale, Zone: userZone(u.Timezone)}, n.Data, ch)
	if err == nil {
		err = r.Check()
	}
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		if limit, ok := tmpl.OverBudget(err); ok {
			c.metrics.TemplateOverBudget.WithLabelValues("type", limit).Inc()
		}
		return nil, &dispatch.RenderFailed{Reason: fmt.Sprintf("template version %d: %v", n.TemplateVersion, err)}
	}
	out := *n
	switch {
	case r.Push != nil:
		out.Title, out.Body = r.Push.Title, r.Push.Body
		if len(r.Push.Data) > 0 {
			out.Data = maps.Clone(n.Data)
			if out.Data == nil {
				out.Data = map[string]string{}
			}
			maps.Copy(out.Data, r.Push.Data)
		}
	case r.SMS != nil:
		out.Title, out.Body = "", r.SMS.Text
	case r.Email != nil:
		out.Title, out.Body = r.Email.Subject, r.Email.Text
		out.Data = maps.Clone(n.Data)
		if out.Data == nil {
			out.Data = map[string]string{}
		}
		delete(out.Data, heraldtype.DataHTML)
		if r.Email.HTML != "" {
			out.Data[heraldtype.DataHTML] = r.Email.HTML
		}
	}
	return &out, nil
}
