package outbound

import (
	"cmp"
	"context"
	"errors"
	"log/slog"
	"net/http"
	"net/netip"
	"net/url"

	"github.com/heraldhq/herald/internal/redact"
)

// Codes of an *Error, stable for callers to match on.
const (
	// CodeRefused: Herald did not make the call — the address is not
	// public and not allowed, or the endpoint redirected.
	CodeRefused = "refused"
	// CodeFailed: the call was made and brought no HTTP answer (the
	// connection failed or was cut, the time ran out, what answered did
	// not speak HTTP). Which of these it was is only in the log.
	CodeFailed = "failed"
)

// Error is a call that brought no answer. Its text names the method, the
// URL with its query redacted, and the code with a reason that says
// nothing about the network: no resolved address, no port state, no
// transport error. Unwrap reaches the transport's error for a caller's
// errors.Is (a cancelled context); never show it to an API caller.
type Error struct {
	Code   string
	Method string
	URL    string // redacted
	// Reason says why in words that name nothing of the network.
	Reason string
	err    error
}

func (e *Error) Error() string {
	return e.Method + " " + e.URL + ": " + e.Code + " (" + e.Reason + ")"
}

// Unwrap returns the transport's error, for errors.Is and the log only.
func (e *Error) Unwrap() error { return e.err }

// Config configures a Client.
type Config struct {
	// Allow lists the networks besides the public ones the Client may
	// dial (callout.allow): an operator's internal endpoints. Empty: only
	// public addresses.
	Allow []netip.Prefix
	// Logger gets the detail of every failed call (the URL redacted);
	// slog.Default() if nil.
	Logger *slog.Logger
	// MaxIdleConnsPerHost is how many connections to one host the pool
	// keeps open between calls: set it to how many calls to one host the
	// caller makes at once, or every call past the pool's size dials and
	// closes a connection of its own. 0: DefaultMaxIdleConnsPerHost.
	MaxIdleConnsPerHost int
}

// DefaultMaxIdleConnsPerHost is Config.MaxIdleConnsPerHost's default.
// Go's own default of 2 made 100 webhook sends at once to one receiver
// dial and close 98 connections per round (issue 35 item 5's profile:
// a fifth of the process's CPU went to connecting and closing).
const DefaultMaxIdleConnsPerHost = 32

// Client makes guarded calls. Safe for concurrent use; one per process
// shares its connection pool.
type Client struct {
	guard *Guard
	http  *http.Client
	log   *slog.Logger
}

// New returns a Client whose transport dials through a Guard of
// cfg.Allow and follows no redirect. Its calls have no timeout of their
// own: each request's context bounds it.
func New(cfg Config) *Client {
	g := NewGuard(cfg.Allow)
	log := cfg.Logger
	if log == nil {
		log = slog.Default()
	}
	tr := g.Transport()
	tr.MaxIdleConnsPerHost = cmp.Or(cfg.MaxIdleConnsPerHost, DefaultMaxIdleConnsPerHost)
	tr.MaxIdleConns = max(tr.MaxIdleConns, tr.MaxIdleConnsPerHost)
	return &Client{guard: g, http: &http.Client{Transport: tr, CheckRedirect: NoRedirect}, log: log}
}

// Guard is the Client's guard, for checking a URL when it is accepted.
func (c *Client) Guard() *Guard { return c.guard }

// CheckURL checks what of u the guard can judge before any call: its
// host (Guard.CheckHost).
func (c *Client) CheckURL(u *url.URL) error { return c.guard.CheckHost(u.Hostname()) }

// Do sends req. A call that brings no HTTP answer is an *Error (refused
// or failed) and its detail is logged; any answer, whatever its status, is
// returned for the caller to judge. A redirect is refused, never
// followed.
func (c *Client) Do(req *http.Request) (*http.Response, error) {
	resp, err := c.http.Do(req)
	if err == nil {
		return resp, nil
	}
	e := &Error{Code: CodeFailed, Method: req.Method, URL: redact.URL(req.URL.String()),
		Reason: "no answer; the reason is in Herald's log", err: err}
	switch {
	case errors.Is(err, errRedirect):
		e.Code, e.Reason = CodeRefused, "the endpoint redirected; redirects are not followed"
	case errors.Is(err, ErrRefused):
		e.Code, e.Reason = CodeRefused, "the address is not public and not in callout.allow"
	}
	c.LogFailure(req, e.Code, err)
	return nil, e
}

// LogFailure logs the detail of a call's failure — Do's, or one while
// its answer was read — with the URL's query redacted.
func (c *Client) LogFailure(req *http.Request, code string, err error) {
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err // its URL would show the query
	}
	level := slog.LevelWarn
	if errors.Is(err, context.Canceled) {
		level = slog.LevelDebug // Herald stopping, not the endpoint failing
	}
	c.log.Log(req.Context(), level, "outbound: call "+code, "method", req.Method, "url", redact.URL(req.URL.String()), "err", err)
}
