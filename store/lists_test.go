package store_test

import (
	"errors"
	"testing"
	"time"

	"github.com/heraldhq/herald/heraldtype"
	"github.com/heraldhq/herald/store"
)

// wantField fails unless err is EINVALID on field.
func wantField(t *testing.T, what string, err error, field string) {
	t.Helper()
	var he *heraldtype.Error
	if !errors.As(err, &he) || he.Code != heraldtype.EINVALID || he.Field != field {
		t.Errorf("%s: error = %v, want %s on %q", what, err, heraldtype.EINVALID, field)
	}
}

// The page sizes of the lists: 0 is the default, more is capped, and the
// same everywhere.
func TestPageSizes(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		limit, deliveries, inbox, history int
	}{{0, 50, 50, 50}, {1, 1, 1, 1}, {200, 200, 200, 200}, {201, 201, 200, 200}, {5000, 1000, 200, 200}} {
		d, _, err := store.CheckDeliveryFilter(heraldtype.DeliveryFilter{Limit: c.limit})
		i, _, err2 := store.CheckInboxFilter(heraldtype.InboxFilter{Limit: c.limit})
		h, err3 := store.CheckHistoryFilter(&heraldtype.HistoryFilter{Limit: c.limit})
		if err := errors.Join(err, err2, err3); err != nil || d != c.deliveries || i != c.inbox || h != c.history {
			t.Errorf("limit %d: pages %d, %d, %d (%v); want %d, %d, %d", c.limit, d, i, h, err, c.deliveries, c.inbox, c.history)
		}
	}
	_, _, err := store.CheckDeliveryFilter(heraldtype.DeliveryFilter{Limit: -1})
	wantField(t, "deliveries", err, "limit")
	_, _, err = store.CheckInboxFilter(heraldtype.InboxFilter{Limit: -1})
	wantField(t, "inbox", err, "limit")
	_, err = store.CheckHistoryFilter(&heraldtype.HistoryFilter{Limit: -1})
	wantField(t, "history", err, "limit")
}

// A page read one row long is trimmed, and its cursor starts the next
// page below its last row; a page that was not longer has no next.
func TestIDPages(t *testing.T) {
	t.Parallel()
	ds := []heraldtype.Delivery{{ID: 9}, {ID: 7}, {ID: 4}}
	if got, next := store.DeliveryPage(ds, 3); len(got) != 3 || next != "" {
		t.Fatalf("a short page = %v, next %q; want all and no next", got, next)
	}
	got, next := store.DeliveryPage(ds, 2)
	if len(got) != 2 || next == "" {
		t.Fatalf("a long page = %v, next %q", got, next)
	}
	if _, below, err := store.CheckDeliveryFilter(heraldtype.DeliveryFilter{Cursor: next}); err != nil || below != 7 {
		t.Fatalf("next page starts below %d (%v), want 7", below, err)
	}
	items, next := store.InboxPage([]heraldtype.InboxItem{{ID: 5}, {ID: 3}}, 1)
	if _, below, err := store.CheckInboxFilter(heraldtype.InboxFilter{Cursor: next}); err != nil || below != 5 || len(items) != 1 {
		t.Fatalf("inbox page %v, next below %d (%v); want 1 item, below 5", items, below, err)
	}
	if _, below, err := store.CheckInboxFilter(heraldtype.InboxFilter{}); err != nil || below != 0 {
		t.Fatalf("first page below %d, %v", below, err)
	}
	for _, c := range []string{"not a cursor", "MA", "LTE", "eA"} { // junk, "0", "-1", "x"
		_, _, err := store.CheckDeliveryFilter(heraldtype.DeliveryFilter{Cursor: c})
		wantField(t, "delivery cursor "+c, err, "cursor")
		_, _, err = store.CheckInboxFilter(heraldtype.InboxFilter{Cursor: c})
		wantField(t, "inbox cursor "+c, err, "cursor")
	}
	_, _, err := store.CheckDeliveryFilter(heraldtype.DeliveryFilter{State: "lost"})
	wantField(t, "state", err, "state")
	wantField(t, "after_id", store.CheckInboxSince(-1, 10), "after_id")
	wantField(t, "since 0", store.CheckInboxSince(0, 0), "limit")
	wantField(t, "since max", store.CheckInboxSince(0, store.MaxInboxSince+1), "limit")
	if err := store.CheckInboxSince(0, store.MaxInboxSince); err != nil {
		t.Fatal(err)
	}
}

func TestHistoryPage(t *testing.T) {
	t.Parallel()
	at := time.Date(2026, 1, 2, 3, 4, 5, 678_912_000, time.UTC)
	es := []heraldtype.HistoryEntry{{NotificationID: "b", CreatedAt: at}, {NotificationID: "a", CreatedAt: at}}
	got, next := store.HistoryPage(es, 1)
	created, id, err := store.DecodeHistoryCursor(next)
	if err != nil || len(got) != 1 || id != "b" || !created.Equal(at) {
		t.Fatalf("page %v, cursor (%v, %q, %v); want b", got, created, id, err)
	}
	if _, next := store.HistoryPage(es, 2); next != "" {
		t.Fatalf("a short page has next %q", next)
	}
}
