package httpapi

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"strconv"
	"time"
)

// DefaultStoreTimeout bounds the store work of one request unless
// Config.StoreTimeout says otherwise: a few seconds, well under the 10–30 s
// a typical HTTP client waits, so a caller learns that the store did not
// answer (503) rather than timing out without an answer (issue 24 item 1).
const DefaultStoreTimeout = 5 * time.Second

// storeRetryAfter is the Retry-After of a request whose store work ran
// out of time: long enough for a brief stall to pass, short enough that a
// caller retrying is not needlessly late.
const storeRetryAfter = 2 * time.Second

// errStoreDeadline is the cause of a request context whose store deadline
// passed; errorBody tells it from the caller's own cancellation by it.
var errStoreDeadline = errors.New("httpapi: the store did not answer within the request's store timeout")

// storeTimeoutKey carries the store timeout of a bounded request, for the
// message that names it.
type storeTimeoutKey struct{}

// The store work of a bounded route is given Config.StoreTimeout twice,
// each a real context deadline (so the database driver, and anything that
// sizes its own waits by the deadline, sees it): once for the credential
// lookup of the guard, and once, after the request's body has arrived,
// for the handler's Client calls. The body's arrival is not store time —
// Config.ReadTimeout bounds it — so a slow upload is never mistaken for a
// silent database.

// storeCtx bounds ctx by the store timeout, with errStoreDeadline as its
// cause when it passes. Without a timeout it returns ctx as is.
func (s *Server) storeCtx(ctx context.Context) (context.Context, context.CancelFunc) {
	return s.storeCtxPlus(ctx, 0)
}

// storeCtxPlus is storeCtx with wait more: the deadline of a handler that
// may wait, besides its store work, for up to wait (handleWaiting).
func (s *Server) storeCtxPlus(ctx context.Context, wait time.Duration) (context.Context, context.CancelFunc) {
	if s.storeTimeout <= 0 {
		return ctx, func() {}
	}
	ctx = context.WithValue(ctx, storeTimeoutKey{}, s.storeTimeout)
	return context.WithTimeoutCause(ctx, s.storeTimeout+max(wait, 0), errStoreDeadline)
}

// readBody reads a request's whole body before its handler's store
// deadline starts, within Config.MaxBodyBytes and the read deadline, and
// puts it back as r.Body; a read that failed is kept as the error the
// handler's decodeJSON then reports (413, 408, 400), exactly as if it had
// read the body itself.
func (s *Server) readBody(w http.ResponseWriter, r *http.Request) {
	if r.Body == nil || r.Body == http.NoBody || r.ContentLength == 0 {
		return
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, s.maxBody))
	r.Body = &readBody{r: bytes.NewReader(body), err: err}
}

// readBody is a body read ahead: its bytes, then its read error (or EOF).
type readBody struct {
	r   *bytes.Reader
	err error
}

func (b *readBody) Read(p []byte) (int, error) {
	n, err := b.r.Read(p)
	if err == io.EOF && b.err != nil {
		err = b.err
	}
	return n, err
}

func (b *readBody) Close() error { return nil }

// storeTimedOut reports whether ctx ended because its store deadline
// passed.
func storeTimedOut(ctx context.Context) bool {
	return ctx.Err() != nil && errors.Is(context.Cause(ctx), errStoreDeadline)
}

// retryAfterStore sets the Retry-After of a request whose store work ran
// out of time.
func retryAfterStore(w http.ResponseWriter) {
	w.Header().Set("Retry-After", strconv.Itoa(int(storeRetryAfter/time.Second)))
}

// storeTimeoutMessage is what a caller whose request ran out of store time
// learns: that the store did not answer, and that a retry is safe — a
// trigger retried with its Idempotency-Key returns the notifications a
// commit whose answer was lost created, and creates them otherwise.
func storeTimeoutMessage(ctx context.Context) string {
	d, ok := ctx.Value(storeTimeoutKey{}).(time.Duration)
	if !ok {
		d = DefaultStoreTimeout
	}
	return "the store did not answer within " + d.String() + "; retry the request (a trigger with the same Idempotency-Key)"
}
