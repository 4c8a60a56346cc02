// Package console is Herald's operator console: server-rendered HTML
// pages over the public *herald.Client, mounted by httpapi at /console/.
//
// Like httpapi it is a transport: a page reads through the Client, an
// action calls the same Client method the matching API route calls, and
// it is allowed only when the session's scopes grant the scope that route
// needs (auth.Grants). There is no SQL, no store and no provider here.
//
// The pages are html/template files and a stylesheet and a small script,
// all embedded (go:embed), so the one binary serves them and no Node is
// needed to build it. Every page works without the script; the script
// only refreshes the regions marked data-live in place.
//
// How to add a view (ARCHITECTURE.md, "The console"):
//
//  1. a template templates/<name>.html that defines "content" (and
//     "live" for a region the script refreshes), rendered with
//     c.render(w, r, http.StatusOK, "<name>", page{Title: …, Data: …});
//  2. its handler registered in routes with c.view (GET, a read scope) or
//     c.action (POST, the scope of the API route it stands for; the CSRF
//     token is checked before the handler runs);
//  3. its link in nav, when it is a view of its own.
package console

import (
	"context"
	"errors"
	"fmt"
	"html/template"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/heraldhq/herald"
	"github.com/heraldhq/herald/auth"
	"github.com/heraldhq/herald/heraldtype"
)

// Prefix is where httpapi mounts the console.
const Prefix = "/console/"

// DefaultRefresh is how often a live region refreshes unless
// Config.Refresh says otherwise.
const DefaultRefresh = 5 * time.Second

// Config configures the console.
type Config struct {
	// Client serves every page. Required.
	Client *herald.Client
	// Sessions opens and checks sign-in sessions. Required unless Dev.
	Sessions Sessions
	// Dev opens the console without sign-in as admin (serve --dev, which
	// listens on loopback only). State changes still need the CSRF token.
	Dev bool
	// Refresh is how often the live regions (the overview) refresh in the
	// browser. Default DefaultRefresh; at least one second.
	Refresh time.Duration
	// KafkaLag reports the Kafka intake's lag in records, summed over the
	// partitions this instance holds; false when it holds none yet. Nil
	// when the process does not read Kafka: the overview says so.
	KafkaLag func(ctx context.Context) (int64, bool)
	// Logger receives the details of errors a page shows only as
	// "unavailable" or "internal". Default slog.Default().
	Logger *slog.Logger
	// SecureCookies marks every cookie Secure even on a request that did
	// not come over TLS: behind a proxy that ends TLS, the browser's
	// connection is https while Herald's is not. False: Secure exactly
	// when the request came over TLS.
	SecureCookies bool
}

// Console is the operator console as an http.Handler.
type Console struct {
	client   *herald.Client
	sessions Sessions
	dev      bool
	devSess  Session
	refresh  time.Duration
	kafka    func(ctx context.Context) (int64, bool)
	log      *slog.Logger
	secure   bool // every cookie Secure (Config.SecureCookies)
	mux      *http.ServeMux
	pages    map[string]*template.Template
}

var _ http.Handler = (*Console)(nil)

// New validates cfg and builds the console.
func New(cfg Config) (*Console, error) {
	if cfg.Client == nil {
		return nil, errors.New("console: Config.Client is required")
	}
	if cfg.Sessions == nil && !cfg.Dev {
		return nil, errors.New("console: Config.Sessions is required (Dev is for local development only)")
	}
	if cfg.Refresh == 0 {
		cfg.Refresh = DefaultRefresh
	}
	if cfg.Refresh < time.Second {
		return nil, fmt.Errorf("console: Refresh %s must be at least 1s", cfg.Refresh)
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	pages, err := parsePages()
	if err != nil {
		return nil, err
	}
	c := &Console{client: cfg.Client, sessions: cfg.Sessions, dev: cfg.Dev, refresh: cfg.Refresh,
		kafka: cfg.KafkaLag, log: cfg.Logger, secure: cfg.SecureCookies, mux: http.NewServeMux(), pages: pages}
	if cfg.Dev {
		c.devSess = devSession()
	}
	c.routes()
	return c, nil
}

// routes registers every page and action with the scope it needs.
func (c *Console) routes() {
	c.mux.HandleFunc("GET /console/{$}", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/console/overview", http.StatusSeeOther)
	})
	c.mux.HandleFunc("GET /console/assets/{file}", c.asset)
	c.mux.HandleFunc("GET /console/sign-in", c.signInPage)
	c.mux.HandleFunc("POST /console/sign-in", c.signIn)
	c.mux.HandleFunc("POST /console/sign-out", c.signOut)
	c.view("GET /console/overview", auth.ScopeDeliveriesRead, c.overview)
	// The dead-letters view checks the read scope of the kind it lists
	// (renderDead); the replays need the scope of their API routes.
	c.view("GET /console/dead-letters", auth.ScopeDeliveriesRead, c.deadLetters)
	c.action("POST /console/dead-letters/deliveries/{id}/replay", auth.ScopeDeliveriesAdmin, c.replayDelivery)
	c.action("POST /console/dead-letters/events/{id}/replay", auth.ScopeEventsWrite, c.replayDeadEvent)
	c.action("POST /console/dead-letters/replay", auth.ScopeDeliveriesRead, c.bulkReplay)
	c.viewRoutes()
	c.mux.HandleFunc("/console/", func(w http.ResponseWriter, r *http.Request) {
		c.fail(w, r, Session{}, heraldtype.Errorf(heraldtype.ENOTFOUND, "no such page"))
	})
}

// navItem is one link of the header's navigation.
type navItem struct {
	Path, Label string
}

// nav lists the views, in the header's order. A new view adds its link.
var nav = []navItem{
	{"/console/overview", "Overview"},
	{"/console/dead-letters", "Dead letters"},
	{"/console/notifications", "Notifications"},
	{"/console/why", "Why not delivered"},
	{"/console/users", "Users"},
	{"/console/types", "Types"},
	{"/console/rules", "Rules"},
	{"/console/reminders", "Reminders"},
	{"/console/digests", "Digests"},
	{"/console/campaigns", "Campaigns"},
	{"/console/engagement", "Engagement"},
	{"/console/webhooks", "Webhooks"},
}

// ServeHTTP sets the security headers every console answer carries and
// routes the request.
func (c *Console) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	// No inline script and no inline style: the script and the stylesheet
	// are files of the console's own; the CSRF token a script needs is in
	// a meta tag. Inline SVG charts use presentation attributes only.
	h.Set("Content-Security-Policy", "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "+
		"connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'; object-src 'none'")
	h.Set("X-Frame-Options", "DENY")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "same-origin")
	c.mux.ServeHTTP(w, r)
}

// handler is a console page or action: it writes the answer or returns
// an error for fail, which renders it as the error page.
type handler func(w http.ResponseWriter, r *http.Request, s Session) error

// view registers a page: a signed-in session whose scopes grant need.
// Without a session the browser is sent to sign in and brought back.
func (c *Console) view(pattern string, need auth.Scope, h handler) {
	c.mux.HandleFunc(pattern, func(w http.ResponseWriter, r *http.Request) {
		s, ok := c.session(w, r)
		if !ok {
			return
		}
		if !s.Can(need) {
			c.fail(w, r, s, denied(need))
			return
		}
		if err := h(w, r, s); err != nil {
			c.fail(w, r, s, err)
		}
	})
}

// action registers a state change: a signed-in session, a valid CSRF
// token (checked first, so a forged request learns nothing else), and
// scopes that grant need — the scope of the API route the action stands
// for. A handler may check a stricter scope of its own (bulk replay asks
// for the one of the kind it replays).
func (c *Console) action(pattern string, need auth.Scope, h handler) {
	c.mux.HandleFunc(pattern, func(w http.ResponseWriter, r *http.Request) {
		s, ok := c.session(w, r)
		if !ok {
			return
		}
		if !c.csrfValid(r, s) {
			c.fail(w, r, s, errCSRF)
			return
		}
		if !s.Can(need) {
			c.fail(w, r, s, denied(need))
			return
		}
		if err := h(w, r, s); err != nil {
			c.fail(w, r, s, err)
		}
	})
}

// denied is the error of an action or page the session's scopes do not
// allow.
func denied(need auth.Scope) error {
	return heraldtype.Errorf(heraldtype.EPERMISSIONDENIED, "this needs an API key with the %s scope", need)
}

// session finds the request's session, or answers: a browser without one
// is sent to sign in (303, with the page to come back to).
func (c *Console) session(w http.ResponseWriter, r *http.Request) (Session, bool) {
	if c.dev {
		return c.devSess, true
	}
	ck, err := r.Cookie(cookieName)
	if err == nil && ck.Value != "" {
		s, err := c.sessions.Check(r.Context(), ck.Value)
		if err == nil {
			return s, true
		}
		if heraldtype.ErrorCode(err) != heraldtype.EUNAUTHENTICATED {
			c.fail(w, r, Session{}, err)
			return Session{}, false
		}
		c.clearCookie(w, r)
	}
	next := r.URL.Path
	if r.Method == http.MethodGet && r.URL.RawQuery != "" {
		next += "?" + stripFragment(r.URL.Query()).Encode()
	}
	http.Redirect(w, r, "/console/sign-in?next="+url.QueryEscape(next), http.StatusSeeOther)
	return Session{}, false
}

// stripFragment drops the live refresh's parameter from a page to come
// back to after sign-in: the browser should come back to the whole page.
func stripFragment(q url.Values) url.Values {
	q.Del("fragment")
	return q
}

// safeNext is the page to go to after sign-in: a console path, never
// another site ("//evil.example" or "/\evil.example" would leave it).
func safeNext(next string) string {
	if !strings.HasPrefix(next, Prefix) || strings.ContainsAny(next, "\\\r\n") || strings.HasPrefix(next, "//") {
		return "/console/overview"
	}
	return next
}
