package herald

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/heraldhq/herald/heraldtype"
	"github.com/heraldhq/herald/store/sqlite"
)

// stateStream is a StreamInboxWith running in the background: what it
// sent, in order, as "item <title>" and "state <unread>/<unseen>".
type stateStream struct {
	t    *testing.T
	got  chan string
	done chan error
}

func newStateClient(t *testing.T) *Client {
	t.Helper()
	st, err := sqlite.Open(t.Context(), filepath.Join(t.TempDir(), "herald.db"), sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	if err := st.Migrate(t.Context()); err != nil {
		t.Fatal(err)
	}
	// The poll is an hour: the signals must carry the counts.
	c, err := NewClient(Config{Store: st, InboxPollInterval: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.PutUser(t.Context(), "u1", UserInput{}); err != nil {
		t.Fatal(err)
	}
	return c
}

func startStateStream(ctx context.Context, t *testing.T, c *Client, lastID int64) *stateStream {
	s := &stateStream{t: t, got: make(chan string, 100), done: make(chan error, 1)}
	go func() {
		s.done <- c.StreamInboxWith(ctx, "u1", InboxStreamOptions{LastID: lastID,
			Item:      func(it heraldtype.InboxItem) error { s.got <- "item " + it.Title; return nil },
			State:     func(st InboxState) error { s.got <- fmt.Sprintf("state %d/%d", st.Unread, st.Unseen); return nil },
			Heartbeat: func() error { return nil },
		})
	}()
	return s
}

// expect reads the next events, which must be want, in order.
func (s *stateStream) expect(want ...string) {
	s.t.Helper()
	for _, w := range want {
		select {
		case g := <-s.got:
			if g != w {
				s.t.Fatalf("streamed %q, want %q", g, w)
			}
		case err := <-s.done:
			s.t.Fatalf("the stream ended (%v) before %q", err, w)
		case <-time.After(5 * time.Second):
			s.t.Fatalf("no %q within 5 s", w)
		}
	}
}

// quiet checks that nothing more was streamed for a while.
func (s *stateStream) quiet() {
	s.t.Helper()
	select {
	case g := <-s.got:
		s.t.Fatalf("streamed %q, want nothing", g)
	case <-time.After(200 * time.Millisecond):
	}
}

func (c *Client) inApp(t *testing.T, title string) {
	t.Helper()
	if _, err := c.Enqueue(t.Context(), Request{UserID: "u1", Type: "note", Title: title,
		Channels: []heraldtype.Channel{heraldtype.ChannelInApp}}); err != nil {
		t.Fatal(err)
	}
}

// TestStreamInboxState: a stream with State sends the counts after what
// it resumed with, and again after each mark of the user's read-state
// and each new item — only when they changed; StreamInbox's callers get
// items as before (issue 35 item 1).
func TestStreamInboxState(t *testing.T) {
	t.Parallel()
	c := newStateClient(t)
	ctx := t.Context()

	// Failure paths first: an unknown user; a State that fails ends the
	// stream with its error.
	if err := c.StreamInboxWith(ctx, "nobody", InboxStreamOptions{Item: func(heraldtype.InboxItem) error { return nil },
		State: func(InboxState) error { return nil }, Heartbeat: func() error { return nil }}); heraldtype.ErrorCode(err) != heraldtype.ENOTFOUND {
		t.Fatalf("stream of an unknown user: %v", err)
	}
	boom := errors.New("boom")
	if err := c.StreamInboxWith(ctx, "u1", InboxStreamOptions{Item: func(heraldtype.InboxItem) error { return nil },
		State: func(InboxState) error { return boom }, Heartbeat: func() error { return nil }}); !errors.Is(err, boom) {
		t.Fatalf("a failing State: %v, want its error", err)
	}

	c.inApp(t, "one")
	c.inApp(t, "two")
	sctx, cancel := context.WithCancel(ctx)
	s := startStateStream(sctx, t, c, 0)
	s.expect("item one", "item two", "state 2/2") // the counts after the backlog
	page, err := c.ListInbox(ctx, "u1", InboxFilter{})
	if err != nil || len(page.Items) != 2 {
		t.Fatalf("inbox: %+v %v", page, err)
	}
	two, one := page.Items[0].ID, page.Items[1].ID

	if _, err := c.MarkInboxRead(ctx, "u1", []int64{one}); err != nil {
		t.Fatal(err)
	}
	s.expect("state 1/2")
	// A signal that changed nothing sends nothing: a repeated mark (it
	// does not signal), a repeated archive and a bare wake-up (they do).
	if _, err := c.MarkInboxRead(ctx, "u1", []int64{one}); err != nil {
		t.Fatal(err)
	}
	c.hub.Publish("u1")
	s.quiet()
	if _, err := c.MarkInboxSeen(ctx, "u1", []int64{two}); err != nil {
		t.Fatal(err)
	}
	s.expect("state 1/1")
	if err := c.ClickInboxItem(ctx, "u1", two, ""); err != nil {
		t.Fatal(err)
	}
	s.expect("state 0/1")
	if err := c.ArchiveInboxItem(ctx, "u1", one); err != nil {
		t.Fatal(err)
	}
	s.expect("state 0/0")
	if err := c.ArchiveInboxItem(ctx, "u1", one); err != nil {
		t.Fatal(err)
	}
	s.quiet()
	c.inApp(t, "three")
	s.expect("item three", "state 1/1")
	if _, err := c.MarkAllInboxRead(ctx, "u1"); err != nil {
		t.Fatal(err)
	}
	s.expect("state 0/1")
	cancel()
	if err := <-s.done; err != nil {
		t.Fatalf("the stream ended with %v", err)
	}

	// It still resumes by item id: after "two", only "three", then the
	// counts as they are.
	s = startStateStream(ctx, t, c, two)
	s.expect("item three", "state 0/1")
	s.quiet()
	// Without State, StreamInbox sends items only, as it always did.
	items := make(chan string, 10)
	go c.StreamInbox(ctx, "u1", two, func(it heraldtype.InboxItem) error { items <- it.Title; return nil }, func() error { return nil })
	if got := <-items; got != "three" {
		t.Fatalf("StreamInbox streamed %q", got)
	}
}
