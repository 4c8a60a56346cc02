package apitest

import (
	"bufio"
	"bytes"
	"io"
	"mime"
	"net"
	"net/http"
	"sync"
	"testing"
)

// maxKept bounds what is kept of a body for validation; a longer one is
// checked for its status and headers only.
const maxKept = 16 << 20

// Handler wraps h so that every exchange it serves is checked against
// the document; a difference is reported with t.Errorf. The request body
// is seen as the handler reads it (a slow or refused body behaves as it
// would without the wrapper), and streaming responses pass through as
// they are written.
func Handler(t testing.TB, h http.Handler) http.Handler {
	t.Helper()
	v, err := Default()
	if err != nil {
		t.Fatal(err)
	}
	return v.Handler(t, h)
}

// Handler is the package-level Handler with this validator.
func (v *Validator) Handler(t testing.TB, h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var reqBody capBuffer
		if r.Body != nil {
			r.Body = &teeBody{r: r.Body, buf: &reqBody}
		}
		rec := &recorder{ResponseWriter: w, status: 0}
		h.ServeHTTP(rec, r)
		if rec.status == 0 && !rec.hijacked {
			rec.status = http.StatusOK
		}
		status := rec.status
		if rec.hijacked && status == 0 {
			status = http.StatusSwitchingProtocols
		}
		x := Exchange{Request: r, RequestBody: reqBody.Bytes(), Status: status, Header: rec.header,
			Body: rec.body.Bytes(), Streamed: rec.hijacked || rec.body.over || isStream(rec.header)}
		if x.Header == nil {
			x.Header = w.Header().Clone()
		}
		if err := v.Check(x); err != nil {
			t.Errorf("apitest: %v", err)
		}
	})
}

func isStream(h http.Header) bool {
	ct, _, _ := mime.ParseMediaType(h.Get("Content-Type"))
	return ct == "text/event-stream"
}

// capBuffer keeps up to maxKept bytes and remembers whether there were more.
type capBuffer struct {
	mu   sync.Mutex
	buf  bytes.Buffer
	over bool
}

func (b *capBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.buf.Len()+len(p) > maxKept {
		b.over = true
		return len(p), nil
	}
	return b.buf.Write(p)
}

func (b *capBuffer) Bytes() []byte {
	b.mu.Lock()
	defer b.mu.Unlock()
	return bytes.Clone(b.buf.Bytes())
}

type teeBody struct {
	r   io.ReadCloser
	buf *capBuffer
}

func (t *teeBody) Read(p []byte) (int, error) {
	n, err := t.r.Read(p)
	_, _ = t.buf.Write(p[:n])
	return n, err
}

func (t *teeBody) Close() error { return t.r.Close() }

// recorder passes a response through while keeping its status, headers
// and body.
type recorder struct {
	http.ResponseWriter
	status   int
	header   http.Header
	body     capBuffer
	hijacked bool
}

func (r *recorder) WriteHeader(code int) {
	if r.status == 0 && code >= 200 {
		r.status = code
		r.header = r.ResponseWriter.Header().Clone()
	}
	r.ResponseWriter.WriteHeader(code)
}

func (r *recorder) Write(p []byte) (int, error) {
	if r.status == 0 {
		r.WriteHeader(http.StatusOK)
	}
	_, _ = r.body.Write(p)
	return r.ResponseWriter.Write(p)
}

func (r *recorder) Flush() {
	if r.status == 0 {
		r.WriteHeader(http.StatusOK)
	}
	if f, ok := r.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

func (r *recorder) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	h, ok := r.ResponseWriter.(http.Hijacker)
	if !ok {
		return nil, nil, http.ErrNotSupported
	}
	c, rw, err := h.Hijack()
	if err == nil {
		r.hijacked = true
		if r.status == 0 {
			r.header = r.ResponseWriter.Header().Clone()
		}
	}
	return c, rw, err
}

// Unwrap lets http.ResponseController reach the connection's deadlines.
func (r *recorder) Unwrap() http.ResponseWriter { return r.ResponseWriter }
