package heraldclient_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/heraldhq/herald/heraldclient"
	"github.com/heraldhq/herald/heraldtype"
	"github.com/heraldhq/herald/httpapi"
)

// collect runs the stream in the background and hands over what it
// yields.
func collect(ctx context.Context, seq func(func(heraldclient.InboxEvent, error) bool)) (<-chan heraldclient.InboxEvent, <-chan error) {
	events := make(chan heraldclient.InboxEvent, 100)
	errs := make(chan error, 1)
	go func() {
		defer close(events)
		for ev, err := range seq {
			if err != nil {
				errs <- err
				return
			}
			events <- ev
		}
	}()
	return events, errs
}

func trigger(t *testing.T, c *heraldclient.Client, user, title string) string {
	t.Helper()
	res, err := c.Trigger(context.Background(), heraldclient.TriggerRequest{UserID: user, Type: "news", Title: title,
		Channels: []heraldtype.Channel{heraldtype.ChannelInApp}})
	if err != nil {
		t.Fatal(err)
	}
	return res.ID
}

func receive(t *testing.T, events <-chan heraldclient.InboxEvent, errs <-chan error) heraldclient.InboxEvent {
	t.Helper()
	select {
	case ev, ok := <-events:
		if !ok {
			t.Fatal("the stream ended")
		}
		return ev
	case err := <-errs:
		t.Fatalf("the stream failed: %v", err)
	case <-time.After(15 * time.Second):
		t.Fatal("no inbox event within 15 s")
	}
	return heraldclient.InboxEvent{}
}

// The stream delivers each item once and in order across a cut
// connection: it reconnects with Last-Event-ID, and the item written
// while it was away arrives, the ones before it do not arrive again.
func TestInboxStreamResumesAfterACutConnection(t *testing.T) {
	s := newServer(t, serverOptions{})
	c := s.client(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	if _, err := c.PutUser(ctx, "u1", heraldclient.UserInput{}); err != nil {
		t.Fatal(err)
	}
	trigger(t, c, "u1", "before")
	// Without LastEventID the stream starts after the newest item.
	events, errs := collect(ctx, c.InboxStream(ctx, "u1", heraldclient.StreamOptions{}))
	time.Sleep(200 * time.Millisecond) // let it connect; the items below arrive either way
	var got []heraldclient.InboxEvent
	trigger(t, c, "u1", "A")
	got = append(got, receive(t, events, errs))
	trigger(t, c, "u1", "B")
	got = append(got, receive(t, events, errs))

	s.CloseClientConnections() // the network drops the stream
	trigger(t, c, "u1", "C")   // written while the client is away
	got = append(got, receive(t, events, errs))
	trigger(t, c, "u1", "D")
	got = append(got, receive(t, events, errs))

	var titles []string
	for i, ev := range got {
		titles = append(titles, ev.Item.Title)
		if ev.ID != fmt.Sprint(ev.Item.ID) || ev.Item.UserID != "u1" {
			t.Errorf("event %+v", ev)
		}
		if i > 0 && ev.Item.ID <= got[i-1].Item.ID {
			t.Errorf("ids out of order: %d after %d", ev.Item.ID, got[i-1].Item.ID)
		}
	}
	if strings.Join(titles, ",") != "A,B,C,D" {
		t.Errorf("received %v, want A,B,C,D", titles)
	}
	select {
	case ev := <-events:
		t.Errorf("an extra event %+v", ev)
	case <-time.After(100 * time.Millisecond):
	}
	cancel()
	for range events { // the stream ends with the context, without an error
	}
	select {
	case err := <-errs:
		t.Errorf("after cancel: %v", err)
	default:
	}
}

// LastEventID resumes after an item: every later one is delivered.
func TestInboxStreamFromLastEventID(t *testing.T) {
	s := newServer(t, serverOptions{})
	c := s.client(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	if _, err := c.PutUser(ctx, "u1", heraldclient.UserInput{}); err != nil {
		t.Fatal(err)
	}
	trigger(t, c, "u1", "one")
	trigger(t, c, "u1", "two")
	events, errs := collect(ctx, c.InboxStream(ctx, "u1", heraldclient.StreamOptions{LastEventID: "0"}))
	if ev := receive(t, events, errs); ev.Item.Title != "one" {
		t.Errorf("first: %+v", ev)
	}
	ev := receive(t, events, errs)
	if ev.Item.Title != "two" {
		t.Errorf("second: %+v", ev)
	}
	cancel()
	for range events {
	}
	// Resuming after the last item delivers nothing until a new one.
	ctx2, cancel2 := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel2()
	for got := range c.InboxStream(ctx2, "u1", heraldclient.StreamOptions{LastEventID: ev.ID}) {
		t.Fatalf("nothing after the last item was written, got %+v", got)
	}
}

func TestInboxStreamOfAnUnknownUserFails(t *testing.T) {
	s := newServer(t, serverOptions{})
	c := s.client(t)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for _, err := range c.InboxStream(ctx, "nobody", heraldclient.StreamOptions{LastEventID: "0"}) {
		if !heraldclient.IsCode(err, heraldclient.CodeNotFound) {
			t.Errorf("got %v, want not_found", err)
		}
	}
	if ctx.Err() != nil {
		t.Error("the stream kept reconnecting to a user that does not exist")
	}
}

// idLog records the Last-Event-ID of each connection.
type idLog struct {
	mu  sync.Mutex
	ids []string
}

func (l *idLog) add(id string) { l.mu.Lock(); l.ids = append(l.ids, id); l.mu.Unlock() }
func (l *idLog) get() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]string(nil), l.ids...)
}

// sseServer answers each connection with the next of bodies (raw
// text/event-stream), then holds the later ones open, and logs the
// Last-Event-ID each was sent.
func sseServer(t *testing.T, bodies []string, lastIDs *idLog) *httptest.Server {
	var n atomic.Int32
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		i := int(n.Add(1)) - 1
		lastIDs.add(r.Header.Get("Last-Event-ID"))
		if i >= len(bodies) {
			<-r.Context().Done()
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = w.Write([]byte(bodies[i]))
	}))
	t.Cleanup(ts.Close)
	return ts
}

// The parser follows the event-stream format: CRLF, CR and LF line ends,
// a BOM, comments, a space after the colon or none, data on several
// lines, an id that persists, events without data that are not
// dispatched, unknown events, a cut last event; a close event that
// credentials cannot survive ends the stream with its error.
func TestInboxStreamParsesTheEventStreamFormat(t *testing.T) {
	item := func(id int64, title string) string {
		return fmt.Sprintf(`{"id":%d,"user_id":"u1","notification_id":"n%d","type":"news","title":%q,"created_at":"2026-01-01T00:00:00Z"}`, id, id, title)
	}
	var lastIDs idLog
	bodies := []string{
		"\xEF\xBB\xBFretry: 10\n\n: heartbeat\n\nid: 1\nevent: inbox\ndata: " + item(1, "one") + "\n\n" +
			"id:2\r\nevent:inbox\r\ndata:" + item(2, "two") + "\r\n\r\n" +
			"event: something-new\rdata: ignored\r\r" +
			"event: inbox\nid: 3\n\n" + // no data: not dispatched, but its id is kept
			"id: 4\nevent: inbox\ndata: {\"id\":4,\"user_id\":\"u1\",\ndata: \"title\":\"four\"}\n\n" +
			"id: 5\nevent: inbox\ndata: " + item(5, "cut"), // the connection ends mid-event
		"id: 5\nevent: inbox\ndata: " + item(5, "five") + "\n\n" +
			"event: close\ndata: {\"reason\":\"max_lifetime\",\"message\":\"reconnect\"}\n\n",
		"event: close\ndata: {\"reason\":\"credentials_expired\",\"message\":\"the user token expired\"}\n\n",
	}
	ts := sseServer(t, bodies, &lastIDs)
	c, err := heraldclient.New(ts.URL, heraldclient.WithRetry(heraldclient.RetryPolicy{Attempts: 2, BaseBackoff: time.Millisecond, MaxBackoff: 50 * time.Millisecond}))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	var titles []string
	var last error
	for ev, err := range c.InboxStream(ctx, "u1", heraldclient.StreamOptions{LastEventID: "0"}) {
		if err != nil {
			last = err
			break
		}
		titles = append(titles, ev.ID+":"+ev.Item.Title)
	}
	if got := strings.Join(titles, ","); got != "1:one,2:two,4:four,5:five" {
		t.Errorf("events %s", got)
	}
	var ce *heraldclient.StreamClosedError
	if !errors.As(last, &ce) || ce.Reason != heraldclient.CloseCredentialExpired {
		t.Errorf("the stream ended with %v, want the credentials_expired close", last)
	}
	if got := strings.Join(lastIDs.get(), ","); got != "0,4,5" {
		t.Errorf("Last-Event-ID of each connection: %s, want 0,4,5", got)
	}
}

// A connection on which nothing arrives is dropped and made again.
func TestInboxStreamDropsAnIdleConnection(t *testing.T) {
	var lastIDs idLog
	ts := sseServer(t, []string{"retry: 10\n\n", "retry: 10\n\n"}, &lastIDs)
	c, _ := heraldclient.New(ts.URL)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	for _, err := range c.InboxStream(ctx, "u1", heraldclient.StreamOptions{LastEventID: "7", IdleTimeout: 100 * time.Millisecond}) {
		t.Fatalf("yielded %v", err)
	}
	if len(lastIDs.get()) < 3 {
		t.Errorf("%d connections in 3 s with a 100 ms idle timeout", len(lastIDs.get()))
	}
}

// The server ends each stream at its lifetime with a close event; the
// client reconnects from the last item, and the items written around the
// reconnections all arrive, once each, in order.
func TestInboxStreamOutlivesTheServersStreamLifetime(t *testing.T) {
	s := newServer(t, serverOptions{streams: httpapi.StreamConfig{MaxLifetime: 300 * time.Millisecond}})
	c := s.client(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	if _, err := c.PutUser(ctx, "u1", heraldclient.UserInput{}); err != nil {
		t.Fatal(err)
	}
	events, errs := collect(ctx, c.InboxStream(ctx, "u1", heraldclient.StreamOptions{LastEventID: "0"}))
	const n = 6
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := range n {
			if _, err := c.Trigger(ctx, heraldclient.TriggerRequest{UserID: "u1", Type: "news", Title: fmt.Sprint("item ", i),
				Channels: []heraldtype.Channel{heraldtype.ChannelInApp}}); err != nil {
				t.Error(err)
				return
			}
			time.Sleep(250 * time.Millisecond) // across several lifetimes
		}
	}()
	var prev int64
	for i := range n {
		ev := receive(t, events, errs)
		if ev.Item.Title != fmt.Sprint("item ", i) || ev.Item.ID <= prev {
			t.Fatalf("event %d: %+v after id %d", i, ev, prev)
		}
		prev = ev.Item.ID
	}
	<-done
	select {
	case ev := <-events:
		t.Errorf("an extra event %+v", ev)
	case <-time.After(500 * time.Millisecond):
	}
}
