package storetest

import (
	"slices"
	"testing"
	"time"

	"github.com/heraldhq/herald/heraldtype"
)

// testHistoryScan covers the history's status filter on many
// notifications (issue 34 item 3): a page examines at most its scan bound
// of notifications, newest first, in chunks. A status whose notifications
// are all behind more than the bound of others gives an empty first page
// with a cursor; the cursors reach every match once, in order. A page
// that fills before the bound stops there, and a bound that ends exactly
// with the notifications gives no cursor.
func testHistoryScan(t *testing.T, newStore NewStore) {
	t.Parallel()
	f := newFixture(t, newStore)
	f.user("gone") // no device: its push notifications fail at enqueue
	f.user("here")
	f.device("here", "d1", heraldtype.PlatformAndroid)
	const old, recent = 5, 250
	var failed, pending []string // newest first
	var ns []heraldtype.Notification
	for i := range old + recent {
		user := "gone"
		if i >= old {
			user = "here"
		}
		n := f.notification(user)
		n.CreatedAt = at(time.Duration(i) * time.Second)
		ns = append(ns, n)
		if user == "gone" {
			failed = append([]string{n.ID}, failed...)
		} else {
			pending = append([]string{n.ID}, pending...)
		}
	}
	for chunk := range slices.Chunk(ns, 100) {
		f.enqueue(params(chunk...))
	}
	idsOf := func(es []heraldtype.HistoryEntry) []string {
		out := []string{}
		for _, e := range es {
			out = append(out, e.NotificationID)
		}
		return out
	}
	type pageOf struct {
		ids  []string
		next bool
	}
	// walk pages through filter with the bound scan and returns its pages.
	walk := func(filter heraldtype.HistoryFilter, scan int) []pageOf {
		t.Helper()
		var pages []pageOf
		for range 400 {
			es, next, err := f.s.ListHistory(f.ctx, filter, scan)
			if err != nil {
				t.Fatalf("ListHistory(%+v, %d): %v", filter, scan, err)
			}
			for _, e := range es {
				if e.Status != filter.Status {
					t.Fatalf("ListHistory(%+v): entry %s is %s", filter, e.NotificationID, e.Status)
				}
			}
			pages = append(pages, pageOf{idsOf(es), next != ""})
			if next == "" {
				return pages
			}
			filter.Cursor = next
		}
		t.Fatalf("ListHistory(%+v, %d): still a cursor after 400 pages", filter, scan)
		return nil
	}
	check := func(name string, got []pageOf, want ...pageOf) {
		t.Helper()
		if !slices.EqualFunc(got, want, func(a, b pageOf) bool { return slices.Equal(a.ids, b.ids) && a.next == b.next }) {
			t.Errorf("%s: pages %v, want %v", name, got, want)
		}
	}
	failedSt, pendingSt := heraldtype.HistoryFailed, heraldtype.HistoryPending

	// The five failed ones are behind 250 pending ones: with a bound of
	// 100 the first two pages examine 200 pending ones and hold nothing,
	// but say where to go on; the third reaches the failed ones.
	check("FAILED behind the bound", walk(heraldtype.HistoryFilter{Status: failedSt, Limit: 2}, 100),
		pageOf{[]string{}, true}, pageOf{[]string{}, true}, pageOf{failed[:2], true},
		pageOf{failed[2:4], true}, pageOf{failed[4:], false})
	// With the default bound one page walks 200 and then 55 of them.
	check("FAILED within the bound", walk(heraldtype.HistoryFilter{Status: failedSt, Limit: 2}, 0),
		pageOf{failed[:2], true}, pageOf{failed[2:4], true}, pageOf{failed[4:], false})
	check("FAILED, one page", walk(heraldtype.HistoryFilter{Status: failedSt}, 0), pageOf{failed, false})
	// A bound that ends exactly with the notifications: no cursor.
	check("bound at the end", walk(heraldtype.HistoryFilter{Status: failedSt, Limit: 10}, old+recent),
		pageOf{failed, false})
	// One short of the end: the last one is left for the next page.
	check("bound one short", walk(heraldtype.HistoryFilter{Status: failedSt, Limit: 10}, old+recent-1),
		pageOf{failed[:4], true}, pageOf{failed[4:], false})
	// A page that fills before the bound stops there.
	check("PENDING fills the page", walk(heraldtype.HistoryFilter{Status: pendingSt, Limit: 3, To: at(8 * time.Second)}, 100),
		pageOf{pending[recent-3:], false})
	es, next, err := f.s.ListHistory(f.ctx, heraldtype.HistoryFilter{Status: pendingSt, Limit: 3}, 10)
	if err != nil || !slices.Equal(idsOf(es), pending[:3]) || next == "" {
		t.Errorf("PENDING, limit 3, bound 10: %v %q %v, want %v and a cursor", idsOf(es), next, err, pending[:3])
	}
	// Every pending one once, in order, whatever the bound and limit.
	for _, c := range []struct{ limit, scan int }{{7, 10}, {10, 7}, {50, 60}, {200, 0}} {
		var all []string
		for _, p := range walk(heraldtype.HistoryFilter{Status: pendingSt, Limit: c.limit}, c.scan) {
			all = append(all, p.ids...)
		}
		if !slices.Equal(all, pending) {
			t.Errorf("PENDING, limit %d, bound %d: walked %d, want the %d pending ones in order", c.limit, c.scan, len(all), len(pending))
		}
	}
	// The status filter composes with the others.
	check("FAILED of a user", walk(heraldtype.HistoryFilter{Status: failedSt, UserID: "gone", Limit: 3}, 2),
		pageOf{failed[:2], true}, pageOf{failed[2:4], true}, pageOf{failed[4:], false})
	check("FAILED from a time", walk(heraldtype.HistoryFilter{Status: failedSt, From: at(3 * time.Second)}, 0),
		pageOf{failed[:2], false})
	check("SENT: none", walk(heraldtype.HistoryFilter{Status: heraldtype.HistorySent}, 0), pageOf{[]string{}, false})
}
