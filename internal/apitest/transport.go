package apitest

import (
	"bytes"
	"io"
	"net/http"
	"testing"
)

// Transport wraps rt (http.DefaultTransport if nil) so that every
// exchange a client makes is checked against the document, for tests
// that talk to a server over the network (a reverse proxy, a Go client).
// A streaming response (SSE) is checked for its status and headers when
// it starts, and passed on unread.
func Transport(t testing.TB, rt http.RoundTripper) http.RoundTripper {
	t.Helper()
	v, err := Default()
	if err != nil {
		t.Fatal(err)
	}
	return v.Transport(t, rt)
}

// Transport is the package-level Transport with this validator.
func (v *Validator) Transport(t testing.TB, rt http.RoundTripper) http.RoundTripper {
	if rt == nil {
		rt = http.DefaultTransport
	}
	return roundTripper{t: t, v: v, rt: rt}
}

type roundTripper struct {
	t  testing.TB
	v  *Validator
	rt http.RoundTripper
}

func (c roundTripper) RoundTrip(req *http.Request) (*http.Response, error) {
	var reqBody []byte
	if req.Body != nil && req.Body != http.NoBody {
		b, err := io.ReadAll(req.Body)
		_ = req.Body.Close()
		if err != nil {
			return nil, err
		}
		reqBody = b
		req = req.Clone(req.Context())
		req.Body = io.NopCloser(bytes.NewReader(b))
		req.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(b)), nil }
	}
	resp, err := c.rt.RoundTrip(req)
	if err != nil {
		return resp, err
	}
	x := Exchange{Request: req, RequestBody: reqBody, Status: resp.StatusCode, Header: resp.Header}
	if isStream(resp.Header) || resp.StatusCode == http.StatusSwitchingProtocols {
		x.Streamed = true
	} else {
		b, err := io.ReadAll(io.LimitReader(resp.Body, maxKept+1))
		_ = resp.Body.Close()
		if err != nil {
			return nil, err
		}
		x.Body = b
		x.Streamed = len(b) > maxKept
		resp.Body = io.NopCloser(bytes.NewReader(b))
	}
	if err := c.v.Check(x); err != nil {
		c.t.Errorf("apitest: %v", err)
	}
	return resp, nil
}
