package storetest

import (
	"sync"
	"testing"
	"time"

	"github.com/heraldhq/herald/heraldtype"
)

// testInboxSeenClicked: marking inbox items seen and clicking one set
// seen_at and clicked_at the first time only and record their seen and
// clicked receipts once on the item's delivery's timeline; a click marks
// the item seen and read too; another user's or an unknown item is not
// touched; racing clicks record one receipt of each event (issue 35
// item 1).
func testInboxSeenClicked(t *testing.T, newStore NewStore) {
	t.Parallel()
	f := newFixture(t, newStore)
	f.user("u1")
	f.user("u2")
	ids := f.inboxIDs("u1", "u1", "u1", "u2")
	item := func(userID string, id int64) heraldtype.InboxItem {
		t.Helper()
		items, _, _, err := f.s.ListInbox(f.ctx, userID, heraldtype.InboxFilter{Limit: 10})
		if err != nil {
			t.Fatal(err)
		}
		for _, it := range items {
			if it.ID == id {
				return it
			}
		}
		t.Fatalf("item %d not in %s's inbox %+v", id, userID, items)
		return heraldtype.InboxItem{}
	}
	receipts := func(it heraldtype.InboxItem) heraldtype.Delivery {
		t.Helper()
		return f.delivery(it.NotificationID)
	}

	// The item names its message as a push's data.messageId does.
	first := item("u1", ids[0])
	if d := receipts(first); first.MessageID != heraldtype.DeliveryKey(d.NotificationID, d.ID) {
		t.Fatalf("message_id = %q, want %q", first.MessageID, heraldtype.DeliveryKey(d.NotificationID, d.ID))
	}
	if first.SeenAt != nil || first.ClickedAt != nil {
		t.Fatalf("a new item is seen or clicked: %+v", first)
	}

	// Seen: a batch bounded like read (the store takes any length; the
	// client bounds it), unknown and other users' ids ignored, the first
	// time wins, one receipt.
	batch := []int64{ids[0], ids[3], 1 << 40}
	for i := range int64(998) {
		batch = append(batch, 1<<41+i)
	}
	if n, err := f.s.MarkInboxSeen(f.ctx, "u1", batch, at(time.Minute)); err != nil || n != 1 {
		t.Fatalf("MarkInboxSeen = %d, %v; want 1", n, err)
	}
	if n, err := f.s.MarkInboxSeen(f.ctx, "u1", []int64{ids[0]}, at(2*time.Minute)); err != nil || n != 0 {
		t.Fatalf("second MarkInboxSeen = %d, %v; want 0", n, err)
	}
	if n, err := f.s.MarkInboxSeen(f.ctx, "u1", nil, at(2*time.Minute)); err != nil || n != 0 {
		t.Fatalf("MarkInboxSeen of nothing = %d, %v", n, err)
	}
	got := item("u1", ids[0])
	wantTimePtr(t, "seen_at", got.SeenAt, at(time.Minute))
	if got.ReadAt != nil || got.ClickedAt != nil {
		t.Fatalf("seen marked more: %+v", got)
	}
	wantReceipts(t, receipts(got), heraldtype.ReceiptSeen)
	wantTime(t, "seen receipt", receipts(got).Receipts[0].At, at(time.Minute))
	if other := item("u2", ids[3]); other.SeenAt != nil {
		t.Fatalf("another user's item marked seen: %+v", other)
	}
	wantReceipts(t, receipts(item("u2", ids[3])))

	// Click: marks clicked, and seen and read where they are unset; the
	// first click's time and action win.
	if err := f.s.ClickInboxItem(f.ctx, "u1", ids[0], "open", at(3*time.Minute)); err != nil {
		t.Fatal(err)
	}
	if err := f.s.ClickInboxItem(f.ctx, "u1", ids[0], "later", at(4*time.Minute)); err != nil {
		t.Fatal(err)
	}
	got = item("u1", ids[0])
	wantTimePtr(t, "seen_at after click", got.SeenAt, at(time.Minute))
	wantTimePtr(t, "read_at after click", got.ReadAt, at(3*time.Minute))
	wantTimePtr(t, "clicked_at", got.ClickedAt, at(3*time.Minute))
	d := receipts(got)
	wantReceipts(t, d, heraldtype.ReceiptSeen, heraldtype.ReceiptRead, heraldtype.ReceiptClicked)
	if c := d.Receipts[2]; c.Action != "open" || !c.At.Equal(at(3*time.Minute)) {
		t.Fatalf("clicked receipt = %+v, want action open at the first click", c)
	}
	wantOutcomes(t, d, heraldtype.OutcomeSent)

	// A click on an item read earlier keeps its read time.
	if _, err := f.s.MarkInboxRead(f.ctx, "u1", []int64{ids[1]}, at(5*time.Minute)); err != nil {
		t.Fatal(err)
	}
	if err := f.s.ClickInboxItem(f.ctx, "u1", ids[1], "", at(6*time.Minute)); err != nil {
		t.Fatal(err)
	}
	got = item("u1", ids[1])
	wantTimePtr(t, "read_at of a read item clicked", got.ReadAt, at(5*time.Minute))
	wantTimePtr(t, "seen_at of a read item clicked", got.SeenAt, at(6*time.Minute))
	wantReceipts(t, receipts(got), heraldtype.ReceiptRead, heraldtype.ReceiptSeen, heraldtype.ReceiptClicked)

	// Another user's item and an unknown one are not found, and untouched.
	for _, id := range []int64{ids[3], 1 << 40} {
		if err := f.s.ClickInboxItem(f.ctx, "u1", id, "", at(7*time.Minute)); heraldtype.ErrorCode(err) != heraldtype.ENOTFOUND {
			t.Fatalf("ClickInboxItem(%d) = %v, want not_found", id, err)
		}
	}
	if other := item("u2", ids[3]); other.ClickedAt != nil || other.ReadAt != nil {
		t.Fatalf("another user's item clicked: %+v", other)
	}
	wantReceipts(t, receipts(item("u2", ids[3])))

	// Racing clicks of one item: one receipt of each event.
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for i := range 8 {
		wg.Go(func() {
			errs <- f.s.ClickInboxItem(f.ctx, "u1", ids[2], "", at(time.Duration(8+i)*time.Minute))
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatalf("racing ClickInboxItem: %v", err)
		}
	}
	got = item("u1", ids[2])
	d = receipts(got)
	wantReceipts(t, d, heraldtype.ReceiptSeen, heraldtype.ReceiptRead, heraldtype.ReceiptClicked)
	for _, r := range d.Receipts {
		if !r.At.Equal(*got.ClickedAt) {
			t.Fatalf("racing clicks: receipt %+v not at the winning click %v", r, got.ClickedAt)
		}
	}
}
