package storetest

import (
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/heraldhq/herald/heraldtype"
	"github.com/heraldhq/herald/store"
)

// testDigestCancel covers the cancel of digested triggers (issue 36 item
// 4): a cancel by key (one user's or every user's) or by the id a trigger
// was answered with takes the item out of its digest not yet sent, in the
// cancel's transaction, and reports it; the digest's message never shows
// it — a fire built before the cancel is refused and the digest, freed,
// is built again; a sent digest's items are not touched.
func testDigestCancel(t *testing.T, h Harness) {
	setup := func(t *testing.T) (*fixture, *digestIDs) {
		f := newFixture(t, h.New)
		f.user("u1")
		f.user("u2")
		f.device("u1", "d1", "android")
		f.device("u2", "d2", "android")
		return f, &digestIDs{}
	}
	// trigger is a digest trigger with a cancellation key ("" for none).
	trigger := func(f *fixture, ids *digestIDs, key string, after time.Duration, users ...string) store.EnqueueResult {
		f.t.Helper()
		p := f.digestParams(ids, "k", 10, false, after, users...)
		for i := range p.Notifications {
			p.Notifications[i].CancellationKey = key
		}
		return f.enqueue(p)
	}
	cancelAt := func(f *fixture, p store.CancelParams, now time.Time) store.CancelResult {
		p.Reason, p.Now = "cancelled by the test", now
		return f.cancel(p)
	}
	t.Run("ByKeyAndByID", func(t *testing.T) {
		t.Parallel()
		f, ids := setup(t)
		both := trigger(f, ids, "cart", 0, "u1", "u2")
		plain := trigger(f, ids, "", time.Second, "u1").Notifications[0]
		other := trigger(f, ids, "other", 2*time.Second, "u1").Notifications[0]
		u1, u2 := both.Notifications[0], both.Notifications[1]
		res := cancelAt(f, store.CancelParams{CancellationKey: "cart", UserID: "u1"}, at(3*time.Second))
		if len(res.DigestItems) != 1 || res.DigestItems[0] != (store.CancelledDigestItem{DigestID: u1.Digest, ItemID: u1.ID}) ||
			len(res.NotificationIDs) != 0 {
			t.Fatalf("cancel of u1's cart = %+v, want u1's item only", res)
		}
		if d := f.getDigest(u1.Digest); d.Items != 3 || d.Cancelled != 1 {
			t.Fatalf("u1's digest = %+v, want 3 items, 1 cancelled", d)
		}
		if items := f.entries(u1.Digest); len(items) != 2 || items[0].Notification != plain.ID || items[1].Notification != other.ID {
			t.Fatalf("u1's items = %+v, want the two not cancelled", items)
		}
		if again := cancelAt(f, store.CancelParams{CancellationKey: "cart", UserID: "u1"}, at(4*time.Second)); len(again.DigestItems) != 0 {
			t.Fatalf("a second cancel = %+v, want nothing new", again)
		}
		res = cancelAt(f, store.CancelParams{CancellationKey: "cart"}, at(4*time.Second))
		if len(res.DigestItems) != 1 || res.DigestItems[0].ItemID != u2.ID {
			t.Fatalf("cancel of every user's cart = %+v, want u2's item", res)
		}
		res = cancelAt(f, store.CancelParams{NotificationIDs: []string{other.ID}}, at(5*time.Second))
		if len(res.DigestItems) != 1 || res.DigestItems[0].ItemID != other.ID {
			t.Fatalf("cancel by the item's id = %+v", res)
		}
		if items := f.entries(u1.Digest); len(items) != 1 || items[0].Notification != plain.ID {
			t.Fatalf("u1's items = %+v, want only the one without a key", items)
		}
	})
	t.Run("AfterTheClaim", func(t *testing.T) {
		t.Parallel()
		f, ids := setup(t)
		a := trigger(f, ids, "cart", 0, "u1").Notifications[0]
		trigger(f, ids, "", time.Second, "u1")
		claimed := f.claimDigests("w", at(time.Minute), 10)
		if len(claimed) != 1 || claimed[0].Cancelled != 0 {
			t.Fatalf("claimed %+v", claimed)
		}
		// The worker read two items; then the cancel takes one out.
		if got := f.entries(a.Digest); len(got) != 2 {
			t.Fatalf("items before the cancel = %d", len(got))
		}
		if res := cancelAt(f, store.CancelParams{CancellationKey: "cart"}, at(time.Minute+time.Second)); len(res.DigestItems) != 1 {
			t.Fatalf("cancel of a claimed digest's item = %+v", res)
		}
		now := at(time.Minute + 2*time.Second)
		fire := store.DigestFire{ID: a.Digest, Owner: "w", Now: now, Cancelled: claimed[0].Cancelled}
		if fired, _, err := f.s.FireDigest(f.ctx, fire); err != nil || fired {
			t.Fatalf("a fire built before the cancel = %v, %v; want refused", fired, err)
		}
		again := f.claimDigests("w2", now, 10)
		if len(again) != 1 || again[0].ID != a.Digest || again[0].Cancelled != 1 {
			t.Fatalf("claim after the refused fire = %+v, want the digest again at once", again)
		}
		if got := f.entries(a.Digest); len(got) != 1 {
			t.Fatalf("items after the cancel = %+v", got)
		}
		fire.Owner, fire.Cancelled = "w2", again[0].Cancelled
		if fired, _, err := f.s.FireDigest(f.ctx, fire); err != nil || !fired {
			t.Fatalf("the fire built again = %v, %v", fired, err)
		}
	})
	t.Run("SentDigestUntouched", func(t *testing.T) {
		t.Parallel()
		f, ids := setup(t)
		a := trigger(f, ids, "cart", 0, "u1").Notifications[0]
		claimed := f.claimDigests("w", at(time.Minute), 10)
		fire := store.DigestFire{ID: a.Digest, Owner: "w", Now: at(time.Minute), Cancelled: claimed[0].Cancelled}
		if fired, _, err := f.s.FireDigest(f.ctx, fire); err != nil || !fired {
			t.Fatalf("fire = %v, %v", fired, err)
		}
		if res := cancelAt(f, store.CancelParams{CancellationKey: "cart"}, at(2*time.Minute)); len(res.DigestItems) != 0 {
			t.Fatalf("cancel after the digest was sent = %+v, want no item", res)
		}
		if d := f.getDigest(a.Digest); d.Cancelled != 0 || len(f.entries(a.Digest)) != 1 {
			t.Fatalf("sent digest = %+v", d)
		}
	})
}

// testDigestList covers ListDigests (GET /v1/digests): newest first, by
// user, type and state, in keyset pages; a bad state or cursor is refused
// by name.
func testDigestList(t *testing.T, h Harness) {
	t.Parallel()
	f := newFixture(t, h.New)
	f.user("u1")
	f.user("u2")
	ids := &digestIDs{}
	a := f.digestTrigger(ids, "a", 10, false, 0, "u1").Notifications[0].Digest
	b := f.digestTrigger(ids, "b", 10, false, time.Second, "u1").Notifications[0].Digest
	c := f.digestTrigger(ids, "a", 10, false, 2*time.Second, "u2").Notifications[0].Digest
	list := func(fl heraldtype.DigestFilter) ([]string, string) {
		t.Helper()
		ds, next, err := f.s.ListDigests(f.ctx, fl)
		if err != nil {
			t.Fatalf("ListDigests(%+v): %v", fl, err)
		}
		var got []string
		for _, d := range ds {
			got = append(got, d.ID)
		}
		return got, next
	}
	if got, next := list(heraldtype.DigestFilter{}); !slices.Equal(got, []string{c, b, a}) || next != "" {
		t.Fatalf("all = %v (%q), want newest first", got, next)
	}
	got, next := list(heraldtype.DigestFilter{UserID: "u1", Limit: 1})
	if !slices.Equal(got, []string{b}) || next == "" {
		t.Fatalf("u1's first page = %v (%q)", got, next)
	}
	if got, next = list(heraldtype.DigestFilter{UserID: "u1", Limit: 1, Cursor: next}); !slices.Equal(got, []string{a}) || next != "" {
		t.Fatalf("u1's second page = %v (%q)", got, next)
	}
	f.claimDigests("w", at(time.Minute), 1) // closes the only one due: a
	if got, _ := list(heraldtype.DigestFilter{State: store.DigestClosed}); !slices.Equal(got, []string{a}) {
		t.Fatalf("closed = %v", got)
	}
	if got, _ := list(heraldtype.DigestFilter{Type: "comment", State: store.DigestOpen}); !slices.Equal(got, []string{c, b}) {
		t.Fatalf("open comment digests = %v", got)
	}
	if got, _ := list(heraldtype.DigestFilter{Type: "other"}); len(got) != 0 {
		t.Fatalf("another type = %v", got)
	}
	_, _, err := f.s.ListDigests(f.ctx, heraldtype.DigestFilter{State: "done"})
	var he *heraldtype.Error
	if !errors.As(err, &he) || he.Code != heraldtype.EINVALID || he.Field != "state" {
		t.Fatalf("a bad state = %v, want invalid_argument on state", err)
	}
	_, _, err = f.s.ListDigests(f.ctx, heraldtype.DigestFilter{Cursor: "!!"})
	wantCode(t, err, heraldtype.EINVALID)
}
