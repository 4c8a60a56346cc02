package httpapi

import (
	"context"
	"errors"
	"net/http"
	"strconv"
	"sync"
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

// storeDeadline bounds the store work of one request: the credential
// lookup and the handler's Client calls, but not the time the caller takes
// to send its body (which Config.ReadTimeout bounds), so a slow upload is
// never mistaken for a silent database. It cancels the request's context
// with errStoreDeadline when it fires.
type storeDeadline struct {
	d      time.Duration
	cancel context.CancelCauseFunc

	mu    sync.Mutex
	timer *time.Timer
	fired bool
}

type storeDeadlineKey struct{}

// boundStore returns r with its context bounded by the store timeout, and
// the function that releases it when the request is done. A request of a
// route registered unbounded, or a server without the timeout, is
// returned as is.
func (s *Server) boundStore(r *http.Request) (*http.Request, func()) {
	if s.storeTimeout <= 0 {
		return r, func() {}
	}
	ctx, cancel := context.WithCancelCause(r.Context())
	sd := &storeDeadline{d: s.storeTimeout, cancel: cancel}
	sd.timer = time.AfterFunc(sd.d, sd.fire)
	ctx = context.WithValue(ctx, storeDeadlineKey{}, sd)
	return r.WithContext(ctx), func() {
		sd.timer.Stop()
		cancel(nil)
	}
}

func (sd *storeDeadline) fire() {
	sd.mu.Lock()
	sd.fired = true
	sd.mu.Unlock()
	sd.cancel(errStoreDeadline)
}

// pauseStoreDeadline stops the clock of ctx's store deadline while the
// request's body arrives, and returns the function that restarts it, with
// the whole timeout, once the body is in. Without a deadline it does
// nothing.
func pauseStoreDeadline(ctx context.Context) (resume func()) {
	sd, ok := ctx.Value(storeDeadlineKey{}).(*storeDeadline)
	if !ok {
		return func() {}
	}
	sd.mu.Lock()
	stopped := sd.timer.Stop()
	sd.mu.Unlock()
	return func() {
		sd.mu.Lock()
		defer sd.mu.Unlock()
		if stopped && !sd.fired {
			sd.timer.Reset(sd.d)
		}
	}
}

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
	d := DefaultStoreTimeout
	if sd, ok := ctx.Value(storeDeadlineKey{}).(*storeDeadline); ok {
		d = sd.d
	}
	return "the store did not answer within " + d.String() + "; retry the request (a trigger with the same Idempotency-Key)"
}
