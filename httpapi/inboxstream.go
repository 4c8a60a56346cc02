package httpapi

import (
	"context"
	"errors"
	"net/http"
	"strconv"

	"github.com/heraldhq/herald"
	"github.com/heraldhq/herald/heraldtype"
)

// The inbox stream (S3.6) is one stream with two framings: Server-Sent
// Events (GET /v1/users/{id}/inbox/stream, inboxsse.go) and WebSocket
// (GET /v1/users/{id}/inbox/ws, inboxws.go). Everything but the bytes on
// the wire is decided here, once: where it resumes, that the user exists,
// the per-user and per-key caps, when it ends (lifetime, token expiry, key
// revocation; streams.go) and the items and counts themselves
// (Client.StreamInboxWith).

// inboxFraming writes one inbox stream on one transport. Its methods are
// called from the stream's goroutine only, never concurrently.
type inboxFraming interface {
	// start begins the answer once the stream is admitted (SSE: 200 and
	// its headers; WebSocket: the upgrade). It returns the context the
	// stream runs under: ctx, or one that also ends when the transport
	// sees the client leave. An error means the client is gone (or, for a
	// WebSocket, the upgrade failed and was answered).
	start(ctx context.Context) (context.Context, error)
	// exempt lifts the request's read and write deadlines (setDeadlines):
	// from the moment the stream's own reads begin, the stream bounds each
	// of its writes itself.
	exempt()
	// item sends one inbox item; heartbeat keeps an idle stream open (and,
	// over WebSocket, proves the client is still there).
	item(heraldtype.InboxItem) error
	// state sends the user's counts (issue 35 item 1): an event without
	// an id, so a resume point stays the last item.
	state(heraldtype.InboxState) error
	heartbeat() error
	// finish ends the stream after the items stopped: end says why when
	// the server ended it (lifetime, credentials), err is what stopped
	// Client.StreamInbox otherwise (nil when the client left).
	finish(end *streamEnd, err error)
}

// resumeAfter reads where a stream resumes: the Last-Event-ID header (an
// EventSource sends it when it reconnects), else ?last_event_id=, else
// ?after= (a first connection that already holds items). The header wins
// because a reconnecting EventSource keeps the URL of its first
// connection. -1 when none is given: the stream starts with the next new
// item. access_token is the browser's credential, read by the guard.
func resumeAfter(r *http.Request) (int64, error) {
	var after, lastEventID string
	err := parseQuery(r.URL.RawQuery, map[string]func(string) error{
		"after":         func(v string) error { after = v; return nil },
		"last_event_id": func(v string) error { lastEventID = v; return nil },
		"access_token":  func(string) error { return nil },
	})
	if err != nil {
		return 0, err
	}
	for _, f := range []struct{ name, v string }{
		{"Last-Event-ID", r.Header.Get("Last-Event-ID")},
		{"last_event_id", lastEventID},
		{"after", after},
	} {
		if f.v == "" {
			continue
		}
		id, err := strconv.ParseInt(f.v, 10, 64)
		if err != nil || id < 0 {
			return 0, heraldtype.FieldErrorf(f.name, "%q is not an inbox item id", f.v)
		}
		return id, nil
	}
	return -1, nil
}

// runInboxStream admits the stream of r's user and runs it through f until
// it ends. Errors before f.start (a bad resume id, an unknown user, a cap)
// are ordinary JSON errors; after it the framing reports the end itself.
func (s *Server) runInboxStream(r *http.Request, f inboxFraming) error {
	userID := r.PathValue("id")
	last, err := resumeAfter(r)
	if err != nil {
		return err
	}
	if _, err := s.client.GetUser(r.Context(), userID); err != nil {
		return err
	}
	f.exempt() // the store reads below are bounded by the store's timeout
	if last < 0 {
		// A stream without a resume point starts after the newest item as
		// it was before the client is told the stream is open (the SSE
		// headers, the WebSocket's 101): read after that, an item the
		// client caused once connected could count as existing and never
		// be streamed (seen under load as a first item missing).
		page, err := s.client.ListInbox(r.Context(), userID, heraldtype.InboxFilter{Limit: 1})
		if err != nil {
			return err
		}
		last = 0
		if len(page.Items) > 0 {
			last = page.Items[0].ID
		}
	}
	p := principalFrom(r.Context())
	release, err := s.streams.open(userID, p)
	if err != nil {
		return err
	}
	defer release()
	// The stream ends with its credential or its lifetime (watch cancels
	// ctx with a *streamEnd), or when the client leaves.
	ctx, cancel := context.WithCancelCause(r.Context())
	defer cancel(nil)
	sctx, err := f.start(ctx)
	if err != nil {
		return nil // the client went away, or the upgrade was refused and answered
	}
	watched := s.streams.watch(sctx, cancel, p)
	err = s.client.StreamInboxWith(sctx, userID, herald.InboxStreamOptions{LastID: last, Item: f.item, State: f.state, Heartbeat: f.heartbeat})
	stopped := sctx.Err() != nil // the watch ended the stream, or the client left
	cancel(nil)
	<-watched
	end, _ := context.Cause(ctx).(*streamEnd)
	var ce *clientGone
	if end != nil || stopped || errors.As(err, &ce) {
		// The items stopped because the stream was ended or its client
		// is gone, not because of the store.
		err = nil
	}
	if err != nil {
		s.log.Warn("inbox stream ended", "err", err, "request_id", requestIDFrom(r.Context()))
	}
	f.finish(end, err)
	return nil // the status line is gone: nothing more can be reported
}

// clientGone wraps a framing's failed write (or unanswered ping): the
// client stopped reading, which ends its stream but is no server failure.
type clientGone struct{ err error }

func (e *clientGone) Error() string { return "inbox stream: the client is gone: " + e.err.Error() }
func (e *clientGone) Unwrap() error { return e.err }
