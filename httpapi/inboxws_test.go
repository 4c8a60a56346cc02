package httpapi_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/golang-jwt/jwt/v5"

	"github.com/heraldhq/herald"
	"github.com/heraldhq/herald/auth"
	"github.com/heraldhq/herald/heraldtype"
	"github.com/heraldhq/herald/httpapi"
)

// wsMessage is one message of the WebSocket inbox stream.
type wsMessage struct {
	Event string          `json:"event"`
	ID    int64           `json:"id"`
	Data  json.RawMessage `json:"data"`
}

// dialWS opens the WebSocket inbox stream at path (with its query) of ts,
// with header; on a refusal it returns the status and the JSON error.
func dialWS(t *testing.T, ts *httptest.Server, path string, header http.Header) (*websocket.Conn, int, httpapi.ErrorBody) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, resp, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(ts.URL, "http")+path, &websocket.DialOptions{HTTPHeader: header})
	if err != nil {
		if resp == nil {
			t.Fatalf("dial %s: %v", path, err)
		}
		var eb httpapi.ErrorBody
		body, _ := io.ReadAll(resp.Body)
		if err := json.Unmarshal(body, &eb); err != nil {
			t.Fatalf("dial %s: %d with a body that is no JSON error: %q", path, resp.StatusCode, body)
		}
		return nil, resp.StatusCode, eb
	}
	t.Cleanup(func() { c.CloseNow() })
	return c, http.StatusSwitchingProtocols, httpapi.ErrorBody{}
}

// readWS reads the next message other than a "state" event, within a few
// seconds: as a client must, it skips the events it does not use.
func readWS(t *testing.T, c *websocket.Conn) wsMessage {
	t.Helper()
	for {
		if m := readWSEvent(t, c); m.Event != "state" {
			return m
		}
	}
}

// readWSEvent reads the next message, whatever its event, within a few
// seconds.
func readWSEvent(t *testing.T, c *websocket.Conn) wsMessage {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	typ, b, err := c.Read(ctx)
	if err != nil {
		t.Fatalf("read: %v", err)
	}
	var m wsMessage
	if typ != websocket.MessageText || json.Unmarshal(b, &m) != nil {
		t.Fatalf("message %v %q is not a JSON text message", typ, b)
	}
	return m
}

// closedWith reads the stream's last message, a "close" event, and then
// the close frame; it returns the event's reason and the frame's code.
func closedWith(t *testing.T, c *websocket.Conn) (string, websocket.StatusCode) {
	t.Helper()
	m := readWS(t, c)
	var end struct{ Reason, Message string }
	if m.Event != "close" || json.Unmarshal(m.Data, &end) != nil || end.Message == "" {
		t.Fatalf("last message %+v is not a close event", m)
	}
	return end.Reason, closeStatus(t, c)
}

// closeStatus reads until the close frame and returns its code.
func closeStatus(t *testing.T, c *websocket.Conn) websocket.StatusCode {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for {
		_, b, err := c.Read(ctx)
		if err != nil {
			return websocket.CloseStatus(err)
		}
		var m wsMessage
		if json.Unmarshal(b, &m) != nil || m.Event != "state" { // a client skips the counts
			t.Fatalf("a message %q after the end", b)
		}
	}
}

func enqueueInApp(t *testing.T, c *herald.Client, user, title string) {
	t.Helper()
	if _, err := c.Enqueue(context.Background(), herald.Request{UserID: user, Type: "note", Title: title,
		Channels: []heraldtype.Channel{heraldtype.ChannelInApp}}); err != nil {
		t.Fatal(err)
	}
}

// Live items arrive as JSON messages carrying the item and its id, the
// same item the inbox lists; a reconnection after a given id (query or
// header) gets exactly what followed it, in order, then the live items.
func TestInboxWSLiveAndResume(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOptions{userTokens: userTokens(t)})
	e.seedUser("alice")
	ts := httptest.NewServer(e.h)
	t.Cleanup(ts.Close)
	q := "?access_token=" + userToken(t, "alice")
	ids := map[string]int64{}
	// expect reads one item message per title, in order.
	expect := func(c *websocket.Conn, titles ...string) {
		t.Helper()
		for _, want := range titles {
			m := readWS(t, c)
			var it heraldtype.InboxItem
			if m.Event != "inbox" || json.Unmarshal(m.Data, &it) != nil || it.Title != want || it.ID != m.ID || m.ID == 0 {
				t.Fatalf("message %s %d %s, want item %q with its id", m.Event, m.ID, m.Data, want)
			}
			ids[want] = m.ID
		}
	}
	c, _, _ := dialWS(t, ts, "/v1/users/alice/inbox/ws"+q, nil)
	enqueueInApp(t, e.client, "alice", "one")
	enqueueInApp(t, e.client, "alice", "two")
	expect(c, "one", "two")
	// The data is the item exactly as the inbox lists it (and as the SSE
	// event carries it).
	page, err := e.client.ListInbox(context.Background(), "alice", herald.InboxFilter{Limit: 1})
	if err != nil {
		t.Fatal(err)
	}
	listed, _ := json.Marshal(page.Items[0])
	if page.Items[0].Title != "two" {
		t.Fatalf("the inbox's newest item is %q", page.Items[0].Title)
	}
	enqueueInApp(t, e.client, "alice", "three")
	expect(c, "three")
	c.Close(websocket.StatusNormalClosure, "")

	c, _, _ = dialWS(t, ts, fmt.Sprintf("/v1/users/alice/inbox/ws%s&last_event_id=%d", q, ids["one"]), nil)
	m := readWS(t, c)
	if m.ID != ids["two"] || string(m.Data) != string(listed) {
		t.Fatalf("resumed with %d %s, the inbox lists %s", m.ID, m.Data, listed)
	}
	expect(c, "three")
	enqueueInApp(t, e.client, "alice", "four")
	expect(c, "four") // not three again, nothing skipped
	c.Close(websocket.StatusNormalClosure, "")

	enqueueInApp(t, e.client, "alice", "five")
	c, _, _ = dialWS(t, ts, "/v1/users/alice/inbox/ws"+q, http.Header{"Last-Event-ID": {fmt.Sprint(ids["four"])}})
	expect(c, "five")
	enqueueInApp(t, e.client, "alice", "six")
	expect(c, "six")
}

// The server ends the stream as the SSE one, each time with a last close
// event saying why and a close code of its own.
func TestInboxWSEnds(t *testing.T) {
	t.Parallel()
	t.Run("revoked key", func(t *testing.T) {
		t.Parallel()
		e := newEnv(t, envOptions{streams: httpapi.StreamConfig{CheckInterval: 20 * time.Millisecond}})
		e.seedUser("alice")
		ts := httptest.NewServer(e.h)
		t.Cleanup(ts.Close)
		k, secret, err := e.keys.Create(context.Background(), "streamer", []auth.Scope{auth.ScopeInboxRead})
		if err != nil {
			t.Fatal(err)
		}
		c, _, _ := dialWS(t, ts, "/v1/users/alice/inbox/ws", http.Header{"Authorization": {"Bearer " + secret}})
		enqueueInApp(t, e.client, "alice", "before")
		readWS(t, c) // the stream is up
		if err := e.keys.Revoke(context.Background(), k.ID); err != nil {
			t.Fatal(err)
		}
		if r, code := closedWith(t, c); r != "credentials_revoked" || code != httpapi.WSCloseCredentialsRevoked {
			t.Fatalf("closed: %s %d", r, code)
		}
	})
	t.Run("expired token", func(t *testing.T) {
		t.Parallel()
		e := newEnv(t, envOptions{userTokens: userTokens(t)})
		e.seedUser("alice")
		ts := httptest.NewServer(e.h)
		t.Cleanup(ts.Close)
		c, _, _ := dialWS(t, ts, "/v1/users/alice/inbox/ws?access_token="+shortToken(t, "alice", time.Second), nil)
		if r, code := closedWith(t, c); r != "credentials_expired" || code != httpapi.WSCloseCredentialsExpired {
			t.Fatalf("closed: %s %d", r, code)
		}
	})
	t.Run("max lifetime", func(t *testing.T) {
		t.Parallel()
		e := newEnv(t, envOptions{userTokens: userTokens(t), streams: httpapi.StreamConfig{MaxLifetime: 50 * time.Millisecond}})
		e.seedUser("alice")
		ts := httptest.NewServer(e.h)
		t.Cleanup(ts.Close)
		c, _, _ := dialWS(t, ts, "/v1/users/alice/inbox/ws?access_token="+userToken(t, "alice"), nil)
		if r, code := closedWith(t, c); r != "max_lifetime" || code != httpapi.WSCloseMaxLifetime {
			t.Fatalf("closed: %s %d", r, code)
		}
	})
	t.Run("shutdown", func(t *testing.T) {
		t.Parallel()
		e := newEnv(t, envOptions{userTokens: userTokens(t)})
		e.seedUser("alice")
		ts := httptest.NewServer(e.h)
		t.Cleanup(ts.Close)
		c, _, _ := dialWS(t, ts, "/v1/users/alice/inbox/ws?access_token="+userToken(t, "alice"), nil)
		br, _ := openStream(t, ts, "alice", userToken(t, "alice"))
		e.srv.CloseStreams()
		if r, code := closedWith(t, c); r != "shutting_down" || code != websocket.StatusGoingAway {
			t.Fatalf("WebSocket closed: %s %d", r, code)
		}
		if r := closeEvent(t, br); r != "shutting_down" {
			t.Fatalf("SSE closed: %s", r)
		}
	})
	t.Run("no pong", func(t *testing.T) {
		t.Parallel()
		// The client does not read, so it never answers a ping.
		e := newEnv(t, envOptions{userTokens: userTokens(t), heartbeat: 20 * time.Millisecond, writeTimeout: 300 * time.Millisecond,
			streams: httpapi.StreamConfig{MaxPerUser: 1}})
		e.seedUser("alice")
		ts := httptest.NewServer(e.h)
		t.Cleanup(ts.Close)
		path := "/v1/users/alice/inbox/ws?access_token=" + userToken(t, "alice")
		c, _, _ := dialWS(t, ts, path, nil)
		// The cap frees the user's one stream when the server gave up on
		// it. (A refusal may also be lost: its write is bounded by the
		// short write timeout too.)
		waitFor(t, "the stream to give up on its client", func() bool {
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			again, _, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(ts.URL, "http")+path, nil)
			if err == nil {
				again.CloseNow()
			}
			return err == nil
		})
		if code := closeStatus(t, c); code != httpapi.WSClosePingTimeout {
			t.Fatalf("closed with %d", code)
		}
	})
	t.Run("client message", func(t *testing.T) {
		t.Parallel()
		e := newEnv(t, envOptions{userTokens: userTokens(t)})
		e.seedUser("alice")
		ts := httptest.NewServer(e.h)
		t.Cleanup(ts.Close)
		c, _, _ := dialWS(t, ts, "/v1/users/alice/inbox/ws?access_token="+userToken(t, "alice"), nil)
		if err := c.Write(context.Background(), websocket.MessageText, []byte(`{"hello":1}`)); err != nil {
			t.Fatal(err)
		}
		if code := closeStatus(t, c); code != websocket.StatusPolicyViolation {
			t.Fatalf("closed with %d", code)
		}
	})
}

// A client that answers pings keeps its stream through many heartbeats.
func TestInboxWSPingsKeepItOpen(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOptions{userTokens: userTokens(t), heartbeat: 10 * time.Millisecond, writeTimeout: 10 * time.Second})
	e.seedUser("alice")
	ts := httptest.NewServer(e.h)
	t.Cleanup(ts.Close)
	var pings atomic.Int32
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, _, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(ts.URL, "http")+"/v1/users/alice/inbox/ws?access_token="+userToken(t, "alice"),
		&websocket.DialOptions{OnPingReceived: func(context.Context, []byte) bool { pings.Add(1); return true }})
	if err != nil {
		t.Fatal(err)
	}
	defer c.CloseNow()
	got := make(chan wsMessage, 1)
	go func() {
		for { // reading answers the pings
			_, b, err := c.Read(ctx)
			var m wsMessage
			if err == nil {
				_ = json.Unmarshal(b, &m)
			}
			if m.Event != "state" || err != nil { // the counts are skipped
				got <- m
				return
			}
		}
	}()
	waitFor(t, "five pings", func() bool { return pings.Load() >= 5 })
	enqueueInApp(t, e.client, "alice", "still here")
	if m := <-got; m.Event != "inbox" || !strings.Contains(string(m.Data), "still here") {
		t.Fatalf("after the pings: %+v", m)
	}
}

// The WebSocket and the SSE stream of a user count against the same caps;
// one more is refused before the upgrade with a 429 naming the limit.
func TestInboxWSCaps(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOptions{userTokens: userTokens(t), streams: httpapi.StreamConfig{MaxPerUser: 1, MaxPerKey: 1}})
	for _, u := range []string{"alice", "bob", "carol"} {
		e.seedUser(u)
	}
	ts := httptest.NewServer(e.h)
	t.Cleanup(ts.Close)
	q := "?access_token=" + userToken(t, "alice")
	openStream(t, ts, "alice", userToken(t, "alice")) // SSE
	_, status, eb := dialWS(t, ts, "/v1/users/alice/inbox/ws"+q, nil)
	if status != http.StatusTooManyRequests || eb.Code != heraldtype.ERATELIMITED || !strings.Contains(eb.Message, "limit per user") {
		t.Fatalf("a WebSocket beside the SSE stream: %d %+v", status, eb)
	}
	key := http.Header{"Authorization": {"Bearer " + e.key(auth.ScopeInboxRead)}}
	dialWS(t, ts, "/v1/users/bob/inbox/ws", key)
	_, status, eb = dialWS(t, ts, "/v1/users/carol/inbox/ws", key)
	if status != http.StatusTooManyRequests || !strings.Contains(eb.Message, "limit per key") {
		t.Fatalf("the key's second: %d %+v", status, eb)
	}
}

// What is refused before the upgrade is an ordinary JSON error naming the
// field: a page of a foreign origin, a bad resume id, a plain GET, an
// unknown user, an API key in the URL.
func TestInboxWSRefusals(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOptions{userTokens: userTokens(t), cors: httpapi.CORSConfig{AllowedOrigins: []string{"https://app.example.com"}}})
	e.seedUser("alice")
	ts := httptest.NewServer(e.h)
	t.Cleanup(ts.Close)
	q := "?access_token=" + userToken(t, "alice")
	c, _, _ := dialWS(t, ts, "/v1/users/alice/inbox/ws"+q, http.Header{"Origin": {"https://app.example.com"}})
	c.CloseNow()
	for _, tc := range []struct {
		name, path string
		header     http.Header
		status     int
		code, in   string
	}{
		{"foreign origin", "/v1/users/alice/inbox/ws" + q, http.Header{"Origin": {"https://evil.example"}}, 403, heraldtype.EPERMISSIONDENIED, "http.cors_allowed_origins"},
		{"bad resume id", "/v1/users/alice/inbox/ws" + q + "&last_event_id=x", nil, 400, heraldtype.EINVALID, "last_event_id"},
		{"unknown user", "/v1/users/nobody/inbox/ws" + q, nil, 403, heraldtype.EPERMISSIONDENIED, "own user"},
		{"key in the URL", "/v1/users/alice/inbox/ws?access_token=" + e.adminKey, nil, 401, heraldtype.EUNAUTHENTICATED, "Authorization header"},
	} {
		_, status, eb := dialWS(t, ts, tc.path, tc.header)
		if status != tc.status || eb.Code != tc.code || !strings.Contains(eb.Message+eb.Field, tc.in) {
			t.Errorf("%s: %d %+v, want %d %s naming %s", tc.name, status, eb, tc.status, tc.code, tc.in)
		}
	}
	r := e.do("GET", "/v1/users/alice/inbox/ws", nil, "Authorization", "Bearer "+userToken(t, "alice"))
	if eb := r.errorBody(t); r.status != 400 || eb.Field != "Upgrade" {
		t.Fatalf("a plain GET: %d %+v", r.status, eb)
	}
	r = e.do("GET", "/v1/users/nobody/inbox/ws", nil, "Upgrade", "websocket", "Connection", "Upgrade")
	if eb := r.errorBody(t); r.status != 404 {
		t.Fatalf("an unknown user: %d %+v", r.status, eb)
	}
}

// shortToken signs a user token for sub that expires after ttl.
func shortToken(t *testing.T, sub string, ttl time.Duration) string {
	t.Helper()
	tok := jwt.NewWithClaims(jwt.SigningMethodHS256, jwt.MapClaims{"sub": sub, "exp": time.Now().Add(ttl).Unix()})
	tok.Header["kid"] = "app1"
	signed, err := tok.SignedString(userTokenSecret)
	if err != nil {
		t.Fatal(err)
	}
	return signed
}
