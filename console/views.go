package console

import (
	"errors"
	"html"
	"html/template"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/heraldhq/herald/heraldtype"
)

// The helpers the catalogue, user, notification and why views share: a
// form's answer from the API, a list's "next page" link, and the query
// string's filters.

// formResult is what a form shows after the API refused it: the message
// beside each field the API named (<p class="field-error"
// id="error-<field>">), and the code and message above the form.
type formResult struct {
	// Fields maps the API's field name to its message.
	Fields map[string]string
	// Code and Message are the API's answer; empty before a submit.
	Code, Message string
}

// refused reports whether err is the API refusing the form's input — a
// validation error, or one the operator can act on (a conflict, a name
// not found) — and turns it into a formResult. Any other error (the
// store, a bug) is for fail to show.
func refused(err error) (formResult, bool) {
	var he *heraldtype.Error
	if !errors.As(err, &he) {
		return formResult{}, false
	}
	switch he.Code {
	case heraldtype.EINVALID, heraldtype.ECONFLICT:
	default:
		return formResult{}, false
	}
	fr := formResult{Fields: map[string]string{}, Code: he.Code, Message: he.Message}
	if he.Field != "" {
		fr.Fields[he.Field] = he.Message
	}
	return fr, true
}

// pageRefusal sorts a page's error: nil answers 200; a refusal of the
// page's own filter or form (refused) is shown on the page with its status;
// anything else is returned for the error page.
func pageRefusal(err error) (*formResult, int, error) {
	if err == nil {
		return nil, http.StatusOK, nil
	}
	fr, ok := refused(err)
	if !ok {
		return nil, 0, err
	}
	return &fr, refusedStatus(fr), nil
}

// refusedStatus is the status of a page that re-renders a refused form.
func refusedStatus(fr formResult) int { return statusOf(fr.Code) }

// fieldError is the console's own refusal of a form value it must parse
// before the API sees it (a number, a JSON document).
func fieldError(field, format string, args ...any) error {
	return heraldtype.FieldErrorf(field, format, args...)
}

// listLimit is how many rows a list page shows: enough to scan, few
// enough to answer fast on a big table.
const listLimit = 50

// nextLink is the URL of a list's next page: the same filters and the
// cursor the store answered (keyset pagination: no count, no offset).
func nextLink(r *http.Request, cursor string) string {
	if cursor == "" {
		return ""
	}
	q := r.URL.Query()
	q.Set("cursor", cursor)
	q.Del("saved")
	return r.URL.Path + "?" + q.Encode()
}

// query trims the query string's value of name.
func query(r *http.Request, name string) string {
	return strings.TrimSpace(r.URL.Query().Get(name))
}

// postValue trims the posted form's value of name.
func postValue(r *http.Request, name string) string {
	return strings.TrimSpace(r.PostForm.Get(name))
}

// pathLink escapes one path segment of a console link.
func pathLink(prefix, segment string) string { return prefix + url.PathEscape(segment) }

// seeOther ends a successful action: POST-redirect-GET, so a reload does
// not repeat it.
func seeOther(w http.ResponseWriter, r *http.Request, to string) {
	http.Redirect(w, r, to, http.StatusSeeOther)
}

// parseTime reads a filter's time: RFC 3339, or a date (midnight UTC).
func parseTime(field, v string) (time.Time, error) {
	if v == "" {
		return time.Time{}, nil
	}
	if t, err := time.Parse(time.RFC3339, v); err == nil {
		return t, nil
	}
	if t, err := time.Parse("2006-01-02T15:04", v); err == nil {
		return t, nil
	}
	if t, err := time.Parse(time.DateOnly, v); err == nil {
		return t, nil
	}
	return time.Time{}, fieldError(field, "%q is not a time such as 2026-01-31 or 2026-01-31T08:00:00Z", v)
}

// parseInt reads a form's whole number; "" is 0.
func parseInt(field, v string) (int, error) {
	if v == "" {
		return 0, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil {
		return 0, fieldError(field, "%q is not a whole number", v)
	}
	return n, nil
}

// splitList reads a comma- or space-separated list of a form field.
func splitList(v string) []string {
	return strings.FieldsFunc(v, func(r rune) bool { return r == ',' || r == ' ' })
}

// latency writes an attempt's provider latency: 42 ms, 1.3 s.
func latency(d time.Duration) string {
	if d <= 0 {
		return "—"
	}
	if d < time.Millisecond {
		return "< 1 ms"
	}
	if d < time.Second {
		return strconv.FormatInt(d.Milliseconds(), 10) + " ms"
	}
	return strconv.FormatFloat(d.Seconds(), 'f', 1, 64) + " s"
}

// refusalHTML is the API's code and message above a refused form (or a
// list whose filter was refused); nothing before a submit.
func refusalHTML(fr *formResult) template.HTML {
	if fr == nil || fr.Code == "" {
		return ""
	}
	return template.HTML(`<p id="form-error" class="alert" role="alert" data-code="` + html.EscapeString(fr.Code) + `"><code>` +
		html.EscapeString(fr.Code) + `</code>: ` + html.EscapeString(fr.Message) + `</p>`)
}

// fieldErrHTML is the API's message beside the field it named.
func fieldErrHTML(fr *formResult, field string) template.HTML {
	if fr == nil || fr.Fields[field] == "" {
		return ""
	}
	return template.HTML(`<p class="field-error" id="error-` + html.EscapeString(field) + `">` + html.EscapeString(fr.Fields[field]) + `</p>`)
}

// viewFuncs are the views' template helpers, added to the console's set
// before any page is parsed (New parses them); a name the console already
// has is a mistake caught at start.
var viewFuncs = template.FuncMap{
	"latency":     latency,
	"pathesc":     url.PathEscape,
	"queryesc":    url.QueryEscape,
	"list":        func(v ...string) []string { return v },
	"refusal":     refusalHTML,
	"fielderr":    fieldErrHTML,
	"describedby": describedBy,
	"whenp": func(t *time.Time) string {
		if t == nil {
			return "—"
		}
		return when(*t)
	},
	"join":          joinList,
	"webhookEvents": webhookEvents,
	"webhookState":  webhookState,
}

func init() {
	for name, f := range viewFuncs {
		if _, dup := funcs[name]; dup {
			panic("console: template helper " + name + " is defined twice")
		}
		funcs[name] = f
	}
}

// describedBy ties a field to the API's message about it.
func describedBy(fr *formResult, field string) template.HTMLAttr {
	if fr == nil || fr.Fields[field] == "" {
		return ""
	}
	return template.HTMLAttr(`aria-describedby="error-` + html.EscapeString(field) + `" aria-invalid="true"`)
}

// joinList writes a list of channels or names: "push, email".
func joinList(v any) string {
	switch l := v.(type) {
	case []heraldtype.Channel:
		s := make([]string, len(l))
		for i, c := range l {
			s[i] = string(c)
		}
		return strings.Join(s, ", ")
	case []string:
		return strings.Join(l, ", ")
	}
	return ""
}

func itoa(n int) string { return strconv.Itoa(n) }

func queryEscape(s string) string { return url.QueryEscape(s) }

func asErr[T error](err error, target *T) bool { return errors.As(err, target) }
