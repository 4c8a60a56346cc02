package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/heraldhq/herald"
	"github.com/heraldhq/herald/heraldtype"
	"github.com/heraldhq/herald/internal/apitest"
)

// bootstrapKey is the API key newCluster gives every instance.
const bootstrapKey = "e2e-bootstrap-key-0123456789abcdef0123"

// TestInboxWebSocketAcrossInstances: two herald processes on one
// PostgreSQL database; an in-app notification triggered through instance
// A's API reaches a WebSocket client of instance B (issue 21 item 8,
// S3.6), and a client that reconnects to A after the id it holds gets
// exactly what it missed.
func TestInboxWebSocketAcrossInstances(t *testing.T) {
	c := newCluster(t)
	a, b := startInstance(t, c.env), startInstance(t, c.env)
	if _, err := c.client.PutUser(c.ctx, "reader", herald.UserInput{}); err != nil {
		t.Fatal(err)
	}
	auth := http.Header{"Authorization": {"Bearer " + bootstrapKey}}
	// The handshakes and the triggers are checked against the contract.
	contractClient := &http.Client{Transport: apitest.Transport(t, nil)}
	ws := func(in *instance, query string) *websocket.Conn {
		t.Helper()
		ctx, cancel := context.WithTimeout(c.ctx, 10*time.Second)
		defer cancel()
		u := "ws://" + strings.TrimPrefix(in.api, "http://") + "/v1/users/reader/inbox/ws" + query
		conn, _, err := websocket.Dial(ctx, u, &websocket.DialOptions{HTTPHeader: auth, HTTPClient: contractClient})
		if err != nil {
			t.Fatalf("dial %s: %v", u, err)
		}
		t.Cleanup(func() { conn.CloseNow() })
		return conn
	}
	trigger := func(in *instance, title string) {
		t.Helper()
		body := fmt.Sprintf(`{"user_id":"reader","type":"note","title":%q,"channels":["in_app"]}`, title)
		req, _ := http.NewRequestWithContext(c.ctx, "POST", in.api+"/v1/notifications", bytes.NewBufferString(body))
		req.Header = auth.Clone()
		req.Header.Set("Content-Type", "application/json")
		resp, err := contractClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusAccepted {
			t.Fatalf("trigger on %s: %d", in.api, resp.StatusCode)
		}
	}
	// next reads the next item, skipping the counts (state events) as a
	// client does; 15 s covers even the poll's fallback.
	next := func(conn *websocket.Conn) (int64, string) {
		t.Helper()
		ctx, cancel := context.WithTimeout(c.ctx, 15*time.Second)
		defer cancel()
		for {
			_, data, err := conn.Read(ctx)
			if err != nil {
				t.Fatalf("read: %v\nA:\n%s\nB:\n%s", err, a.tail(), b.tail())
			}
			var m struct {
				Event string
				ID    int64
				Data  json.RawMessage
			}
			if err := json.Unmarshal(data, &m); err != nil {
				t.Fatalf("message %s: %v", data, err)
			}
			if m.Event == "state" {
				continue
			}
			var it heraldtype.InboxItem
			if err := json.Unmarshal(m.Data, &it); err != nil || m.Event != "inbox" || m.ID != it.ID {
				t.Fatalf("message %s: %v", data, err)
			}
			return m.ID, it.Title
		}
	}

	onB := ws(b, "")
	start := time.Now()
	trigger(a, "first")
	firstID, title := next(onB)
	if title != "first" {
		t.Fatalf("streamed %q", title)
	}
	t.Logf("trigger on A → WebSocket on B: %v", time.Since(start))
	trigger(a, "second")
	if _, title := next(onB); title != "second" {
		t.Fatalf("streamed %q", title)
	}
	onB.Close(websocket.StatusNormalClosure, "")

	// Resume on the other instance after the first item: the second again
	// (the client may not have stored it), then the one it missed.
	trigger(a, "missed")
	onA := ws(a, fmt.Sprintf("?last_event_id=%d", firstID))
	for _, want := range []string{"second", "missed"} {
		if _, title := next(onA); title != want {
			t.Fatalf("resumed: %q, want %q", title, want)
		}
	}
}
