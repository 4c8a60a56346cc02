package console

import (
	"bytes"
	"embed"
	"errors"
	"fmt"
	"html/template"
	"io/fs"
	"log/slog"
	"net/http"
	"path"
	"strings"
	"time"

	"github.com/heraldhq/herald/heraldtype"
	"github.com/heraldhq/herald/httpapi"
)

//go:embed templates/*.html
var templateFS embed.FS

// page is what every template gets: the layout's parts and the view's
// own Data.
type page struct {
	// Title is the view's name: the <title> and the <h1>.
	Title string
	// Path is the view's path, to mark its link in the navigation.
	Path string
	// Session is who is signed in; templates ask .Session.Can "scope"
	// before they show an action.
	Session Session
	// Dev says the console runs without sign-in.
	Dev bool
	// Refresh is the live regions' refresh interval in seconds.
	Refresh int
	// Now is when the page was rendered (data-refreshed-at).
	Now time.Time
	// Nav is the header's navigation.
	Nav []navItem
	// Error is shown by the error page.
	Error *pageError
	// Data is the view's own.
	Data any
}

// pageError is an error as the error page shows it.
type pageError struct {
	Code, Message string
}

// parsePages parses each templates/<name>.html with the layout into a
// set of its own, so every page defines "content" without a clash.
func parsePages() (map[string]*template.Template, error) {
	layout, err := fs.ReadFile(templateFS, "templates/layout.html")
	if err != nil {
		return nil, err
	}
	names, err := fs.Glob(templateFS, "templates/*.html")
	if err != nil {
		return nil, err
	}
	pages := map[string]*template.Template{}
	for _, n := range names {
		name := strings.TrimSuffix(path.Base(n), ".html")
		if name == "layout" {
			continue
		}
		t, err := template.New("layout").Funcs(funcs).Parse(string(layout))
		if err != nil {
			return nil, fmt.Errorf("console: layout: %w", err)
		}
		if _, err := t.ParseFS(templateFS, n); err != nil {
			return nil, fmt.Errorf("console: %s: %w", n, err)
		}
		pages[name] = t
	}
	return pages, nil
}

// render writes the page name with the layout. It renders into a buffer
// first, so a template error is a clean error page, not half a page.
func (c *Console) render(w http.ResponseWriter, r *http.Request, status int, name string, p page) {
	c.write(w, r, status, name, "layout", p)
}

// renderFragment writes only the template block of page name (a live
// region's "live"), for the script's refresh.
func (c *Console) renderFragment(w http.ResponseWriter, r *http.Request, name, block string, p page) {
	c.write(w, r, http.StatusOK, name, block, p)
}

func (c *Console) write(w http.ResponseWriter, r *http.Request, status int, name, block string, p page) {
	t := c.pages[name]
	if t == nil {
		c.log.LogAttrs(r.Context(), slog.LevelError, "console: no such template", slog.String("template", name))
		http.Error(w, "internal error", http.StatusInternalServerError)
		return
	}
	p.Dev, p.Nav, p.Now = c.dev, nav, time.Now().UTC()
	p.Refresh = int(c.refresh / time.Second)
	if p.Path == "" {
		p.Path = r.URL.Path
	}
	var buf bytes.Buffer
	if err := t.ExecuteTemplate(&buf, block, p); err != nil {
		c.log.LogAttrs(r.Context(), slog.LevelError, "console: template failed", slog.String("template", name), slog.String("err", err.Error()))
		http.Error(w, "internal error", http.StatusInternalServerError)
		return
	}
	h := w.Header()
	h.Set("Content-Type", "text/html; charset=utf-8")
	h.Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_, _ = w.Write(buf.Bytes())
}

// fail renders err as the error page with the status its code maps to.
// An error without a code, or an internal one, is logged and shown
// without its details.
func (c *Console) fail(w http.ResponseWriter, r *http.Request, s Session, err error) {
	code := heraldtype.ErrorCode(err)
	msg := heraldtype.ErrorMessage(err)
	var he *heraldtype.Error
	if !errors.As(err, &he) || code == heraldtype.EINTERNAL {
		c.log.LogAttrs(r.Context(), slog.LevelError, "console: page failed", slog.String("path", r.URL.Path), slog.String("err", err.Error()))
		code, msg = heraldtype.EINTERNAL, "something went wrong; the server log has the details"
	}
	if r.Context().Err() != nil {
		code, msg = heraldtype.EUNAVAILABLE, "the store did not answer in time; try again"
	}
	status := statusOf(code)
	if status == http.StatusServiceUnavailable {
		w.Header().Set("Retry-After", "5")
	}
	c.render(w, r, status, "error", page{Title: titleOf(status), Session: s, Error: &pageError{Code: code, Message: msg}})
}

// statusOf maps an error code to the page's status: the API's one
// code→status map (httpapi.StatusForCode), plus the console's own refused
// CSRF token, so a page and the route it stands for answer alike.
func statusOf(code string) int {
	if code == ECSRFInvalid {
		return http.StatusForbidden
	}
	return httpapi.StatusForCode(code)
}

func titleOf(status int) string {
	switch status {
	case http.StatusBadRequest:
		return "Check the form"
	case http.StatusNotFound:
		return "Not found"
	case http.StatusConflict:
		return "Not possible now"
	case http.StatusForbidden:
		return "Not allowed"
	case http.StatusServiceUnavailable:
		return "Unavailable"
	}
	return "Error"
}
