package heraldclient

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/url"
	"strings"
)

// Request is an operation called by its path (Do).
type Request struct {
	// Method is the HTTP method ("GET", "POST", …).
	Method string
	// Path is the escaped path below the base URL, starting with a slash
	// ("/v1/users/u1"); escape ids with url.PathEscape.
	Path string
	// Query is the query string.
	Query url.Values
	// Header is sent as is (an Idempotency-Key, for example).
	Header http.Header
	// Body is sent as JSON when not nil: a json.RawMessage as written,
	// any other value encoded.
	Body any
}

// Response is what the server answered to Do.
type Response struct {
	StatusCode int
	Header     http.Header
}

// Do calls an operation by its path, with the Client's credential,
// retries and errors, and decodes a JSON answer into out when out is not
// nil: for an operation this package has no method for yet, or a body the
// caller already holds as JSON (a file a person wrote, which the server
// then checks field by field). It is retried as the method's call would
// be: GET, PUT and DELETE, and a POST with an Idempotency-Key header.
func (c *Client) Do(ctx context.Context, r Request, out any) (Response, error) {
	if r.Method == "" || !strings.HasPrefix(r.Path, "/") {
		return Response{}, errors.New("heraldclient: Do needs a method and a path starting with /")
	}
	if raw, ok := r.Body.(json.RawMessage); ok && !json.Valid(raw) {
		return Response{}, errors.New("heraldclient: Do: the body is not valid JSON")
	}
	res, err := c.do(ctx, call{method: r.Method, path: r.Path, query: r.Query, header: r.Header, body: r.Body, out: out,
		safe: r.Method == http.MethodPost && r.Header.Get("Idempotency-Key") != ""})
	return Response{StatusCode: res.status, Header: res.header}, err
}
