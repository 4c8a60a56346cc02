package storetest

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/heraldhq/herald/heraldtype"
	"github.com/heraldhq/herald/store"
)

// testDigests covers digests (issue 36 item 1): a digest type's triggers
// join their user's open digest of their key in the trigger's own
// transaction, max_items and the window close it, and the claim and the
// guarded fire send it once.
func testDigests(t *testing.T, h Harness) {
	setup := func(t *testing.T) (*fixture, *digestIDs) {
		f := newFixture(t, h.New)
		f.user("u1")
		f.user("u2")
		f.device("u1", "d1", "android")
		f.device("u2", "d2", "android")
		return f, &digestIDs{}
	}
	t.Run("CollectOneDigestPerKey", func(t *testing.T) {
		t.Parallel()
		f, ids := setup(t)
		var digest string
		for i := range 3 {
			res := f.digestTrigger(ids, "post-1", 10, false, time.Duration(i)*time.Second, "u1")
			n := res.Notifications[0]
			if n.Deliveries != 0 || n.Digest == "" {
				t.Fatalf("trigger %d = %+v, want an item of a digest and no delivery", i, n)
			}
			if digest != "" && n.Digest != digest {
				t.Fatalf("trigger %d joined %s, want %s", i, n.Digest, digest)
			}
			digest = n.Digest
			_, err := f.s.GetNotification(f.ctx, n.ID)
			wantCode(t, err, heraldtype.ENOTFOUND)
		}
		other := f.digestTrigger(ids, "post-2", 10, false, 0, "u1").Notifications[0].Digest
		theirs := f.digestTrigger(ids, "post-1", 10, false, 0, "u2").Notifications[0].Digest
		if other == digest || theirs == digest || other == theirs {
			t.Fatalf("digests %s, %s (other key), %s (other user): keys and users must not mix", digest, other, theirs)
		}
		if got := f.claimDigests("w1", at(time.Minute-time.Second), 10); len(got) != 0 {
			t.Fatalf("claimed %d digests before their window ended", len(got))
		}
		got := f.claimDigests("w1", at(time.Minute), 10)
		if len(got) != 3 {
			t.Fatalf("claimed %d digests, want 3", len(got))
		}
		c := claimedByID(t, got, digest)
		c.Entries = f.entries(digest)
		if c.Items != 3 || len(c.Entries) != 3 || c.State != store.DigestClosed || c.UserID != "u1" || c.Key != "post-1" {
			t.Fatalf("claimed %+v, want u1's post-1 digest closed with 3 items", c)
		}
		for i, it := range c.Entries {
			if it.Seq != i+1 || !it.CreatedAt.Equal(at(time.Duration(i)*time.Second)) || it.Title != "Hello" {
				t.Fatalf("item %d = %+v", i, it)
			}
		}
		if none, err := f.s.ListDigestItems(f.ctx, "nope"); err != nil || len(none) != 0 {
			t.Fatalf("ListDigestItems(unknown) = %v, %v", none, err)
		}
		if more := f.claimDigests("w2", at(time.Minute), 10); len(more) != 0 {
			t.Fatalf("a second claim took %d leased digests", len(more))
		}
	})
	t.Run("MaxItemsClosesEarly", func(t *testing.T) {
		t.Parallel()
		f, ids := setup(t)
		a := f.digestTrigger(ids, "k", 2, false, 0, "u1").Notifications[0].Digest
		b := f.digestTrigger(ids, "k", 2, false, time.Second, "u1").Notifications[0].Digest
		c := f.digestTrigger(ids, "k", 2, false, 2*time.Second, "u1").Notifications[0].Digest
		if a != b || c == a {
			t.Fatalf("digests %s %s %s: the second item fills the first, the third opens another", a, b, c)
		}
		d := f.getDigest(a)
		if d.State != store.DigestClosed || d.Items != 2 || !d.CloseAt.Equal(at(time.Second)) {
			t.Fatalf("full digest = %+v, want closed at the second item", d)
		}
		got := f.claimDigests("w1", at(2*time.Second), 10)
		if len(got) != 1 || got[0].ID != a || len(f.entries(a)) != 2 {
			t.Fatalf("claimed %+v, want only the full digest", got)
		}
	})
	t.Run("AfterTheWindowANewDigest", func(t *testing.T) {
		t.Parallel()
		f, ids := setup(t)
		a := f.digestTrigger(ids, "k", 10, false, 0, "u1").Notifications[0].Digest
		b := f.digestTrigger(ids, "k", 10, false, time.Minute, "u1").Notifications[0].Digest
		if a == b {
			t.Fatalf("a trigger at the window's end joined the old digest %s", a)
		}
		if d := f.getDigest(a); d.Items != 1 || d.State != store.DigestClosed {
			t.Fatalf("old digest = %+v, want closed with its one item", d)
		}
		if d := f.getDigest(b); d.Items != 1 || d.State != store.DigestOpen || !d.CloseAt.Equal(at(2*time.Minute)) {
			t.Fatalf("new digest = %+v", d)
		}
	})
	t.Run("ManyUsersOneTrigger", func(t *testing.T) {
		// One trigger to several users meets every case at once (on
		// PostgreSQL in one statement, issue 36 item 6): u1's open digest
		// whose window is over (closed, a new one opened), u2's open digest
		// (joined; it reaches max items and closes), u3 without one
		// (opened). The notifications come in no user order.
		t.Parallel()
		f, ids := setup(t)
		f.user("u3")
		f.device("u3", "d3", "android")
		stale := f.digestTrigger(ids, "k", 2, false, 0, "u1").Notifications[0].Digest
		live := f.digestTrigger(ids, "k", 2, false, 30*time.Second, "u2").Notifications[0].Digest
		res := f.digestTrigger(ids, "k", 2, false, time.Minute, "u3", "u2", "u1")
		u3, u2, u1 := res.Notifications[0], res.Notifications[1], res.Notifications[2]
		if u1.UserID != "u1" || u1.Digest == "" || u1.Digest == stale || u2.Digest != live || u3.Digest == "" ||
			u3.Digest == u1.Digest || u1.Deliveries+u2.Deliveries+u3.Deliveries != 0 {
			t.Fatalf("trigger of three = %+v, want u1 in a new digest, u2 in %s, u3 in a new one", res.Notifications, live)
		}
		if d := f.getDigest(stale); d.State != store.DigestClosed || d.Items != 1 {
			t.Fatalf("u1's old digest = %+v, want closed with one item", d)
		}
		if d := f.getDigest(live); d.State != store.DigestClosed || d.Items != 2 || !d.CloseAt.Equal(at(time.Minute)) {
			t.Fatalf("u2's digest = %+v, want full and closed now", d)
		}
		for _, n := range []store.EnqueuedNotification{u1, u3} {
			if d := f.getDigest(n.Digest); d.State != store.DigestOpen || d.Items != 1 || d.UserID != n.UserID ||
				!d.CloseAt.Equal(at(2*time.Minute)) {
				t.Fatalf("%s's new digest = %+v", n.UserID, d)
			}
		}
		if es := f.entries(live); len(es) != 2 || es[1].Seq != 2 || es[1].Notification != u2.ID {
			t.Fatalf("u2's items = %+v, want the trigger's as the second", es)
		}
		if es := f.entries(u1.Digest); len(es) != 1 || es[0].Seq != 1 || es[0].Notification != u1.ID {
			t.Fatalf("u1's new items = %+v", es)
		}
	})
	t.Run("ClaimMayReadItems", func(t *testing.T) {
		// A claim may read the items too, within ReadItems; what it reads
		// is what ListDigestItems reads (cancelled items left out).
		t.Parallel()
		f, ids := setup(t)
		for i := range 3 {
			f.digestTrigger(ids, "k", 10, false, time.Duration(i)*time.Second, "u1")
		}
		f.digestTrigger(ids, "k", 10, false, 0, "u2")
		for k, limit := range []int{2, 100} {
			// The second claim comes after the first one's lease.
			now := at(time.Minute + time.Duration(k)*time.Hour)
			got, err := f.s.ClaimDigests(f.ctx, store.DigestClaimParams{Owner: "w", Now: now,
				LeaseUntil: now.Add(time.Second), Limit: 10, ReadItems: limit})
			if err != nil || len(got) != 2 {
				t.Fatalf("ClaimDigests = %d digests, %v; want 2", len(got), err)
			}
			read := 0
			for _, c := range got {
				if c.Entries == nil {
					continue
				}
				read += len(c.Entries)
				if want := f.entries(c.ID); !slices.EqualFunc(c.Entries, want, func(a, b store.DigestItem) bool {
					return a.Seq == b.Seq && a.Notification == b.Notification && a.Title == b.Title && a.CreatedAt.Equal(b.CreatedAt)
				}) {
					t.Fatalf("claimed items of %s = %+v, want %+v", c.ID, c.Entries, want)
				}
			}
			if read > limit {
				t.Fatalf("the claim read %d items, past ReadItems %d", read, limit)
			}
		}
	})
	t.Run("ImmediateFirst", func(t *testing.T) {
		t.Parallel()
		f, ids := setup(t)
		first := f.digestTrigger(ids, "k", 10, true, 0, "u1").Notifications[0]
		if first.Digest != "" || first.Deliveries != 1 {
			t.Fatalf("first trigger = %+v, want a plain notification with its delivery", first)
		}
		second := f.digestTrigger(ids, "k", 10, true, time.Second, "u1").Notifications[0]
		if second.Digest == "" || second.Deliveries != 0 {
			t.Fatalf("second trigger = %+v, want an item", second)
		}
		got := f.claimDigests("w1", at(time.Minute), 10)
		if len(got) != 1 || got[0].Items != 1 || len(f.entries(got[0].ID)) != 1 || f.entries(got[0].ID)[0].Seq != 1 {
			t.Fatalf("claimed %+v, want the digest of the second trigger alone", got)
		}
		// A window with no trigger after the first is a digest without
		// items: sent with no notification.
		lone := f.digestTrigger(ids, "other", 10, true, 0, "u2").Notifications[0]
		if lone.Digest != "" {
			t.Fatalf("lone trigger = %+v", lone)
		}
		empty := f.claimDigests("w1", at(time.Minute), 10)
		if len(empty) != 1 || empty[0].Items != 0 {
			t.Fatalf("claimed %+v, want the empty digest", empty)
		}
		if fired, _, err := f.s.FireDigest(f.ctx, store.DigestFire{ID: empty[0].ID, Owner: "w1", Now: at(time.Minute)}); err != nil || !fired {
			t.Fatalf("FireDigest(empty) = %v, %v", fired, err)
		}
		if d := f.getDigest(empty[0].ID); d.State != store.DigestSent || d.NotificationID != "" {
			t.Fatalf("empty digest after its fire = %+v", d)
		}
	})
	t.Run("FireOnceUnderTheLease", func(t *testing.T) {
		t.Parallel()
		f, ids := setup(t)
		digest := f.digestTrigger(ids, "k", 10, false, 0, "u1").Notifications[0].Digest
		f.digestTrigger(ids, "k", 10, false, time.Second, "u1")
		// w1 claims and dies before its fire; its lease (1 min) ends and
		// w2 claims the digest again.
		if got := f.claimDigests("w1", at(time.Minute), 10); len(got) != 1 {
			t.Fatalf("w1 claimed %d", len(got))
		}
		if got := f.claimDigests("w2", at(time.Minute+30*time.Second), 10); len(got) != 0 {
			t.Fatalf("w2 claimed %d digests under w1's lease", len(got))
		}
		got := f.claimDigests("w2", at(2*time.Minute), 10)
		if len(got) != 1 || got[0].Items != 2 || len(f.entries(digest)) != 2 {
			t.Fatalf("w2 re-claimed %+v", got)
		}
		fire := func(owner, nid string) (bool, error) {
			n := f.notification("u1")
			n.ID = nid
			p := params(n)
			p.Now = at(2 * time.Minute)
			p.IdempotencyKey, p.IdempotencyNamespace, p.RequestHash = store.DigestIdempotencyKey(digest), store.DigestNamespace, "h"
			fired, _, err := f.s.FireDigest(f.ctx, store.DigestFire{ID: digest, Owner: owner, Now: p.Now, Enqueue: &p})
			return fired, err
		}
		if fired, err := fire("w1", "late"); err != nil || fired {
			t.Fatalf("w1's late fire = %v, %v; want refused", fired, err)
		}
		if _, err := f.s.GetNotification(f.ctx, "late"); heraldtype.ErrorCode(err) != heraldtype.ENOTFOUND {
			t.Fatalf("a refused fire wrote its notification: %v", err)
		}
		if fired, err := fire("w2", "digest-n"); err != nil || !fired {
			t.Fatalf("w2's fire = %v, %v", fired, err)
		}
		if fired, err := fire("w2", "again"); err != nil || fired {
			t.Fatalf("a second fire = %v, %v; want refused", fired, err)
		}
		d := f.getDigest(digest)
		if d.State != store.DigestSent || d.NotificationID != "digest-n" {
			t.Fatalf("digest after its fire = %+v", d)
		}
		if ds := f.deliveries("digest-n"); len(ds) != 1 {
			t.Fatalf("digest notification has %d deliveries, want 1", len(ds))
		}
		if got := f.claimDigests("w3", at(time.Hour), 10); len(got) != 0 {
			t.Fatalf("a sent digest was claimed again: %+v", got)
		}
	})
	t.Run("FireManyAllOrNothing", func(t *testing.T) {
		// A claimed batch fires in one transaction (issue 36 item 6): all
		// of it, or — one enqueue refused — none of it.
		t.Parallel()
		f, ids := setup(t)
		d1 := f.digestTrigger(ids, "k", 10, false, 0, "u1").Notifications[0].Digest
		d2 := f.digestTrigger(ids, "k", 10, false, 0, "u2").Notifications[0].Digest
		if got := f.claimDigests("w", at(time.Minute), 10); len(got) != 2 {
			t.Fatalf("claimed %d, want 2", len(got))
		}
		fireOf := func(digest, user, nid string) store.DigestFire {
			n := f.notification(user)
			n.ID = nid
			p := params(n)
			p.Now = at(time.Minute)
			p.IdempotencyKey, p.IdempotencyNamespace, p.RequestHash = store.DigestIdempotencyKey(digest), store.DigestNamespace, "h"
			return store.DigestFire{ID: digest, Owner: "w", Now: p.Now, Enqueue: &p}
		}
		bad := fireOf(d2, "ghost", "n-ghost")
		if _, err := f.s.FireDigests(f.ctx, []store.DigestFire{fireOf(d1, "u1", "n1"), bad}); heraldtype.ErrorCode(err) != heraldtype.ENOTFOUND {
			t.Fatalf("FireDigests with a missing user = %v, want not_found", err)
		}
		if d := f.getDigest(d1); d.State != store.DigestClosed || d.NotificationID != "" {
			t.Fatalf("after the refused batch, d1 = %+v; want it untouched", d)
		}
		if _, err := f.s.GetNotification(f.ctx, "n1"); heraldtype.ErrorCode(err) != heraldtype.ENOTFOUND {
			t.Fatalf("the refused batch wrote n1: %v", err)
		}
		got, err := f.s.FireDigests(f.ctx, []store.DigestFire{fireOf(d1, "u1", "n1"), fireOf(d2, "u2", "n2"),
			fireOf(d2, "u2", "n2-again")})
		if err != nil || len(got) != 3 || !got[0].Fired || !got[1].Fired || got[2].Fired ||
			got[0].Res.Notifications[0].ID != "n1" || got[1].Res.Notifications[0].ID != "n2" {
			t.Fatalf("FireDigests = %+v, %v; want both fired once", got, err)
		}
		for digest, nid := range map[string]string{d1: "n1", d2: "n2"} {
			if d := f.getDigest(digest); d.State != store.DigestSent || d.NotificationID != nid || len(f.deliveries(nid)) != 1 {
				t.Fatalf("digest %s = %+v, want sent as %s with its delivery", digest, d, nid)
			}
		}
	})
	t.Run("Failed", func(t *testing.T) {
		t.Parallel()
		f, ids := setup(t)
		digest := f.digestTrigger(ids, "k", 10, false, 0, "u1").Notifications[0].Digest
		f.claimDigests("w1", at(time.Minute), 10)
		fired, _, err := f.s.FireDigest(f.ctx, store.DigestFire{ID: digest, Owner: "w1", Now: at(time.Minute), Failure: "render_failed: title"})
		if err != nil || !fired {
			t.Fatalf("FireDigest(failure) = %v, %v", fired, err)
		}
		if d := f.getDigest(digest); d.State != store.DigestFailed || d.LastError != "render_failed: title" {
			t.Fatalf("failed digest = %+v", d)
		}
		_, err = f.s.GetDigest(f.ctx, "nope")
		wantCode(t, err, heraldtype.ENOTFOUND)
	})
	t.Run("Prune", func(t *testing.T) {
		t.Parallel()
		f, ids := setup(t)
		sent := f.digestTrigger(ids, "a", 10, false, 0, "u1").Notifications[0].Digest
		failed := f.digestTrigger(ids, "b", 10, false, 0, "u1").Notifications[0].Digest
		open := f.digestTrigger(ids, "c", 10, false, time.Hour, "u1").Notifications[0].Digest
		f.claimDigests("w1", at(time.Minute), 10)
		f.s.FireDigest(f.ctx, store.DigestFire{ID: sent, Owner: "w1", Now: at(time.Minute)})
		f.s.FireDigest(f.ctx, store.DigestFire{ID: failed, Owner: "w1", Now: at(2 * time.Minute), Failure: "x"})
		if n, err := f.s.PruneDigests(f.ctx, at(2*time.Minute)); err != nil || n != 1 {
			t.Fatalf("PruneDigests(before the failure) = %d, %v; want the sent one", n, err)
		}
		_, err := f.s.GetDigest(f.ctx, sent)
		wantCode(t, err, heraldtype.ENOTFOUND)
		if n, err := f.s.PruneDigests(f.ctx, at(48*time.Hour)); err != nil || n != 1 {
			t.Fatalf("PruneDigests(later) = %d, %v; want the failed one, never the open one", n, err)
		}
		if d := f.getDigest(open); d.State != store.DigestOpen {
			t.Fatalf("open digest = %+v", d)
		}
	})
	t.Run("IdempotencyKeyAndUnknownUser", func(t *testing.T) {
		t.Parallel()
		f, ids := setup(t)
		p := f.digestParams(ids, "k", 10, false, 0, "u1")
		p.IdempotencyKey, p.RequestHash = "order-1", "h"
		first := f.enqueue(p)
		again := f.digestParams(ids, "k", 10, false, time.Second, "u1")
		again.IdempotencyKey, again.RequestHash = "order-1", "h"
		if r := f.enqueue(again); !r.Replayed || !slices.Equal(r.Notifications, first.Notifications) {
			t.Fatalf("replay = %+v, want the original %+v", r, first)
		}
		if d := f.getDigest(first.Notifications[0].Digest); d.Items != 1 {
			t.Fatalf("digest after a replay holds %d items, want 1", d.Items)
		}
		_, err := f.s.Enqueue(f.ctx, f.digestParams(ids, "k", 10, false, 0, "u1", "ghost"))
		wantCode(t, err, heraldtype.ENOTFOUND)
		if d := f.getDigest(first.Notifications[0].Digest); d.Items != 1 {
			t.Fatalf("a refused trigger added to the digest: %+v", d)
		}
	})
	t.Run("EnqueueTxKeepsItsPromise", func(t *testing.T) {
		t.Parallel()
		f, ids := setup(t)
		tx, _, rollback := h.BeginTx(t, f.s)
		res, err := f.s.EnqueueTx(f.ctx, tx, f.digestParams(ids, "k", 10, false, 0, "u1"))
		if err != nil {
			t.Fatalf("EnqueueTx: %v", err)
		}
		if err := rollback(); err != nil {
			t.Fatalf("rollback: %v", err)
		}
		_, err = f.s.GetDigest(f.ctx, res.Notifications[0].Digest)
		wantCode(t, err, heraldtype.ENOTFOUND)
		tx, commit, _ := h.BeginTx(t, f.s)
		if res, err = f.s.EnqueueTx(f.ctx, tx, f.digestParams(ids, "k", 10, false, 0, "u1")); err != nil {
			t.Fatalf("EnqueueTx: %v", err)
		}
		if err := commit(); err != nil {
			t.Fatalf("commit: %v", err)
		}
		if d := f.getDigest(res.Notifications[0].Digest); d.Items != 1 || d.State != store.DigestOpen {
			t.Fatalf("committed digest = %+v", d)
		}
	})
}

// digestIDs hands out digest ids.
type digestIDs struct{ n int }

func (d *digestIDs) next() string {
	d.n++
	return fmt.Sprintf("g%04d", d.n)
}

// digestParams is a trigger of a digest type (window 1 min) at base+after
// for users.
func (f *fixture) digestParams(ids *digestIDs, key string, maxItems int, immediate bool, after time.Duration, users ...string) store.EnqueueParams {
	var ns []heraldtype.Notification
	for _, u := range users {
		n := f.notification(u)
		n.Type, n.CreatedAt = "comment", at(after)
		ns = append(ns, n)
	}
	p := params(ns...)
	p.Now = at(after)
	p.Digest = &store.DigestParams{Key: key, Window: time.Minute, MaxItems: maxItems, Immediate: immediate, NewID: ids.next}
	return p
}

func (f *fixture) digestTrigger(ids *digestIDs, key string, maxItems int, immediate bool, after time.Duration, users ...string) store.EnqueueResult {
	f.t.Helper()
	return f.enqueue(f.digestParams(ids, key, maxItems, immediate, after, users...))
}

func (f *fixture) claimDigests(owner string, now time.Time, limit int) []store.ClaimedDigest {
	f.t.Helper()
	got, err := f.s.ClaimDigests(f.ctx, store.DigestClaimParams{Owner: owner, Now: now, LeaseUntil: now.Add(time.Minute), Limit: limit})
	if err != nil {
		f.t.Fatalf("ClaimDigests: %v", err)
	}
	return got
}

func (f *fixture) entries(id string) []store.DigestItem {
	f.t.Helper()
	items, err := f.s.ListDigestItems(f.ctx, id)
	if err != nil {
		f.t.Fatalf("ListDigestItems(%s): %v", id, err)
	}
	return items
}

func (f *fixture) getDigest(id string) heraldtype.DigestInfo {
	f.t.Helper()
	d, err := f.s.GetDigest(f.ctx, id)
	if err != nil {
		f.t.Fatalf("GetDigest(%s): %v", id, err)
	}
	return d
}

func claimedByID(t *testing.T, cs []store.ClaimedDigest, id string) store.ClaimedDigest {
	t.Helper()
	i := slices.IndexFunc(cs, func(c store.ClaimedDigest) bool { return c.ID == id })
	if i < 0 {
		t.Fatalf("digest %s not among the claimed", id)
	}
	return cs[i]
}
