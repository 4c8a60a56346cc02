package console_test

import (
	"context"
	"encoding/xml"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/heraldhq/herald"
	"github.com/heraldhq/herald/auth"
	"github.com/heraldhq/herald/console"
	"github.com/heraldhq/herald/heraldtype"
	"github.com/heraldhq/herald/store"
	"github.com/heraldhq/herald/store/sqlite"
)

// fakeSessions is an in-memory console.Sessions: keys are "key-admin"
// (admin) and "key-console" (read only); anything else is refused.
type fakeSessions struct {
	mu       sync.Mutex
	sessions map[string]console.Session
	n        int
}

var _ console.Sessions = (*fakeSessions)(nil)

func newFakeSessions() *fakeSessions { return &fakeSessions{sessions: map[string]console.Session{}} }

// consoleScopes is what the read-only console scope grants: every read.
var consoleScopes = []auth.Scope{auth.ScopeDeliveriesRead, auth.ScopeEventsRead, auth.ScopeNotificationsRead,
	auth.ScopeUsersRead, auth.ScopeRulesRead, auth.ScopeRemindersRead, auth.ScopeCampaignsRead, auth.ScopeWebhooksRead}

func (f *fakeSessions) Create(_ context.Context, key string) (console.Session, string, error) {
	var scopes []auth.Scope
	switch key {
	case "key-admin":
		scopes = []auth.Scope{auth.ScopeAdmin}
	case "key-console":
		scopes = consoleScopes
	case "key-users":
		return console.Session{}, "", heraldtype.Errorf(heraldtype.EPERMISSIONDENIED, "no console scope")
	default:
		return console.Session{}, "", heraldtype.Errorf(heraldtype.EUNAUTHENTICATED, "unknown key")
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.n++
	token := "tok-" + key + "-" + string(rune('a'+f.n))
	s := console.Session{ID: token, KeyID: key, Scopes: scopes, CSRF: "csrf-" + token, ExpiresAt: time.Now().Add(time.Hour)}
	f.sessions[token] = s
	return s, token, nil
}

func (f *fakeSessions) Check(_ context.Context, token string) (console.Session, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	s, ok := f.sessions[token]
	if !ok || time.Now().After(s.ExpiresAt) {
		return console.Session{}, heraldtype.Errorf(heraldtype.EUNAUTHENTICATED, "no session")
	}
	return s, nil
}

func (f *fakeSessions) Revoke(_ context.Context, token string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	delete(f.sessions, token)
	return nil
}

// expire ends every session, as idle expiry would.
func (f *fakeSessions) expire() {
	f.mu.Lock()
	defer f.mu.Unlock()
	for k, s := range f.sessions {
		s.ExpiresAt = time.Now().Add(-time.Second)
		f.sessions[k] = s
	}
}

// failingProvider fails every send permanently with code BAD_TOKEN
// until healed.
type failingProvider struct {
	mu     sync.Mutex
	healed bool
}

func (p *failingProvider) Send(_ context.Context, m *heraldtype.Message) (string, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.healed {
		return "msg-" + m.Key, nil
	}
	return "", &heraldtype.SendError{Class: heraldtype.ClassPermanent, Code: "BAD_TOKEN", Message: "refused"}
}

func (p *failingProvider) heal() { p.mu.Lock(); p.healed = true; p.mu.Unlock() }

// env is a console over a real Client on a temp-file SQLite store,
// served by httptest, with a browser-like client (cookies, no redirects
// followed unless asked).
type env struct {
	t        *testing.T
	client   *herald.Client
	store    store.Store
	provider *failingProvider
	sessions *fakeSessions
	srv      *httptest.Server
	http     *http.Client
}

type envOptions struct {
	dev     bool
	workers bool
	secure  bool // console.Config.SecureCookies
	// historyScan is the Client's Limits.HistoryScan (0: the default).
	historyScan int
	// calloutAllow is the Client's callout.allow (outbound webhooks may
	// reach these networks).
	calloutAllow []netip.Prefix
}

func newEnv(t *testing.T, o envOptions) *env {
	t.Helper()
	ctx := context.Background()
	s, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "h.db"), sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	if err := s.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	p := &failingProvider{}
	logger := slog.New(slog.NewTextHandler(io.Discard, nil))
	c, err := herald.NewClient(herald.Config{Store: s, Providers: map[string]herald.Provider{"fcm": p},
		DisableWorkers: !o.workers, MaintenanceInterval: -1, Logger: logger, Limits: herald.Limits{HistoryScan: o.historyScan},
		Callout: herald.CalloutConfig{Allow: o.calloutAllow},
		Worker:  herald.WorkerConfig{PollInterval: 20 * time.Millisecond, ReapInterval: time.Second, RollupInterval: 20 * time.Millisecond}})
	if err != nil {
		t.Fatal(err)
	}
	if o.workers {
		if err := c.Start(ctx); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			stopCtx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			_ = c.Stop(stopCtx)
		})
	}
	fs := newFakeSessions()
	cfg := console.Config{Client: c, Dev: o.dev, Logger: logger, SecureCookies: o.secure}
	if !o.dev {
		cfg.Sessions = fs
	}
	h, err := console.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	jar, _ := cookiejar.New(nil)
	hc := &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	return &env{t: t, client: c, store: s, provider: p, sessions: fs, srv: srv, http: hc}
}

// page is an answer.
type page struct {
	status int
	header http.Header
	body   string
}

func (e *env) get(path string) page {
	e.t.Helper()
	return e.send("GET", path, nil)
}

func (e *env) post(path string, form url.Values) page {
	e.t.Helper()
	return e.send("POST", path, form)
}

func (e *env) send(method, path string, form url.Values) page {
	e.t.Helper()
	var body io.Reader
	if form != nil {
		body = strings.NewReader(form.Encode())
	}
	req, err := http.NewRequest(method, e.srv.URL+path, body)
	if err != nil {
		e.t.Fatal(err)
	}
	if form != nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	res, err := e.http.Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return page{status: res.StatusCode, header: res.Header, body: string(b)}
}

// signIn signs in with key through the form, as a browser does.
func (e *env) signIn(key string) page {
	e.t.Helper()
	form := e.get("/console/sign-in")
	return e.post("/console/sign-in", url.Values{"api_key": {key}, "next": {"/console/overview"}, "csrf": {form.hidden(e.t, "csrf")}})
}

var (
	hiddenRE = regexp.MustCompile(`<input type="hidden" name="([a-z_]+)" value="([^"]*)"`)
	metaRE   = regexp.MustCompile(`<meta name="csrf-token" content="([^"]*)"`)
)

// hidden is the first hidden field name's value on the page.
func (p page) hidden(t *testing.T, name string) string {
	t.Helper()
	for _, m := range hiddenRE.FindAllStringSubmatch(p.body, -1) {
		if m[1] == name {
			return m[2]
		}
	}
	t.Fatalf("no hidden %s on the page:\n%s", name, p.body)
	return ""
}

// csrf is the page's meta CSRF token.
func (p page) csrf(t *testing.T) string {
	t.Helper()
	m := metaRE.FindStringSubmatch(p.body)
	if m == nil || m[1] == "" {
		t.Fatalf("no csrf-token meta on the page:\n%s", p.body)
	}
	return m[1]
}

// expect checks the status.
func (p page) expect(t *testing.T, status int) page {
	t.Helper()
	if p.status != status {
		t.Fatalf("status %d, want %d:\n%s", p.status, status, p.body)
	}
	return p
}

// wellFormed parses the page as HTML (the parser in HTML mode: void
// elements auto-closed, HTML entities known) and fails on a tag left open
// or closed out of order.
func wellFormed(t *testing.T, body string) {
	t.Helper()
	d := xml.NewDecoder(strings.NewReader(strings.TrimPrefix(body, "<!DOCTYPE html>")))
	d.Strict = false
	d.AutoClose = xml.HTMLAutoClose
	d.Entity = xml.HTMLEntity
	for {
		_, err := d.Token()
		if errors.Is(err, io.EOF) {
			return
		}
		if err != nil {
			t.Fatalf("the page is not well-formed HTML: %v\n%s", err, body)
		}
	}
}
