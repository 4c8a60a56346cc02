package storetest

import (
	"testing"
	"time"

	"github.com/heraldhq/herald/heraldtype"
)

// testInboxState: the counts of the stream's state event (issue 35 item
// 1) follow every mark — seen, read, read-all, click, archive — and the
// unseen count reads only the newest heraldtype.InboxUnseenWindow items.
func testInboxState(t *testing.T, newStore NewStore) {
	t.Parallel()
	f := newFixture(t, newStore)
	f.user("u1")
	f.user("u2")
	want := func(user string, unread, unseen int) {
		t.Helper()
		st, err := f.s.InboxState(f.ctx, user)
		if err != nil {
			t.Fatalf("InboxState(%s): %v", user, err)
		}
		if st != (heraldtype.InboxState{Unread: unread, Unseen: unseen}) {
			t.Fatalf("InboxState(%s) = %+v, want unread %d, unseen %d", user, st, unread, unseen)
		}
	}
	// Failure paths first: an unknown user and an empty inbox have none.
	want("nobody", 0, 0)
	want("u1", 0, 0)

	ids := f.inboxIDs("u1", "u1", "u1", "u1", "u2")
	want("u1", 4, 4)
	want("u2", 1, 1)
	now := at(time.Minute)
	if _, err := f.s.MarkInboxSeen(f.ctx, "u1", ids[:1], now); err != nil {
		t.Fatal(err)
	}
	want("u1", 4, 3) // seen is not read
	if _, err := f.s.MarkInboxRead(f.ctx, "u1", ids[1:2], now); err != nil {
		t.Fatal(err)
	}
	want("u1", 3, 3) // read is not seen
	if err := f.s.ClickInboxItem(f.ctx, "u1", ids[2], "", now); err != nil {
		t.Fatal(err)
	}
	want("u1", 2, 2) // a click is both
	if err := f.s.ArchiveInboxItem(f.ctx, "u1", ids[3], now); err != nil {
		t.Fatal(err)
	}
	want("u1", 1, 1) // archived counts as neither
	if _, err := f.s.MarkAllInboxRead(f.ctx, "u1", now); err != nil {
		t.Fatal(err)
	}
	want("u1", 0, 1)
	want("u2", 1, 1) // another user's marks leave u2 alone

	// The window: one unseen item older than the newest InboxUnseenWindow
	// is not counted as unseen; it still counts as unread.
	ns := make([]heraldtype.Notification, heraldtype.InboxUnseenWindow)
	for i := range ns {
		ns[i] = f.on("u2", heraldtype.ChannelInApp)
	}
	res := f.enqueue(params(ns...))
	want("u2", 1+len(ns), heraldtype.InboxUnseenWindow)
	newest := res.Inbox[len(res.Inbox)-1].ID
	if _, err := f.s.MarkInboxSeen(f.ctx, "u2", []int64{newest}, now); err != nil {
		t.Fatal(err)
	}
	want("u2", 1+len(ns), heraldtype.InboxUnseenWindow-1)
}
