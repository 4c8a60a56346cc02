package heraldclient

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// DefaultUserAgent is the User-Agent a Client sends unless WithUserAgent
// names another.
const DefaultUserAgent = "heraldclient-go"

// maxResponseBytes bounds a response body the client reads: the largest
// page the API answers is far below it.
const maxResponseBytes = 64 << 20

// Client calls a remote Herald's HTTP API. It is safe for concurrent use;
// build one per server and credential and keep it.
type Client struct {
	base      *url.URL
	token     string
	http      *http.Client
	retry     RetryPolicy
	userAgent string
	// sleep waits d or until ctx ends.
	sleep func(ctx context.Context, d time.Duration) error
}

// Option configures a Client.
type Option func(*Client) error

// WithAPIKey authenticates every call with a server API key
// ("hk_…", sent as Authorization: Bearer). Its scopes decide what the
// calls may do.
func WithAPIKey(key string) Option {
	return func(c *Client) error {
		if strings.ContainsAny(key, "\r\n") {
			return errors.New("heraldclient: the API key contains a line break")
		}
		c.token = key
		return nil
	}
}

// WithUserToken authenticates every call with a user token (a JWT the
// app's backend signed for one user, sent as Authorization: Bearer): what
// an app calls with for its own user — RegisterOwnDevice,
// HeartbeatOwnDevice, its inbox, its preferences and its notifications.
// It replaces WithAPIKey's key: a Client has one credential.
func WithUserToken(token string) Option { return WithAPIKey(token) }

// WithHTTPClient sends the calls through hc (its Transport, proxies, TLS
// settings). Leave hc.Timeout at zero when the Client reads the inbox
// stream, which lives for as long as it is read; bound calls with their
// context instead.
func WithHTTPClient(hc *http.Client) Option {
	return func(c *Client) error {
		if hc == nil {
			return errors.New("heraldclient: WithHTTPClient: nil *http.Client")
		}
		c.http = hc
		return nil
	}
}

// WithRetry replaces DefaultRetryPolicy; RetryPolicy{Attempts: 1} turns
// retries off.
func WithRetry(p RetryPolicy) Option {
	return func(c *Client) error {
		if p.Attempts < 1 || p.Attempts > 1 && (p.BaseBackoff <= 0 || p.MaxBackoff < p.BaseBackoff) {
			return fmt.Errorf("heraldclient: WithRetry: need Attempts >= 1 and, to retry, 0 < BaseBackoff <= MaxBackoff; got %+v", p)
		}
		c.retry = p
		return nil
	}
}

// WithUserAgent sets the User-Agent header of every call.
func WithUserAgent(ua string) Option {
	return func(c *Client) error {
		if strings.ContainsAny(ua, "\r\n") {
			return errors.New("heraldclient: the user agent contains a line break")
		}
		c.userAgent = ua
		return nil
	}
}

// New returns a Client for the Herald at baseURL (for example
// "https://herald.example.com" or "http://127.0.0.1:8080"; a path prefix
// is kept, for a Herald behind a proxy under one).
func New(baseURL string, opts ...Option) (*Client, error) {
	u, err := url.Parse(baseURL)
	if err != nil {
		return nil, fmt.Errorf("heraldclient: base URL: %w", err)
	}
	if u.Scheme != "http" && u.Scheme != "https" || u.Host == "" {
		return nil, fmt.Errorf("heraldclient: base URL %q must be an absolute http or https URL", baseURL)
	}
	if u.RawQuery != "" || u.Fragment != "" {
		return nil, fmt.Errorf("heraldclient: base URL %q must not have a query or a fragment", baseURL)
	}
	u.Path = strings.TrimRight(u.Path, "/")
	u.RawPath = ""
	c := &Client{base: u, http: &http.Client{}, retry: DefaultRetryPolicy, userAgent: DefaultUserAgent, sleep: sleepCtx}
	for _, o := range opts {
		if err := o(c); err != nil {
			return nil, err
		}
	}
	return c, nil
}

// call is one operation: its request and where its answer goes.
type call struct {
	method string
	// path is the escaped path below the base URL ("/v1/users/u%2F1").
	path  string
	query url.Values
	// header is sent as is (Idempotency-Key, Last-Event-ID).
	header http.Header
	// body, when not nil, is sent as JSON.
	body any
	// out, when not nil, receives the JSON answer of a 2xx.
	out any
	// safe says the call may be sent again: the method is GET, PUT or
	// DELETE, or the POST carries an Idempotency-Key or is idempotent by
	// its nature (retry.go).
	safe bool
	// noRetry keeps the call to one attempt whatever its method (Ready).
	noRetry bool
}

// result is what the server answered to a call.
type result struct {
	status int
	header http.Header
}

// pathf builds an escaped path from a format of literal segments and %s
// verbs, each argument escaped as one path segment.
func pathf(format string, args ...string) string {
	esc := make([]any, len(args))
	for i, a := range args {
		esc[i] = url.PathEscape(a)
	}
	return fmt.Sprintf(format, esc...)
}

// do sends c, retrying as c.safe and the policy allow, and decodes the
// answer.
func (c *Client) do(ctx context.Context, cl call) (result, error) {
	var body []byte
	if cl.body != nil {
		b, err := json.Marshal(cl.body)
		if err != nil {
			return result{}, fmt.Errorf("heraldclient: encoding the request: %w", err)
		}
		body = b
	}
	if !cl.safe {
		cl.safe = cl.method == http.MethodGet || cl.method == http.MethodPut || cl.method == http.MethodDelete
	}
	attempts := c.retry.Attempts
	if !cl.safe || cl.noRetry {
		attempts = 1
	}
	for n := 1; ; n++ {
		res, raw, err := c.send(ctx, cl, body)
		if err == nil {
			if cl.out != nil && len(bytes.TrimSpace(raw)) > 0 {
				if err := json.Unmarshal(raw, cl.out); err != nil {
					return res, fmt.Errorf("heraldclient: %s %s: decoding the answer: %w", cl.method, cl.path, err)
				}
			}
			return res, nil
		}
		if n >= attempts || !retryable(ctx, err) {
			return res, err
		}
		wait := c.retry.backoff(n, retryAfterOf(err))
		if dl, ok := ctx.Deadline(); ok && time.Now().Add(wait).After(dl) {
			return res, err // the next try would start after the caller's deadline
		}
		if serr := c.sleep(ctx, wait); serr != nil {
			// Both: errors.Is finds the context's end, errors.As the
			// server's last answer.
			return res, fmt.Errorf("heraldclient: %w while waiting to retry after: %w", serr, err)
		}
	}
}

// send makes one attempt: a transport error, an *Error for a status of
// 300 or more, or the body of a 2xx.
func (c *Client) send(ctx context.Context, cl call, body []byte) (result, []byte, error) {
	req, err := c.newRequest(ctx, cl.method, cl.path, cl.query, body)
	if err != nil {
		return result{}, nil, err
	}
	for k, vs := range cl.header {
		req.Header[k] = vs
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return result{}, nil, &transportError{err: err}
	}
	defer resp.Body.Close()
	res := result{status: resp.StatusCode, header: resp.Header}
	raw, err := io.ReadAll(io.LimitReader(resp.Body, maxResponseBytes))
	if err != nil {
		if resp.StatusCode < 300 {
			// The answer was cut: the call may have happened.
			return res, nil, &transportError{err: fmt.Errorf("reading the answer: %w", err)}
		}
		raw = nil
	}
	if resp.StatusCode >= 300 {
		return res, nil, errorFrom(resp, raw)
	}
	return res, raw, nil
}

// newRequest builds a request with the Client's headers.
func (c *Client) newRequest(ctx context.Context, method, path string, query url.Values, body []byte) (*http.Request, error) {
	u := *c.base
	u.RawPath = c.base.EscapedPath() + path
	p, err := url.PathUnescape(u.RawPath)
	if err != nil {
		return nil, fmt.Errorf("heraldclient: path %q: %w", path, err)
	}
	u.Path = p
	if len(query) > 0 {
		u.RawQuery = query.Encode()
	}
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, u.String(), rd)
	if err != nil {
		return nil, fmt.Errorf("heraldclient: %w", err)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	req.Header.Set("Accept", "application/json")
	if c.token != "" {
		req.Header.Set("Authorization", "Bearer "+c.token)
	}
	if c.userAgent != "" {
		req.Header.Set("User-Agent", c.userAgent)
	}
	return req, nil
}

// transportError is a call that got no complete answer: the connection
// failed, or broke before the answer was read.
type transportError struct{ err error }

func (e *transportError) Error() string { return "heraldclient: " + e.err.Error() }
func (e *transportError) Unwrap() error { return e.err }

func sleepCtx(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
