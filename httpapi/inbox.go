package httpapi

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/heraldhq/herald"
	"github.com/heraldhq/herald/heraldtype"
)

// listInbox: GET /v1/users/{id}/inbox?unread=true&archived=true&cursor=&limit=
// returns {"items":[…],"next_cursor":"…","unread":n} (S4.5).
func (s *Server) listInbox(w http.ResponseWriter, r *http.Request) error {
	var f herald.InboxFilter
	err := parseQuery(r.URL.RawQuery, map[string]func(string) error{
		"unread":   func(v string) (err error) { f.Unread, err = parseBool("unread", v); return },
		"archived": func(v string) (err error) { f.Archived, err = parseBool("archived", v); return },
		"cursor":   func(v string) error { f.Cursor = v; return nil },
		"limit": func(v string) error {
			n, err := strconv.Atoi(v)
			if err != nil || n < 1 || n > 200 {
				return heraldtype.FieldErrorf("limit", "must be a number from 1 to 200")
			}
			f.Limit = n
			return nil
		},
	})
	if err != nil {
		return err
	}
	page, err := s.client.ListInbox(r.Context(), r.PathValue("id"), f)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, page)
	return nil
}

// markRead is the body of POST /v1/users/{id}/inbox/read.
type markRead struct {
	IDs []int64 `json:"ids"`
}

// countBody answers the mark-read endpoints.
type countBody struct {
	Updated int `json:"updated"`
}

// markInboxRead: POST /v1/users/{id}/inbox/read {"ids":[…]}.
func (s *Server) markInboxRead(w http.ResponseWriter, r *http.Request) error {
	var in markRead
	if err := s.decodeJSON(w, r, &in, bodySpec{}); err != nil {
		return err
	}
	n, err := s.client.MarkInboxRead(r.Context(), r.PathValue("id"), in.IDs)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, countBody{Updated: n})
	return nil
}

// markAllInboxRead: POST /v1/users/{id}/inbox/read-all.
func (s *Server) markAllInboxRead(w http.ResponseWriter, r *http.Request) error {
	n, err := s.client.MarkAllInboxRead(r.Context(), r.PathValue("id"))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, countBody{Updated: n})
	return nil
}

// archiveInboxItem: POST /v1/users/{id}/inbox/{item_id}/archive.
func (s *Server) archiveInboxItem(w http.ResponseWriter, r *http.Request) error {
	id, err := strconv.ParseInt(r.PathValue("item_id"), 10, 64)
	if err != nil || id <= 0 {
		return heraldtype.FieldErrorf("item_id", "%q is not an inbox item id", r.PathValue("item_id"))
	}
	if err := s.client.ArchiveInboxItem(r.Context(), r.PathValue("id"), id); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// streamInbox: GET /v1/users/{id}/inbox/stream is a Server-Sent Events
// stream of the user's new inbox items (S3.6): each item is an event
// "inbox" whose id is the item id and whose data is the item's JSON. A
// reconnecting client sends Last-Event-ID (EventSource does this by
// itself) and receives everything it missed; ?after=<id> does the same for
// a first connection. Without either, the stream starts with the next new
// item. Comment lines (": heartbeat") keep idle connections open.
func (s *Server) streamInbox(w http.ResponseWriter, r *http.Request) error {
	last := int64(-1)
	var after string
	// access_token is the EventSource's credentials (auth.go), read there.
	err := parseQuery(r.URL.RawQuery, map[string]func(string) error{
		"after":        func(v string) error { after = v; return nil },
		"access_token": func(string) error { return nil },
	})
	if err != nil {
		return err
	}
	for _, v := range []string{r.Header.Get("Last-Event-ID"), after} {
		if v == "" {
			continue
		}
		id, err := strconv.ParseInt(v, 10, 64)
		if err != nil || id < 0 {
			return heraldtype.FieldErrorf("Last-Event-ID", "%q is not an inbox item id", v)
		}
		last = id
		break
	}
	rc := http.NewResponseController(w)
	// The stream is exempt from the request's deadlines (setDeadlines): it
	// has no body and stays open for as long as it lives. Each write is
	// bounded instead, so a client that stops reading is dropped.
	_ = rc.SetReadDeadline(time.Time{})
	_ = rc.SetWriteDeadline(time.Time{})
	write := func(b []byte) error {
		if s.writeTimeout > 0 {
			_ = rc.SetWriteDeadline(time.Now().Add(s.writeTimeout))
		}
		if _, err := w.Write(b); err != nil {
			return err
		}
		return rc.Flush()
	}
	started := false
	start := func() error {
		if started {
			return nil
		}
		started = true
		h := w.Header()
		h.Set("Content-Type", "text/event-stream")
		h.Set("Cache-Control", "no-cache")
		h.Set("X-Accel-Buffering", "no") // nginx: do not buffer the stream
		w.WriteHeader(http.StatusOK)
		// retry: how long EventSource waits before reconnecting.
		return write([]byte("retry: 2000\n\n"))
	}
	var buf bytes.Buffer
	send := func(it heraldtype.InboxItem) error {
		if err := start(); err != nil {
			return err
		}
		buf.Reset()
		fmt.Fprintf(&buf, "id: %d\nevent: inbox\ndata: ", it.ID)
		if err := json.NewEncoder(&buf).Encode(it); err != nil { // Encode ends the line
			return err
		}
		buf.WriteByte('\n')
		return write(buf.Bytes())
	}
	heartbeat := func() error {
		if err := start(); err != nil {
			return err
		}
		return write([]byte(": heartbeat\n\n"))
	}
	// The stream starts (200 + headers) before the first event, so the
	// client knows at once that it is connected; errors before that (an
	// unknown user, a bad id) are still ordinary JSON errors.
	if _, err := s.client.GetUser(r.Context(), r.PathValue("id")); err != nil {
		return err
	}
	release, err := s.streams.open(r.PathValue("id"), principalFrom(r.Context()))
	if err != nil {
		return err
	}
	defer release()
	if err := start(); err != nil {
		return nil // the client went away
	}
	// The stream ends with its credential or its lifetime, with a final
	// "close" event saying why. It is written after StreamInbox returned,
	// so never concurrently with an item.
	ctx, cancel := context.WithCancelCause(r.Context())
	defer cancel(nil)
	watched := s.streams.watch(ctx, cancel, principalFrom(r.Context()))
	err = s.client.StreamInbox(ctx, r.PathValue("id"), last, send, heartbeat)
	cancel(nil)
	<-watched
	if end, ok := context.Cause(ctx).(*streamEnd); ok && r.Context().Err() == nil {
		data, _ := json.Marshal(end)
		_ = write(fmt.Appendf(nil, "event: close\ndata: %s\n\n", data))
		return nil
	}
	if err != nil && ctx.Err() == nil {
		s.log.Warn("inbox stream ended", "err", err, "request_id", r.Context().Value(requestIDKey{}))
	}
	return nil // the status line is gone: nothing more can be reported
}

// listSuppressions: GET /v1/suppressions?channel=sms|email.
func (s *Server) listSuppressions(w http.ResponseWriter, r *http.Request) error {
	var ch string
	if err := parseQuery(r.URL.RawQuery, map[string]func(string) error{
		"channel": func(v string) error { ch = v; return nil },
	}); err != nil {
		return err
	}
	out, err := s.client.ListSuppressions(r.Context(), heraldtype.Channel(ch))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]any{"suppressions": out})
	return nil
}

// deleteSuppression: DELETE /v1/suppressions/{channel}/{address} lifts a
// suppression after the address opted in again.
func (s *Server) deleteSuppression(w http.ResponseWriter, r *http.Request) error {
	if err := s.client.DeleteSuppression(r.Context(), heraldtype.Channel(r.PathValue("channel")), r.PathValue("address")); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

func parseBool(field, v string) (bool, error) {
	b, err := strconv.ParseBool(v)
	if err != nil {
		return false, heraldtype.FieldErrorf(field, "must be true or false")
	}
	return b, nil
}
