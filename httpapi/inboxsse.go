package httpapi

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"time"

	"github.com/heraldhq/herald/heraldtype"
)

// streamInbox: GET /v1/users/{id}/inbox/stream is a Server-Sent Events
// stream of the user's new inbox items (S3.6): each item is an event
// "inbox" whose id is the item id and whose data is the item's JSON; the
// user's counts are an event "state" without an id (issue 35 item 1). A
// reconnecting client sends Last-Event-ID (EventSource does this by
// itself) and receives everything it missed; ?after=<id> (or
// ?last_event_id=) does the same for a first connection. Without either,
// the stream starts with the next new item. Comment lines (": heartbeat")
// keep idle connections open. A stream the server ends gets a final event
// "close" whose data says why ({"reason","message"}).
func (s *Server) streamInbox(w http.ResponseWriter, r *http.Request) error {
	return s.runInboxStream(r, &sseFraming{w: w, rc: http.NewResponseController(w), writeTimeout: s.writeTimeout})
}

// sseFraming writes the inbox stream as Server-Sent Events.
type sseFraming struct {
	w            http.ResponseWriter
	rc           *http.ResponseController
	writeTimeout time.Duration
	buf          bytes.Buffer
}

var _ inboxFraming = (*sseFraming)(nil)

// start answers 200 before the first event, so the client knows at once
// that it is connected.
// exempt lifts the request's deadlines (setDeadlines): the stream has no
// body and stays open for as long as it lives. Each write is bounded
// instead, so a client that stops reading is dropped.
func (f *sseFraming) exempt() {
	_ = f.rc.SetReadDeadline(time.Time{})
	_ = f.rc.SetWriteDeadline(time.Time{})
}

func (f *sseFraming) start(ctx context.Context) (context.Context, error) {
	f.exempt()
	h := f.w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	h.Set("X-Accel-Buffering", "no") // nginx: do not buffer the stream
	f.w.WriteHeader(http.StatusOK)
	// retry: how long EventSource waits before reconnecting.
	return ctx, f.write([]byte("retry: 2000\n\n"))
}

func (f *sseFraming) write(b []byte) error {
	if f.writeTimeout > 0 {
		_ = f.rc.SetWriteDeadline(time.Now().Add(f.writeTimeout))
	}
	if _, err := f.w.Write(b); err != nil {
		return &clientGone{err}
	}
	if err := f.rc.Flush(); err != nil {
		return &clientGone{err}
	}
	return nil
}

func (f *sseFraming) item(it heraldtype.InboxItem) error {
	f.buf.Reset()
	fmt.Fprintf(&f.buf, "id: %d\nevent: inbox\ndata: ", it.ID)
	if err := json.NewEncoder(&f.buf).Encode(it); err != nil { // Encode ends the line
		return err
	}
	f.buf.WriteByte('\n')
	return f.write(f.buf.Bytes())
}

// state writes the counts as an event "state" with no id line: an
// EventSource's lastEventId, and so its Last-Event-ID, stays the last
// item's.
func (f *sseFraming) state(st heraldtype.InboxState) error {
	data, err := json.Marshal(st)
	if err != nil {
		return err
	}
	return f.write(fmt.Appendf(nil, "event: state\ndata: %s\n\n", data))
}

func (f *sseFraming) heartbeat() error { return f.write([]byte(": heartbeat\n\n")) }

// finish writes the final "close" event when the server ended the stream;
// otherwise the client is gone or the store failed, and closing the
// response is all that can be said.
func (f *sseFraming) finish(end *streamEnd, _ error) {
	if end == nil {
		return
	}
	data, _ := json.Marshal(end)
	_ = f.write(fmt.Appendf(nil, "event: close\ndata: %s\n\n", data))
}
