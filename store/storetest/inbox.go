package storetest

import (
	"slices"
	"testing"
	"time"

	"github.com/heraldhq/herald/heraldtype"
)

// inboxIDs enqueues one in-app notification per user given, one trigger
// each so their items are in that order, and returns the item ids.
func (f *fixture) inboxIDs(userIDs ...string) []int64 {
	f.t.Helper()
	var out []int64
	for _, u := range userIDs {
		res := f.enqueue(params(f.on(u, heraldtype.ChannelInApp)))
		if len(res.Inbox) != 1 {
			f.t.Fatalf("Enqueue wrote inbox items %+v, want one", res.Inbox)
		}
		out = append(out, res.Inbox[0].ID)
	}
	return out
}

func itemIDs(items []heraldtype.InboxItem) []int64 {
	out := make([]int64, len(items))
	for i, it := range items {
		out[i] = it.ID
	}
	return out
}

// listInbox returns one page of the user's inbox.
func (f *fixture) listInbox(userID string, filter heraldtype.InboxFilter) ([]int64, string, int) {
	f.t.Helper()
	items, next, unread, err := f.s.ListInbox(f.ctx, userID, filter)
	if err != nil {
		f.t.Fatalf("ListInbox(%s, %+v): %v", userID, filter, err)
	}
	return itemIDs(items), next, unread
}

func testInbox(t *testing.T, newStore NewStore) {
	t.Parallel()
	f := newFixture(t, newStore)
	f.user("u1")
	f.user("u2")
	f.user("empty")
	ids := f.inboxIDs("u1", "u1", "u2", "u1", "u1", "u1")
	mine := []int64{ids[0], ids[1], ids[3], ids[4], ids[5]}
	other := ids[2]
	for i := 1; i < len(ids); i++ {
		if ids[i] <= ids[i-1] {
			t.Fatalf("inbox ids do not increase: %v", ids)
		}
	}
	newest := slices.Clone(mine)
	slices.Reverse(newest)

	// Pages, newest first.
	var got []int64
	cursor := ""
	for page := 0; ; page++ {
		p, next, unread := f.listInbox("u1", heraldtype.InboxFilter{Limit: 2, Cursor: cursor})
		if unread != 5 {
			t.Fatalf("unread = %d, want 5", unread)
		}
		got = append(got, p...)
		if next == "" {
			if page != 2 {
				t.Fatalf("inbox ended after %d pages, want 3", page+1)
			}
			break
		}
		cursor = next
	}
	if !slices.Equal(got, newest) {
		t.Fatalf("paged inbox = %v, want %v", got, newest)
	}
	if p, next, _ := f.listInbox("u2", heraldtype.InboxFilter{}); !slices.Equal(p, []int64{other}) || next != "" {
		t.Fatalf("u2 inbox = %v (next %q), want only its item", p, next)
	}
	if p, _, unread := f.listInbox("empty", heraldtype.InboxFilter{}); len(p) != 0 || unread != 0 {
		t.Fatalf("empty inbox = %v, unread %d", p, unread)
	}

	// Mark read: other users' ids are ignored, a second mark changes nothing.
	readAt := at(time.Minute)
	n, err := f.s.MarkInboxRead(f.ctx, "u1", []int64{mine[0], mine[1], other, 1 << 40}, readAt)
	if err != nil || n != 2 {
		t.Fatalf("MarkInboxRead = %d, %v; want 2", n, err)
	}
	if n, err := f.s.MarkInboxRead(f.ctx, "u1", []int64{mine[0]}, at(time.Hour)); err != nil || n != 0 {
		t.Fatalf("second MarkInboxRead = %d, %v; want 0", n, err)
	}
	if n, err := f.s.MarkInboxRead(f.ctx, "u1", nil, readAt); err != nil || n != 0 {
		t.Fatalf("MarkInboxRead of nothing = %d, %v", n, err)
	}
	items, _, unread, err := f.s.ListInbox(f.ctx, "u1", heraldtype.InboxFilter{})
	if err != nil || unread != 3 {
		t.Fatalf("after marking two read: unread %d, %v; want 3", unread, err)
	}
	for _, it := range items {
		if it.ID == mine[0] || it.ID == mine[1] {
			wantTimePtr(t, "ReadAt", it.ReadAt, readAt) // the first mark's time is kept
		} else if it.ReadAt != nil {
			t.Fatalf("item %d read: %+v", it.ID, it)
		}
	}
	if _, _, unread := f.listInbox("u2", heraldtype.InboxFilter{}); unread != 1 {
		t.Fatalf("u2 unread = %d after u1 marked its id, want 1", unread)
	}
	unreadIDs := []int64{mine[4], mine[3], mine[2]}
	if p, _, _ := f.listInbox("u1", heraldtype.InboxFilter{Unread: true}); !slices.Equal(p, unreadIDs) {
		t.Fatalf("unread listing = %v, want %v", p, unreadIDs)
	}

	// Archive: out of the live inbox and the unread count, into the archive.
	archivedAt := at(2 * time.Minute)
	if err := f.s.ArchiveInboxItem(f.ctx, "u1", mine[2], archivedAt); err != nil {
		t.Fatal(err)
	}
	if err := f.s.ArchiveInboxItem(f.ctx, "u1", mine[2], at(time.Hour)); err != nil {
		t.Fatalf("archiving twice: %v", err)
	}
	wantCode(t, f.s.ArchiveInboxItem(f.ctx, "u1", other, archivedAt), heraldtype.ENOTFOUND)
	wantCode(t, f.s.ArchiveInboxItem(f.ctx, "u1", 1<<40, archivedAt), heraldtype.ENOTFOUND)
	if p, _, unread := f.listInbox("u1", heraldtype.InboxFilter{}); len(p) != 4 || slices.Contains(p, mine[2]) || unread != 2 {
		t.Fatalf("live inbox after archiving = %v (unread %d), want 4 items and 2 unread", p, unread)
	}
	archived, _, _, err := f.s.ListInbox(f.ctx, "u1", heraldtype.InboxFilter{Archived: true})
	if err != nil || len(archived) != 1 || archived[0].ID != mine[2] {
		t.Fatalf("archive = %+v, %v", archived, err)
	}
	wantTimePtr(t, "ArchivedAt", archived[0].ArchivedAt, archivedAt)

	// Read all: every unread item, archived ones included.
	if n, err := f.s.MarkAllInboxRead(f.ctx, "u1", at(3*time.Minute)); err != nil || n != 3 {
		t.Fatalf("MarkAllInboxRead = %d, %v; want 3", n, err)
	}
	if _, _, unread := f.listInbox("u1", heraldtype.InboxFilter{}); unread != 0 {
		t.Fatalf("unread after read all = %d", unread)
	}
	if p, _, _ := f.listInbox("u1", heraldtype.InboxFilter{Unread: true}); len(p) != 0 {
		t.Fatalf("unread listing after read all = %v", p)
	}
	if _, _, unread := f.listInbox("u2", heraldtype.InboxFilter{}); unread != 1 {
		t.Fatalf("u2 unread = %d after u1 read all, want 1", unread)
	}

	_, _, _, err = f.s.ListInbox(f.ctx, "ghost", heraldtype.InboxFilter{})
	wantCode(t, err, heraldtype.ENOTFOUND)
	_, _, _, err = f.s.ListInbox(f.ctx, "u1", heraldtype.InboxFilter{Cursor: "not a cursor"})
	wantCode(t, err, heraldtype.EINVALID)
	_, _, _, err = f.s.ListInbox(f.ctx, "u1", heraldtype.InboxFilter{Limit: -1})
	wantCode(t, err, heraldtype.EINVALID)
	if p, _, _ := f.listInbox("u1", heraldtype.InboxFilter{Limit: 100_000}); len(p) != 4 {
		t.Fatalf("listing with a huge limit = %v, want it capped, not refused", p)
	}
}

func testInboxSince(t *testing.T, newStore NewStore) {
	t.Parallel()
	f := newFixture(t, newStore)
	f.user("u1")
	f.user("u2")
	ids := f.inboxIDs("u1", "u2", "u1", "u1", "u1")
	mine := []int64{ids[0], ids[2], ids[3], ids[4]}
	since := func(after int64, limit int) []int64 {
		t.Helper()
		items, err := f.s.InboxSince(f.ctx, "u1", after, limit)
		if err != nil {
			t.Fatalf("InboxSince(%d, %d): %v", after, limit, err)
		}
		for _, it := range items {
			if it.UserID != "u1" || it.Title != "Hello" {
				t.Fatalf("InboxSince item = %+v", it)
			}
		}
		return itemIDs(items)
	}
	if got := since(0, 10); !slices.Equal(got, mine) {
		t.Fatalf("InboxSince(0) = %v, want %v oldest first", got, mine)
	}
	if got := since(mine[0], 2); !slices.Equal(got, mine[1:3]) {
		t.Fatalf("InboxSince(%d, 2) = %v, want %v", mine[0], got, mine[1:3])
	}
	if err := f.s.ArchiveInboxItem(f.ctx, "u1", mine[1], base()); err != nil {
		t.Fatal(err)
	}
	if got := since(mine[0], 10); !slices.Equal(got, mine[2:]) {
		t.Fatalf("InboxSince after archiving = %v, want %v", got, mine[2:])
	}
	if got := since(mine[3], 10); len(got) != 0 {
		t.Fatalf("InboxSince(last) = %v, want none", got)
	}
	if items, err := f.s.InboxSince(f.ctx, "ghost", 0, 10); err != nil || len(items) != 0 {
		t.Fatalf("InboxSince of an unknown user = %+v, %v; want none", items, err)
	}
	_, err := f.s.InboxSince(f.ctx, "u1", 0, 0)
	wantCode(t, err, heraldtype.EINVALID)
	_, err = f.s.InboxSince(f.ctx, "u1", -1, 10)
	wantCode(t, err, heraldtype.EINVALID)
}
