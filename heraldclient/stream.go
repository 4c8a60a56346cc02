package heraldclient

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"iter"
	"mime"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/heraldhq/herald/heraldtype"
)

// InboxEvent is one item the inbox stream delivered or, with
// StreamOptions.States, the user's counts.
type InboxEvent struct {
	// ID is the event's id, the item's: what a later stream resumes after
	// (StreamOptions.LastEventID). Empty for a state event.
	ID   string
	Item heraldtype.InboxItem
	// State is set, and ID and Item empty, for a state event: the user's
	// unread and unseen counts (only with StreamOptions.States).
	State *heraldtype.InboxState
}

// StreamOptions tune InboxStream.
type StreamOptions struct {
	// LastEventID resumes after the item with this id: every later item
	// is delivered, in order. Empty: the stream starts with the items
	// created after it opens.
	LastEventID string
	// IdleTimeout drops a connection on which nothing, not even the
	// server's heartbeat, arrived for this long (a connection a network
	// failure left open), and reconnects. Default 90 s, well above the
	// server's heartbeat interval; negative: never.
	IdleTimeout time.Duration
	// States yields the user's counts too, as events with State set: once
	// a (re)connection has delivered the items it resumed with, then
	// whenever they change (an item read, seen, clicked or archived on
	// any device, or a new item). Without it the stream yields items only,
	// as it always did.
	States bool
}

// DefaultStreamIdleTimeout is StreamOptions.IdleTimeout's default.
const DefaultStreamIdleTimeout = 90 * time.Second

// Why the server ended a stream (the reason of its final "close" event).
// The stream reconnects by itself after CloseShuttingDown and
// CloseMaxLifetime; it ends with a *StreamClosedError after the others.
const (
	CloseShuttingDown      = "shutting_down"
	CloseMaxLifetime       = "max_lifetime"
	CloseCredentialExpired = "credentials_expired"
	CloseCredentialRevoked = "credentials_revoked"
)

// StreamClosedError ends an inbox stream that the server closed for a
// reason a reconnection with the same credential cannot mend: the user
// token expired (make a new Client with a new token and resume with the
// last event's ID), or the API key was revoked.
type StreamClosedError struct {
	Reason  string `json:"reason"`
	Message string `json:"message"`
}

func (e *StreamClosedError) Error() string {
	return "herald: the server closed the inbox stream: " + e.Reason + ": " + e.Message
}

// maxSSELine bounds one line of the stream; an inbox item is far smaller.
const maxSSELine = 4 << 20

// defaultReconnect is the wait before a reconnection until the server
// names its own (the SSE retry field).
const defaultReconnect = time.Second

// InboxStream follows the user's in-app inbox over Server-Sent Events
// (GET /v1/users/{id}/inbox/stream) and yields each new item as it is
// written (and, with StreamOptions.States, the user's counts whenever they
// change; other events, later versions' too, are skipped). When the connection drops, or the server ends the stream to
// shut down or at its lifetime, it reconnects with Last-Event-ID set to
// the last item's id, so no item is lost or repeated; it waits the
// server's retry interval first, doubling it (with jitter, up to
// RetryPolicy.MaxBackoff) while reconnections fail. It ends when ctx ends
// or the caller breaks, without an error; or with one error: an answer
// that reconnecting cannot change (not_found for an unknown user,
// permission_denied, …) or a *StreamClosedError.
//
// Without StreamOptions.LastEventID the stream starts at the newest item
// (read with ListInbox before connecting), so the items written while it
// connects are delivered too.
func (c *Client) InboxStream(ctx context.Context, userID string, opts StreamOptions) iter.Seq2[InboxEvent, error] {
	return func(yield func(InboxEvent, error) bool) {
		last := opts.LastEventID
		if last == "" {
			page, err := c.ListInbox(ctx, userID, heraldtype.InboxFilter{Limit: 1})
			if err != nil {
				if ctx.Err() == nil {
					yield(InboxEvent{}, err)
				}
				return
			}
			last = "0"
			if len(page.Items) > 0 {
				last = strconv.FormatInt(page.Items[0].ID, 10)
			}
		}
		s := &inboxStream{c: c, path: pathf("/v1/users/%s/inbox/stream", userID), lastID: last, reconnect: defaultReconnect,
			idle: opts.IdleTimeout, states: opts.States}
		if s.idle == 0 {
			s.idle = DefaultStreamIdleTimeout
		}
		failures := 0
		for {
			connected, err := s.run(ctx, yield)
			switch {
			case ctx.Err() != nil || errors.Is(err, errStopped):
				return
			case err != nil && !streamRetryable(err):
				yield(InboxEvent{}, err)
				return
			}
			if connected {
				failures = 0
			}
			failures++
			if c.sleep(ctx, s.backoff(failures)) != nil {
				return
			}
		}
	}
}

// errStopped: the caller broke out of the loop.
var errStopped = errors.New("heraldclient: the caller stopped the stream")

// inboxStream is one stream's state across its connections.
type inboxStream struct {
	c    *Client
	path string
	// lastID is the SSE last event id: sent as Last-Event-ID.
	lastID string
	// reconnect is the SSE reconnection time (the server's retry field).
	reconnect time.Duration
	// idle is StreamOptions.IdleTimeout (negative: none).
	idle time.Duration
	// states is StreamOptions.States.
	states bool
}

// backoff is the wait before the n-th reconnection in a row.
func (s *inboxStream) backoff(n int) time.Duration {
	p := s.c.retry
	p.BaseBackoff = s.reconnect
	if p.MaxBackoff < p.BaseBackoff {
		p.MaxBackoff = max(p.BaseBackoff, DefaultRetryPolicy.MaxBackoff)
	}
	return p.backoff(n, 0)
}

// streamRetryable says whether a connection's end calls for a
// reconnection: a dropped connection, an answer that says to come back
// later, the server's close for shutdown or lifetime.
func streamRetryable(err error) bool {
	var te *transportError
	if errors.As(err, &te) {
		return true
	}
	var e *Error
	if errors.As(err, &e) {
		return comeBackStatus(e.StatusCode)
	}
	var ce *StreamClosedError
	if errors.As(err, &ce) {
		return ce.Reason != CloseCredentialExpired && ce.Reason != CloseCredentialRevoked
	}
	return false
}

// run makes one connection and reads it until it ends. connected says
// the server accepted the stream.
func (s *inboxStream) run(ctx context.Context, yield func(InboxEvent, error) bool) (connected bool, err error) {
	cctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var idle *time.Timer
	if s.idle > 0 {
		idle = time.AfterFunc(s.idle, cancel)
		defer idle.Stop()
	}
	req, err := s.c.newRequest(cctx, http.MethodGet, s.path, nil, nil)
	if err != nil {
		return false, err
	}
	req.Header.Set("Accept", "text/event-stream")
	req.Header.Set("Cache-Control", "no-store")
	if s.lastID != "" {
		req.Header.Set("Last-Event-ID", s.lastID)
	}
	resp, err := s.c.http.Do(req)
	if err != nil {
		return false, &transportError{err: err}
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		raw, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
		if resp.StatusCode < 300 {
			return false, &Error{StatusCode: resp.StatusCode, Code: CodeInternal, Message: fmt.Sprintf("the stream answered %d, not 200", resp.StatusCode)}
		}
		return false, errorFrom(resp, raw)
	}
	if mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type")); mt != "text/event-stream" {
		return false, &Error{StatusCode: resp.StatusCode, Code: CodeInternal,
			Message: fmt.Sprintf("the stream answered %q, not text/event-stream", resp.Header.Get("Content-Type"))}
	}
	r := newSSEReader(resp.Body)
	r.lastID = s.lastID
	if idle != nil {
		r.onLine = func() { idle.Reset(s.idle) }
	}
	for {
		ev, err := r.next()
		if r.retry > 0 {
			s.reconnect = r.retry
		}
		if err != nil {
			if errors.Is(err, errLineTooLong) {
				return true, err
			}
			return true, &transportError{err: fmt.Errorf("the inbox stream broke: %w", err)}
		}
		switch ev.typ {
		case "inbox":
			var it heraldtype.InboxItem
			if err := json.Unmarshal([]byte(ev.data), &it); err != nil {
				return true, fmt.Errorf("heraldclient: an inbox event's data: %w", err)
			}
			s.lastID = ev.id
			if !yield(InboxEvent{ID: ev.id, Item: it}, nil) {
				return true, errStopped
			}
		case "state":
			if !s.states {
				continue // skipped, as before there were state events
			}
			var st heraldtype.InboxState
			if err := json.Unmarshal([]byte(ev.data), &st); err != nil {
				return true, fmt.Errorf("heraldclient: a state event's data: %w", err)
			}
			if !yield(InboxEvent{State: &st}, nil) {
				return true, errStopped
			}
		case "close":
			ce := &StreamClosedError{}
			if json.Unmarshal([]byte(ev.data), ce) != nil || ce.Reason == "" {
				ce.Reason, ce.Message = "closed", ev.data
			}
			s.lastID = ev.id
			return true, ce
		}
		// Other events are for later versions of the API: skipped.
	}
}

// sseEvent is one dispatched event of a text/event-stream.
type sseEvent struct {
	typ, data, id string
}

// sseReader parses a text/event-stream as the HTML standard's "event
// stream interpretation" says: lines end in CRLF, LF or CR; a line
// starting with a colon is a comment; "field: value" with one optional
// space after the colon; a blank line dispatches the event; data lines
// join with LF; id sets the last event id (unless it has a NUL), which
// stays for later events; retry sets the reconnection time when it is all
// digits; an event without data is not dispatched; a BOM at the start is
// skipped; an event cut by the end of the stream is dropped.
type sseReader struct {
	br *bufio.Reader
	// afterCR: the last line ended in CR, so an LF that follows belongs
	// to it.
	afterCR, started bool
	lastID           string
	retry            time.Duration
	line             []byte
	// onLine, when set, is called for every line read (the idle timer).
	onLine func()
}

func newSSEReader(r io.Reader) *sseReader { return &sseReader{br: bufio.NewReaderSize(r, 64<<10)} }

var errLineTooLong = errors.New("heraldclient: an inbox stream line is longer than 4 MiB")

// readLine returns the next line without its end.
func (r *sseReader) readLine() ([]byte, error) {
	r.line = r.line[:0]
	for {
		b, err := r.br.ReadByte()
		if err != nil {
			if err == io.EOF && len(r.line) > 0 {
				err = io.ErrUnexpectedEOF
			}
			return nil, err
		}
		if r.afterCR {
			r.afterCR = false
			if b == '\n' {
				continue
			}
		}
		switch b {
		case '\n':
			return r.line, nil
		case '\r':
			r.afterCR = true
			return r.line, nil
		}
		if len(r.line) >= maxSSELine {
			return nil, errLineTooLong
		}
		r.line = append(r.line, b)
	}
}

// next reads up to the next dispatched event.
func (r *sseReader) next() (sseEvent, error) {
	var typ string
	var data strings.Builder
	hasData := false
	for {
		line, err := r.readLine()
		if err != nil {
			return sseEvent{}, err
		}
		if r.onLine != nil {
			r.onLine()
		}
		if !r.started {
			r.started = true
			line = bytes.TrimPrefix(line, []byte("\xEF\xBB\xBF"))
		}
		if len(line) == 0 {
			if !hasData {
				typ = ""
				continue
			}
			if typ == "" {
				typ = "message"
			}
			d := data.String()
			return sseEvent{typ: typ, data: strings.TrimSuffix(d, "\n"), id: r.lastID}, nil
		}
		if line[0] == ':' {
			continue
		}
		field, value := line, []byte(nil)
		if i := bytes.IndexByte(line, ':'); i >= 0 {
			field, value = line[:i], line[i+1:]
			value = bytes.TrimPrefix(value, []byte(" "))
		}
		switch string(field) {
		case "event":
			typ = string(value)
		case "data":
			data.Write(value)
			data.WriteByte('\n')
			hasData = true
		case "id":
			if bytes.IndexByte(value, 0) < 0 {
				r.lastID = string(value)
			}
		case "retry":
			if ms, err := strconv.ParseInt(string(value), 10, 64); err == nil && ms >= 0 && isDigits(value) {
				r.retry = time.Duration(ms) * time.Millisecond
			}
		}
	}
}

func isDigits(b []byte) bool {
	if len(b) == 0 {
		return false
	}
	for _, c := range b {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}
