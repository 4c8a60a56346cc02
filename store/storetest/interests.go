package storetest

import (
	"fmt"
	"maps"
	"slices"
	"testing"
	"time"

	"github.com/heraldhq/herald/heraldtype"
)

// Interests (issue 20 item 3, S3.3): what a repeated interest keeps, a
// user's listing, the audience query's pages, and the prune.
func testInterests(t *testing.T, newStore NewStore) {
	t.Run("UpsertKeepsTheLatest", func(t *testing.T) {
		f := newFixture(t, newStore)
		f.user("u1")
		in := func(kind string, d time.Duration, data map[string]string) heraldtype.Interest {
			return heraldtype.Interest{UserID: "u1", Subject: "product:42", Kind: kind, At: at(d), Data: data}
		}
		// In one call: the later of two records of one key wins,
		// whatever their order.
		f.putInterests(in("VIEW", time.Hour, map[string]string{"v": "later"}), in("VIEW", 0, map[string]string{"v": "earlier"}),
			in("WATCH", 0, map[string]string{"target_price": "8000"}))
		// In a later call: an older record (a replay) changes nothing; a
		// newer one moves the time and replaces the data.
		f.putInterests(in("VIEW", 30*time.Minute, map[string]string{"v": "replayed"}),
			in("WATCH", 2*time.Hour, map[string]string{"target_price": "7000"}))
		got := f.interests(heraldtype.InterestFilter{UserID: "u1"})
		if len(got) != 2 {
			t.Fatalf("interests = %+v, want VIEW and WATCH", got)
		}
		wantTime(t, "VIEW.At", got[0].At, at(time.Hour))
		wantTime(t, "WATCH.At", got[1].At, at(2*time.Hour))
		if got[0].Kind != "VIEW" || got[0].Data["v"] != "later" || got[1].Data["target_price"] != "7000" {
			t.Fatalf("interests = %+v", got)
		}
		// An interest of a user Herald does not know is kept (the
		// behaviour stream may run ahead of registration).
		f.putInterests(heraldtype.Interest{UserID: "ghost", Subject: "product:42", Kind: "VIEW", At: at(0)})
		if got := f.interests(heraldtype.InterestFilter{UserID: "ghost"}); len(got) != 1 {
			t.Fatalf("ghost's interests = %+v", got)
		}
	})

	t.Run("ListPages", func(t *testing.T) {
		f := newFixture(t, newStore)
		f.user("u1")
		var is []heraldtype.Interest
		for i := range 7 {
			is = append(is, heraldtype.Interest{UserID: "u1", Subject: fmt.Sprintf("product:%d", i%3), Kind: fmt.Sprintf("K%d", i), At: at(0)})
		}
		f.putInterests(is...)
		var all []string
		filter := heraldtype.InterestFilter{UserID: "u1", Limit: 3}
		for {
			page, next, err := f.s.ListInterests(f.ctx, filter)
			if err != nil {
				t.Fatal(err)
			}
			for _, in := range page {
				all = append(all, in.Subject+"/"+in.Kind)
			}
			if next == "" {
				break
			}
			filter.Cursor = next
		}
		want := []string{"product:0/K0", "product:0/K3", "product:0/K6", "product:1/K1", "product:1/K4", "product:2/K2", "product:2/K5"}
		if !slices.Equal(all, want) {
			t.Fatalf("pages = %v, want %v", all, want)
		}
		one := f.interests(heraldtype.InterestFilter{UserID: "u1", Subject: "product:1"})
		if len(one) != 2 {
			t.Fatalf("product:1 = %+v", one)
		}
		_, _, err := f.s.ListInterests(f.ctx, heraldtype.InterestFilter{UserID: "u1", Cursor: "%%%"})
		wantCode(t, err, heraldtype.EINVALID)
		_, _, err = f.s.ListInterests(f.ctx, heraldtype.InterestFilter{})
		wantCode(t, err, heraldtype.EINVALID)
	})

	t.Run("Audience", func(t *testing.T) {
		f := newFixture(t, newStore)
		// 25 registered users: each viewed product:42 (at minute i);
		// every third also put it in the cart later; user 5 looked at
		// another product only; "ghost" is not registered.
		var is []heraldtype.Interest
		for i := range 25 {
			u := fmt.Sprintf("u%02d", i)
			f.user(u)
			subject := "product:42"
			if i == 5 {
				subject = "product:7"
			}
			is = append(is, heraldtype.Interest{UserID: u, Subject: subject, Kind: "VIEW", At: at(time.Duration(i) * time.Minute)})
			if i%3 == 0 {
				is = append(is, heraldtype.Interest{UserID: u, Subject: subject, Kind: "ADD_TO_CART",
					At: at(time.Hour + time.Duration(i)*time.Minute), Data: map[string]string{"target_price": fmt.Sprint(1000 + i)}})
			}
		}
		is = append(is, heraldtype.Interest{UserID: "ghost", Subject: "product:42", Kind: "VIEW", At: at(time.Hour)})
		f.putInterests(is...)

		audience := func(q heraldtype.InterestQuery) map[string]map[string]string {
			t.Helper()
			got := map[string]map[string]string{}
			q.Limit = 4
			var order []string
			for {
				page, err := f.s.InterestedUsers(f.ctx, q)
				if err != nil {
					t.Fatal(err)
				}
				for _, u := range page {
					if _, dup := got[u.UserID]; dup {
						t.Fatalf("user %s twice in the audience", u.UserID)
					}
					got[u.UserID] = u.Data
					order = append(order, u.UserID)
				}
				if len(page) < q.Limit {
					break
				}
				q.After = page[len(page)-1].UserID
			}
			if !slices.IsSorted(order) {
				t.Fatalf("audience not in user order: %v", order)
			}
			return got
		}
		// Any kind, any time: 24 registered viewers (not u05, not ghost).
		all := audience(heraldtype.InterestQuery{Subject: "product:42"})
		if len(all) != 24 || all["u05"] != nil || all["ghost"] != nil {
			t.Fatalf("audience = %v keys, want the 24 registered viewers", slices.Sorted(maps.Keys(all)))
		}
		// A user with both kinds carries the data of the latest (the cart's).
		if all["u03"]["target_price"] != "1003" || all["u04"] != nil {
			t.Fatalf("data: u03 %v, u04 %v", all["u03"], all["u04"])
		}
		// Cart users only (restock, S3.3).
		cart := audience(heraldtype.InterestQuery{Subject: "product:42", Kinds: []string{"ADD_TO_CART"}})
		want := []string{"u00", "u03", "u06", "u09", "u12", "u15", "u18", "u21", "u24"}
		if got := slices.Sorted(maps.Keys(cart)); !slices.Equal(got, want) {
			t.Fatalf("cart audience = %v, want %v", got, want)
		}
		// Within a window: viewers since minute 20 (u20..u24), or any kind
		// since then (the cart records of every third user are at 1 h+).
		recent := audience(heraldtype.InterestQuery{Subject: "product:42", Kinds: []string{"VIEW"}, Since: at(20 * time.Minute)})
		if got := slices.Sorted(maps.Keys(recent)); !slices.Equal(got, []string{"u20", "u21", "u22", "u23", "u24"}) {
			t.Fatalf("recent viewers = %v", got)
		}
		// The data is that of the latest *matching* interest: u03's VIEW
		// has none, though its later cart record has some.
		if recent := audience(heraldtype.InterestQuery{Subject: "product:42", Kinds: []string{"VIEW"}}); recent["u03"] != nil {
			t.Fatalf("u03's VIEW data = %v, want none", recent["u03"])
		}
		if got := audience(heraldtype.InterestQuery{Subject: "product:404"}); len(got) != 0 {
			t.Fatalf("nobody's product: %v", got)
		}
		_, err := f.s.InterestedUsers(f.ctx, heraldtype.InterestQuery{Subject: "product:42"})
		wantCode(t, err, heraldtype.EINVALID) // no limit
		_, err = f.s.InterestedUsers(f.ctx, heraldtype.InterestQuery{Limit: 10})
		wantCode(t, err, heraldtype.EINVALID) // no subject
	})

	t.Run("Prune", func(t *testing.T) {
		f := newFixture(t, newStore)
		var is []heraldtype.Interest
		for i := range 5 {
			is = append(is, heraldtype.Interest{UserID: "u1", Subject: "s", Kind: fmt.Sprint(i), At: at(time.Duration(i) * time.Hour)})
		}
		f.putInterests(is...)
		n, err := f.s.PruneInterests(f.ctx, at(3*time.Hour), 2)
		if err != nil || n != 2 {
			t.Fatalf("PruneInterests(limit 2) = %d, %v; want 2", n, err)
		}
		n, err = f.s.PruneInterests(f.ctx, at(3*time.Hour), 10)
		if err != nil || n != 1 {
			t.Fatalf("PruneInterests = %d, %v; want the third older than 3 h", n, err)
		}
		if got := f.interests(heraldtype.InterestFilter{UserID: "u1"}); len(got) != 2 {
			t.Fatalf("left: %+v", got)
		}
		_, err = f.s.PruneInterests(f.ctx, base(), 0)
		wantCode(t, err, heraldtype.EINVALID)
		wantCode(t, f.s.PutInterests(f.ctx, []heraldtype.Interest{{UserID: "u1", Subject: "s"}}), heraldtype.EINVALID)
	})
}

func (f *fixture) putInterests(is ...heraldtype.Interest) {
	f.t.Helper()
	if err := f.s.PutInterests(f.ctx, is); err != nil {
		f.t.Fatalf("PutInterests: %v", err)
	}
}

func (f *fixture) interests(filter heraldtype.InterestFilter) []heraldtype.Interest {
	f.t.Helper()
	is, _, err := f.s.ListInterests(f.ctx, filter)
	if err != nil {
		f.t.Fatalf("ListInterests: %v", err)
	}
	return is
}
