package httpapi_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/getkin/kin-openapi/openapi3"

	"github.com/heraldhq/herald/api"
	"github.com/heraldhq/herald/heraldtype"
)

// streamEventSchema is the contract's InboxStreamEvent, which every
// event these tests read must match: the validator in front of the
// server checks a stream's status and headers, not its events.
var streamEventSchema = sync.OnceValues(func() (*openapi3.Schema, error) {
	doc, err := openapi3.NewLoader().LoadFromData(api.YAML)
	if err != nil {
		return nil, err
	}
	ref := doc.Components.Schemas["InboxStreamEvent"]
	if ref == nil || ref.Value == nil {
		return nil, fmt.Errorf("no schema InboxStreamEvent")
	}
	return ref.Value, nil
})

// checkStreamEvent holds one event, as a WebSocket message's JSON, to the
// contract.
func checkStreamEvent(t *testing.T, msg []byte) {
	t.Helper()
	schema, err := streamEventSchema()
	if err != nil {
		t.Fatal(err)
	}
	var v any
	if err := json.Unmarshal(msg, &v); err != nil {
		t.Fatalf("event %s: %v", msg, err)
	}
	if err := schema.VisitJSON(v); err != nil {
		t.Fatalf("event %s is no InboxStreamEvent: %v", msg, err)
	}
}

// sseEvent is one Server-Sent Event as the inbox stream writes it.
type sseEvent struct {
	event, id, data string
	hasID           bool
}

// readSSE reads the next event (comments and the retry field skipped)
// and holds it to the contract.
func readSSE(t *testing.T, br *bufio.Reader) sseEvent {
	t.Helper()
	var ev sseEvent
	for {
		line, err := br.ReadString('\n')
		if err != nil {
			t.Fatalf("the stream ended: %v", err)
		}
		line = strings.TrimSuffix(line, "\n")
		switch {
		case line == "" && ev.event != "":
			m := map[string]any{"event": ev.event, "data": json.RawMessage(ev.data)}
			if ev.hasID {
				var id int64
				fmt.Sscan(ev.id, &id)
				m["id"] = id
			}
			b, _ := json.Marshal(m)
			checkStreamEvent(t, b)
			return ev
		case strings.HasPrefix(line, "event: "):
			ev.event = strings.TrimPrefix(line, "event: ")
		case strings.HasPrefix(line, "data: "):
			ev.data = strings.TrimPrefix(line, "data: ")
		case strings.HasPrefix(line, "id: "):
			ev.id, ev.hasID = strings.TrimPrefix(line, "id: "), true
		}
	}
}

// openSSE opens alice's SSE stream with her user token, resuming after
// lastID when it is not "".
func openSSE(t *testing.T, ts *httptest.Server, lastID string) *bufio.Reader {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	t.Cleanup(cancel)
	req, _ := http.NewRequestWithContext(ctx, "GET", ts.URL+"/v1/users/alice/inbox/stream", nil)
	req.Header.Set("Authorization", "Bearer "+userToken(t, "alice"))
	if lastID != "" {
		req.Header.Set("Last-Event-ID", lastID)
	}
	resp, err := ts.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	if resp.StatusCode != 200 {
		t.Fatalf("stream: %d", resp.StatusCode)
	}
	return bufio.NewReader(resp.Body)
}

// stateOf is an event's counts as "unread/unseen", or the event's name
// and id when it is no state event.
func stateOf(event string, data []byte) string {
	if event != "state" {
		return event
	}
	var st heraldtype.InboxState
	if err := json.Unmarshal(data, &st); err != nil {
		return "state with bad data " + string(data)
	}
	return fmt.Sprintf("state %d/%d", st.Unread, st.Unseen)
}

// inboxMarks are the marks the tests make through the API as alice, in
// order, with the counts each leaves ("" when it changes nothing, so no
// event may follow it).
func inboxMarks(e *env, one int64) []struct {
	what, want string
	do         func()
} {
	alice := "Bearer " + userToken(e.t, "alice")
	post := func(path string, body any, status int) func() {
		return func() { e.do("POST", path, body, "Authorization", alice).expect(e.t, status, nil) }
	}
	read := post("/v1/users/alice/inbox/read", map[string]any{"ids": []int64{one}}, 200)
	archive := post(fmt.Sprintf("/v1/users/alice/inbox/%d/archive", one), nil, 204)
	return []struct {
		what, want string
		do         func()
	}{
		{"read", "state 0/1", read},
		{"read again", "", read},
		{"archive", "state 0/0", archive},
		{"archive again", "", archive},
	}
}

// TestInboxStreamStateEvents: the SSE stream sends the user's counts as
// an event "state" without an id after what it resumed with, and again
// after each mark that changed them — none after one that did not — and
// a reconnection with Last-Event-ID still resumes after the last item
// (issue 35 item 1).
func TestInboxStreamStateEvents(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOptions{userTokens: userTokens(t)})
	e.seedUser("alice")
	ts := httptest.NewServer(e.h)
	t.Cleanup(ts.Close)
	one := e.inboxItem("alice")

	br := openSSE(t, ts, "0")
	if ev := readSSE(t, br); ev.event != "inbox" || ev.id != fmt.Sprint(one.ID) {
		t.Fatalf("first event %+v, want item %d", ev, one.ID)
	}
	ev := readSSE(t, br)
	if got := stateOf(ev.event, []byte(ev.data)); got != "state 1/1" || ev.hasID {
		t.Fatalf("after the backlog: %+v (%s), want state 1/1 without an id", ev, got)
	}
	for _, m := range inboxMarks(e, one.ID) {
		m.do()
		if m.want == "" {
			continue // the next event must be the next mark's
		}
		ev := readSSE(t, br)
		if got := stateOf(ev.event, []byte(ev.data)); got != m.want || ev.hasID {
			t.Fatalf("after %s: %+v (%s), want %s without an id", m.what, ev, got, m.want)
		}
	}
	two := e.inboxItem("alice")
	if ev := readSSE(t, br); ev.event != "inbox" || ev.id != fmt.Sprint(two.ID) {
		t.Fatalf("after a new item: %+v, want item %d", ev, two.ID)
	}
	if ev := readSSE(t, br); stateOf(ev.event, []byte(ev.data)) != "state 1/1" {
		t.Fatalf("after a new item: %+v, want state 1/1", ev)
	}

	// Resuming after the first item: the second, then the counts.
	br = openSSE(t, ts, fmt.Sprint(one.ID))
	if ev := readSSE(t, br); ev.event != "inbox" || ev.id != fmt.Sprint(two.ID) {
		t.Fatalf("resumed with %+v, want item %d", ev, two.ID)
	}
	if ev := readSSE(t, br); stateOf(ev.event, []byte(ev.data)) != "state 1/1" {
		t.Fatalf("resumed: %+v, want state 1/1", ev)
	}
}

// TestInboxWSStateEvents: the WebSocket stream sends the same counts as
// {"event":"state","data":{…}} messages without an id (issue 35 item 1).
func TestInboxWSStateEvents(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOptions{userTokens: userTokens(t)})
	e.seedUser("alice")
	ts := httptest.NewServer(e.h)
	t.Cleanup(ts.Close)
	one := e.inboxItem("alice")
	q := "?access_token=" + userToken(t, "alice")

	next := func(c *websocket.Conn) wsMessage {
		t.Helper()
		m := readWSEvent(t, c)
		raw, _ := json.Marshal(map[string]any{"event": m.Event, "data": m.Data})
		if m.ID != 0 {
			raw, _ = json.Marshal(map[string]any{"event": m.Event, "id": m.ID, "data": m.Data})
		}
		checkStreamEvent(t, raw)
		return m
	}
	c, _, _ := dialWS(t, ts, "/v1/users/alice/inbox/ws"+q+"&last_event_id=0", nil)
	if m := next(c); m.Event != "inbox" || m.ID != one.ID {
		t.Fatalf("first message %+v, want item %d", m, one.ID)
	}
	if m := next(c); stateOf(m.Event, m.Data) != "state 1/1" || m.ID != 0 {
		t.Fatalf("after the backlog: %s %d %s, want state 1/1 without an id", m.Event, m.ID, m.Data)
	}
	for _, mk := range inboxMarks(e, one.ID) {
		mk.do()
		if mk.want == "" {
			continue
		}
		if m := next(c); stateOf(m.Event, m.Data) != mk.want || m.ID != 0 {
			t.Fatalf("after %s: %s %d %s, want %s without an id", mk.what, m.Event, m.ID, m.Data, mk.want)
		}
	}
	two := e.inboxItem("alice")
	if m := next(c); m.Event != "inbox" || m.ID != two.ID {
		t.Fatalf("after a new item: %+v, want item %d", m, two.ID)
	}
	if m := next(c); stateOf(m.Event, m.Data) != "state 1/1" {
		t.Fatalf("after a new item: %s %s, want state 1/1", m.Event, m.Data)
	}
	c.Close(websocket.StatusNormalClosure, "")

	c, _, _ = dialWS(t, ts, fmt.Sprintf("/v1/users/alice/inbox/ws%s&last_event_id=%d", q, one.ID), nil)
	if m := next(c); m.Event != "inbox" || m.ID != two.ID {
		t.Fatalf("resumed with %+v, want item %d", m, two.ID)
	}
	if m := next(c); stateOf(m.Event, m.Data) != "state 1/1" {
		t.Fatalf("resumed: %s %s, want state 1/1", m.Event, m.Data)
	}
}
