package heraldclient_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/heraldhq/herald/heraldclient"
)

// describeEvent is an event as "<id>:<title>" or "state <unread>/<unseen>".
func describeEvent(ev heraldclient.InboxEvent) string {
	if ev.State != nil {
		return fmt.Sprintf("state %d/%d", ev.State.Unread, ev.State.Unseen)
	}
	return ev.ID + ":" + ev.Item.Title
}

// State events (issue 35 item 1): skipped unless StreamOptions.States, as
// every event the client does not ask for; with it, yielded with State
// set and no id, and the resume point stays the last item's. Bad state
// data ends the stream with an error.
func TestInboxStreamStateEvents(t *testing.T) {
	item := `id: 1\nevent: inbox\ndata: {"id":1,"user_id":"u1","notification_id":"n1","type":"news","title":"one","created_at":"2026-01-01T00:00:00Z"}\n\n`
	item = strings.ReplaceAll(item, `\n`, "\n")
	body := "retry: 10\n\n" + item + "event: state\ndata: {\"unread\":1,\"unseen\":1}\n\n" +
		"event: close\ndata: {\"reason\":\"max_lifetime\",\"message\":\"reconnect\"}\n\n"
	// run reads the stream until it yields n events or an error.
	run := func(t *testing.T, n int, bodies []string, opts heraldclient.StreamOptions) ([]string, error, []string) {
		t.Helper()
		var lastIDs idLog
		ts := sseServer(t, bodies, &lastIDs)
		c, err := heraldclient.New(ts.URL)
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		var got []string
		var last error
		for ev, err := range c.InboxStream(ctx, "u1", opts) {
			if err != nil {
				last = err
				break
			}
			got = append(got, describeEvent(ev))
			if len(got) == n {
				break
			}
		}
		return got, last, lastIDs.get()
	}
	t.Run("bad data", func(t *testing.T) {
		got, err, _ := run(t, 1, []string{"retry: 10\n\nevent: state\ndata: {\"unread\":\"x\"}\n\n"},
			heraldclient.StreamOptions{LastEventID: "0", States: true})
		if err == nil || !strings.Contains(err.Error(), "state event") {
			t.Fatalf("bad state data: %v %v, want an error naming the state event", got, err)
		}
	})
	t.Run("skipped without States", func(t *testing.T) {
		got, err, _ := run(t, 2, []string{body, item}, heraldclient.StreamOptions{LastEventID: "0"})
		if strings.Join(got, ",") != "1:one,1:one" || err != nil {
			t.Fatalf("events %v %v, want the items only", got, err)
		}
	})
	t.Run("yielded with States", func(t *testing.T) {
		got, err, ids := run(t, 4, []string{body, item + "event: state\ndata: {\"unread\":0,\"unseen\":1}\n\n"},
			heraldclient.StreamOptions{LastEventID: "0", States: true})
		if strings.Join(got, ",") != "1:one,state 1/1,1:one,state 0/1" || err != nil {
			t.Fatalf("events %v %v", got, err)
		}
		// The reconnection after the close resumed after the item, not
		// after the state event.
		if strings.Join(ids, ",") != "0,1" {
			t.Fatalf("Last-Event-ID of each connection: %v, want 0,1", ids)
		}
	})
}

// Against the server: the counts after the resumed items, then after a
// mark made through the client (issue 35 item 1).
func TestInboxStreamStatesFromTheServer(t *testing.T) {
	s := newServer(t, serverOptions{})
	c := s.client(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	if _, err := c.PutUser(ctx, "u1", heraldclient.UserInput{}); err != nil {
		t.Fatal(err)
	}
	trigger(t, c, "u1", "A")
	events, errs := collect(ctx, c.InboxStream(ctx, "u1", heraldclient.StreamOptions{LastEventID: "0", States: true}))
	a := receive(t, events, errs)
	if a.Item.Title != "A" || a.State != nil {
		t.Fatalf("first event %+v, want item A", a)
	}
	if ev := receive(t, events, errs); describeEvent(ev) != "state 1/1" {
		t.Fatalf("after the resumed items: %s", describeEvent(ev))
	}
	if _, err := c.MarkInboxSeen(ctx, "u1", a.Item.ID); err != nil {
		t.Fatal(err)
	}
	if ev := receive(t, events, errs); describeEvent(ev) != "state 1/0" {
		t.Fatalf("after seen: %s", describeEvent(ev))
	}
	if _, err := c.MarkInboxRead(ctx, "u1", a.Item.ID); err != nil {
		t.Fatal(err)
	}
	if ev := receive(t, events, errs); describeEvent(ev) != "state 0/0" {
		t.Fatalf("after read: %s", describeEvent(ev))
	}
	trigger(t, c, "u1", "B")
	if ev := receive(t, events, errs); ev.Item.Title != "B" {
		t.Fatalf("after a new item: %s", describeEvent(ev))
	}
	if ev := receive(t, events, errs); describeEvent(ev) != "state 1/1" {
		t.Fatalf("after a new item: %s", describeEvent(ev))
	}
}
