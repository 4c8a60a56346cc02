package herald_test

import (
	"context"
	"log/slog"
	"testing"
	"time"

	"github.com/heraldhq/herald"
	"github.com/heraldhq/herald/heraldtype"
	"github.com/heraldhq/herald/store/postgres"
	"github.com/heraldhq/herald/store/postgres/pgtest"
)

// TestInboxStreamAcrossInstances: with two instances on one PostgreSQL
// database, an in-app item enqueued on one reaches the stream held by the
// other (issue 5, S3.6), through the store's NOTIFY, not the poll.
func TestInboxStreamAcrossInstances(t *testing.T) {
	ctx := t.Context()
	a, b := twoInboxInstances(t)
	if _, err := a.PutUser(ctx, "u1", herald.UserInput{}); err != nil {
		t.Fatal(err)
	}
	sctx, cancel := context.WithCancel(ctx)
	defer cancel()
	got := make(chan heraldtype.InboxItem, 2)
	go b.StreamInbox(sctx, "u1", 0, func(it heraldtype.InboxItem) error { got <- it; return nil }, func() error { return nil })
	inApp := []heraldtype.Channel{heraldtype.ChannelInApp}
	// The first item proves the stream on B is up and subscribed (it
	// subscribes before its first read); the second can then only arrive
	// through the cross-instance signal, the poll being an hour.
	if _, err := a.Enqueue(ctx, herald.Request{UserID: "u1", Type: "note", Title: "first", Channels: inApp}); err != nil {
		t.Fatal(err)
	}
	select {
	case <-got:
	case <-time.After(10 * time.Second):
		t.Fatal("the stream never started")
	}
	start := time.Now()
	if _, err := a.Enqueue(ctx, herald.Request{UserID: "u1", Type: "note", Title: "hello from a", Channels: inApp}); err != nil {
		t.Fatal(err)
	}
	select {
	case it := <-got:
		if it.Title != "hello from a" {
			t.Fatalf("streamed %q", it.Title)
		}
		t.Logf("enqueue on instance A → stream on instance B: %v", time.Since(start))
	case <-time.After(10 * time.Second):
		t.Fatal("the item never reached the other instance's stream")
	}
}

// clusterClient is one instance of a cluster: a Client of cfg on its own
// store (a pool of its own) over the database schema every instance
// shares, migrated and closed at the test's end.
func clusterClient(t *testing.T, dsn, schema string, cfg herald.Config) *herald.Client {
	t.Helper()
	st, err := postgres.Open(t.Context(), dsn, postgres.Options{Schema: schema})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	if err := st.Migrate(t.Context()); err != nil {
		t.Fatal(err)
	}
	cfg.Store = st
	c, err := herald.NewClient(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestInboxStateAcrossInstances: a mark of the user's read-state on one
// instance reaches the stream held by the other as a state event, through
// the store's NOTIFY after the commit (issue 35 item 1); the poll is an
// hour and carries only items anyway.
func TestInboxStateAcrossInstances(t *testing.T) {
	ctx := t.Context()
	a, b := twoInboxInstances(t)
	if _, err := a.PutUser(ctx, "u1", herald.UserInput{}); err != nil {
		t.Fatal(err)
	}
	inApp := []heraldtype.Channel{heraldtype.ChannelInApp}
	if _, err := a.Enqueue(ctx, herald.Request{UserID: "u1", Type: "note", Title: "first", Channels: inApp}); err != nil {
		t.Fatal(err)
	}
	page, err := a.ListInbox(ctx, "u1", herald.InboxFilter{})
	if err != nil || len(page.Items) != 1 {
		t.Fatalf("inbox: %+v %v", page, err)
	}
	id := page.Items[0].ID
	sctx, cancel := context.WithCancel(ctx)
	defer cancel()
	states := make(chan herald.InboxState, 10)
	go b.StreamInboxWith(sctx, "u1", herald.InboxStreamOptions{LastID: id,
		Item:      func(heraldtype.InboxItem) error { return nil },
		State:     func(st herald.InboxState) error { states <- st; return nil },
		Heartbeat: func() error { return nil }})
	next := func(what string) herald.InboxState {
		t.Helper()
		select {
		case st := <-states:
			return st
		case <-time.After(10 * time.Second):
			t.Fatalf("%s: no state event on the other instance within 10 s", what)
		}
		return herald.InboxState{}
	}
	// The first state proves B's stream is up and subscribed.
	if st := next("start"); st != (herald.InboxState{Unread: 1, Unseen: 1}) {
		t.Fatalf("first state %+v", st)
	}
	start := time.Now()
	if _, err := a.MarkInboxSeen(ctx, "u1", []int64{id}); err != nil {
		t.Fatal(err)
	}
	if st := next("seen on A"); st != (herald.InboxState{Unread: 1, Unseen: 0}) {
		t.Fatalf("after seen on A: %+v", st)
	}
	t.Logf("mark on instance A → state on instance B: %v", time.Since(start))
	if _, err := a.MarkAllInboxRead(ctx, "u1"); err != nil {
		t.Fatal(err)
	}
	if st := next("read-all on A"); st != (herald.InboxState{}) {
		t.Fatalf("after read-all on A: %+v", st)
	}
}

// twoInboxInstances starts two Clients on one fresh PostgreSQL schema,
// polling their inbox streams only hourly, so what reaches a stream on one
// came through the store's NOTIFY from the other.
func twoInboxInstances(t *testing.T) (a, b *herald.Client) {
	t.Helper()
	dsn, schema := pgtest.NewSchema(t)
	instance := func() *herald.Client {
		c := clusterClient(t, dsn, schema, herald.Config{Providers: map[string]herald.Provider{"fcm": stubProvider{}},
			InboxPollInterval: time.Hour, Logger: slog.New(slog.DiscardHandler)})
		if err := c.Start(t.Context()); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Stop(context.Background()) })
		return c
	}
	return instance(), instance()
}
