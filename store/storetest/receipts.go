package storetest

import (
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/heraldhq/herald/heraldtype"
	"github.com/heraldhq/herald/store"
)

// testReceipts: Store.RecordReceipts puts each receipt on its delivery's
// timeline once — a repeated one, in the same batch or a later one, is a
// duplicate — only for the delivery that has both ids and, for a user,
// is that user's (another user's answers as a missing one), never before
// the delivery's creation, and moves nothing (issue 35 item 1).
func testReceipts(t *testing.T, newStore NewStore) {
	t.Parallel()
	f := newFixture(t, newStore)
	f.contact("u1", "+15550001", "u1@example.com")
	f.contact("u2", "+15550002", "u2@example.com")
	n1, n2 := f.on("u1", heraldtype.ChannelSMS), f.on("u2", heraldtype.ChannelSMS)
	f.enqueue(channelParams(n1, n2))
	d1, d2 := f.delivery(n1.ID), f.delivery(n2.ID)

	record := func(rs []store.Receipt, want ...heraldtype.ReceiptResult) {
		t.Helper()
		got, err := f.s.RecordReceipts(f.ctx, rs)
		if err != nil || !slices.Equal(got, want) {
			t.Fatalf("RecordReceipts = %v, %v; want %v", got, err, want)
		}
	}
	batch := []store.Receipt{
		{DeliveryID: d1.ID, NotificationID: n1.ID, UserID: "u1", Event: heraldtype.ReceiptOpened, At: at(time.Minute)},
		{DeliveryID: d1.ID, NotificationID: n1.ID, UserID: "u1", Event: heraldtype.ReceiptClicked, Action: "reply", At: at(2 * time.Minute)},
		// Another user's delivery, no such delivery, a wrong notification
		// id: not found alike.
		{DeliveryID: d2.ID, NotificationID: n2.ID, UserID: "u1", Event: heraldtype.ReceiptOpened, At: at(time.Minute)},
		{DeliveryID: d2.ID + 1000, NotificationID: n1.ID, Event: heraldtype.ReceiptOpened, At: at(time.Minute)},
		{DeliveryID: d1.ID, NotificationID: n2.ID, Event: heraldtype.ReceiptDelivered, At: at(time.Minute)},
		// The first receipt again, in the same batch.
		{DeliveryID: d1.ID, NotificationID: n1.ID, UserID: "u1", Event: heraldtype.ReceiptOpened, At: at(3 * time.Minute)},
	}
	record(batch, heraldtype.ReceiptRecorded, heraldtype.ReceiptRecorded, heraldtype.ReceiptNotFound,
		heraldtype.ReceiptNotFound, heraldtype.ReceiptNotFound, heraldtype.ReceiptDuplicate)
	record(batch, heraldtype.ReceiptDuplicate, heraldtype.ReceiptDuplicate, heraldtype.ReceiptNotFound,
		heraldtype.ReceiptNotFound, heraldtype.ReceiptNotFound, heraldtype.ReceiptDuplicate)
	record(nil)

	d := f.delivery(n1.ID)
	if d.State != heraldtype.StatePending || d.LastErrorCode != "" {
		t.Fatalf("a receipt moved the delivery: %s %q", d.State, d.LastErrorCode)
	}
	wantOutcomes(t, d) // receipts are not attempts
	wantReceipts(t, d, heraldtype.ReceiptOpened, heraldtype.ReceiptClicked)
	if r := d.Receipts[0]; r.Action != "" {
		t.Fatalf("opened = %+v", r)
	}
	wantTime(t, "opened at", d.Receipts[0].At, at(time.Minute))
	if r := d.Receipts[1]; r.Action != "reply" {
		t.Fatalf("clicked = %+v", r)
	}
	wantReceipts(t, f.delivery(n2.ID))

	// A server key's receipt (no user) names any user's delivery; a time
	// before the delivery's creation is its creation.
	record([]store.Receipt{{DeliveryID: d2.ID, NotificationID: n2.ID, Event: heraldtype.ReceiptDelivered, At: at(-time.Hour)}},
		heraldtype.ReceiptRecorded)
	d = f.delivery(n2.ID)
	wantReceipts(t, d, heraldtype.ReceiptDelivered)
	wantTime(t, "clamped at", d.Receipts[0].At, d.CreatedAt)

	// The same receipt from several goroutines, and batches naming the
	// same receipts in opposite orders, land once each.
	var wg sync.WaitGroup
	results := make([][]heraldtype.ReceiptResult, 8)
	errs := make([]error, 8)
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rs := []store.Receipt{
				{DeliveryID: d1.ID, NotificationID: n1.ID, UserID: "u1", Event: heraldtype.ReceiptDismissed, At: at(time.Hour)},
				{DeliveryID: d2.ID, NotificationID: n2.ID, Event: heraldtype.ReceiptDismissed, At: at(time.Hour)},
			}
			if g%2 == 1 {
				slices.Reverse(rs)
			}
			results[g], errs[g] = f.s.RecordReceipts(f.ctx, rs)
		}()
	}
	wg.Wait()
	recorded := 0
	for g := range 8 {
		if errs[g] != nil {
			t.Fatalf("goroutine %d: %v", g, errs[g])
		}
		for _, r := range results[g] {
			if r == heraldtype.ReceiptRecorded {
				recorded++
			} else if r != heraldtype.ReceiptDuplicate {
				t.Fatalf("goroutine %d: %v", g, results[g])
			}
		}
	}
	if recorded != 2 {
		t.Fatalf("%d receipts recorded by the racing batches, want 2", recorded)
	}
	wantReceipts(t, f.delivery(n1.ID), heraldtype.ReceiptOpened, heraldtype.ReceiptClicked, heraldtype.ReceiptDismissed)
	wantReceipts(t, f.delivery(n2.ID), heraldtype.ReceiptDelivered, heraldtype.ReceiptDismissed)

	ok := store.Receipt{DeliveryID: d1.ID, NotificationID: n1.ID, Event: heraldtype.ReceiptOpened, At: base()}
	for _, bad := range []func(r *store.Receipt){
		func(r *store.Receipt) { r.DeliveryID = 0 },
		func(r *store.Receipt) { r.NotificationID = "" },
		func(r *store.Receipt) { r.Event = "" },
		func(r *store.Receipt) { r.At = time.Time{} },
		func(r *store.Receipt) { r.Action = string(make([]byte, heraldtype.MaxReceiptLinkLen+1)) },
	} {
		r := ok
		bad(&r)
		if _, err := f.s.RecordReceipts(f.ctx, []store.Receipt{ok, r}); heraldtype.ErrorCode(err) != heraldtype.EINVALID {
			t.Errorf("RecordReceipts(%+v) = %v, want invalid_argument", r, err)
		}
	}
	if _, err := f.s.RecordReceipts(f.ctx, make([]store.Receipt, store.MaxReceiptBatch+1)); heraldtype.ErrorCode(err) != heraldtype.EINVALID {
		t.Errorf("RecordReceipts over the bound = %v, want invalid_argument", err)
	}
}

// testInboxReceipts: marking an inbox item read (one by one or all) and
// archiving it record the read and archived receipts on its in-app
// delivery's timeline, once each, at the item's own read and archive
// times (issue 35 item 1).
func testInboxReceipts(t *testing.T, newStore NewStore) {
	t.Parallel()
	f := newFixture(t, newStore)
	f.user("u1")
	f.user("u2")
	ids := f.inboxIDs("u1", "u1", "u2")
	items, _, _, err := f.s.ListInbox(f.ctx, "u1", heraldtype.InboxFilter{Limit: 10})
	if err != nil || len(items) != 2 {
		t.Fatalf("ListInbox = %+v, %v", items, err)
	}
	nid := map[int64]string{}
	for _, it := range items {
		nid[it.ID] = it.NotificationID
	}
	receipts := func(item int64) []heraldtype.DeliveryReceipt {
		t.Helper()
		d := f.delivery(nid[item])
		wantOutcomes(t, d, heraldtype.OutcomeSent) // receipts are not attempts
		return d.Receipts
	}

	// Another user's id marks nothing and records nothing.
	for range 2 {
		if _, err := f.s.MarkInboxRead(f.ctx, "u1", []int64{ids[0], ids[2]}, at(time.Minute)); err != nil {
			t.Fatal(err)
		}
	}
	rs := receipts(ids[0])
	if len(rs) != 1 || rs[0].Event != "read" {
		t.Fatalf("receipts after MarkInboxRead = %+v", rs)
	}
	wantTime(t, "read at", rs[0].At, at(time.Minute))
	if n, err := f.s.MarkAllInboxRead(f.ctx, "u1", at(2*time.Minute)); err != nil || n != 1 {
		t.Fatalf("MarkAllInboxRead = %d, %v", n, err)
	}
	if rs := receipts(ids[1]); len(rs) != 1 || rs[0].Event != "read" || !rs[0].At.Equal(at(2*time.Minute)) {
		t.Fatalf("receipts after MarkAllInboxRead = %+v", rs)
	}
	if len(receipts(ids[0])) != 1 {
		t.Fatalf("MarkAllInboxRead recorded the read item again: %+v", receipts(ids[0]))
	}
	for i := range 2 {
		if err := f.s.ArchiveInboxItem(f.ctx, "u1", ids[0], at(time.Duration(3+i)*time.Minute)); err != nil {
			t.Fatal(err)
		}
	}
	rs = receipts(ids[0])
	if len(rs) != 2 || rs[1].Event != "archived" || !rs[1].At.Equal(at(3*time.Minute)) {
		t.Fatalf("receipts after ArchiveInboxItem = %+v", rs)
	}
	if err := f.s.ArchiveInboxItem(f.ctx, "u1", ids[2], at(time.Hour)); heraldtype.ErrorCode(err) != heraldtype.ENOTFOUND {
		t.Fatalf("archiving another user's item = %v, want not_found", err)
	}
	// An app receipt on the in-app delivery takes the same uniqueness.
	d := f.delivery(nid[ids[0]])
	got, err := f.s.RecordReceipts(f.ctx, []store.Receipt{
		{DeliveryID: d.ID, NotificationID: d.NotificationID, UserID: "u1", Event: heraldtype.ReceiptRead, At: at(time.Hour)},
		{DeliveryID: d.ID, NotificationID: d.NotificationID, UserID: "u1", Event: heraldtype.ReceiptClicked, At: at(time.Hour)},
	})
	if err != nil || !slices.Equal(got, []heraldtype.ReceiptResult{heraldtype.ReceiptDuplicate, heraldtype.ReceiptRecorded}) {
		t.Fatalf("RecordReceipts on an in-app delivery = %v, %v", got, err)
	}
}

// wantReceipts checks the events of a delivery's receipts, in order.
func wantReceipts(t *testing.T, d heraldtype.Delivery, want ...heraldtype.ReceiptEvent) {
	t.Helper()
	var got []heraldtype.ReceiptEvent
	for _, r := range d.Receipts {
		got = append(got, r.Event)
	}
	if !slices.Equal(got, want) {
		t.Fatalf("delivery %d receipts = %v, want %v", d.ID, got, want)
	}
}
