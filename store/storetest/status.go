package storetest

import (
	"fmt"
	"maps"
	"math/bits"
	"slices"
	"testing"
	"time"

	"github.com/heraldhq/herald/heraldtype"
	"github.com/heraldhq/herald/store"
	"github.com/heraldhq/herald/store/rules"
)

// statusKind is a kind of delivery the status rule tells apart: a state,
// and for pending whether quiet hours deferred it. Its error codes sort
// in a different order than its kinds, so the greatest code of a mix
// depends on the mix.
type statusKind struct {
	name string
	// to is the outcome that leaves a claimed delivery in this kind; nil
	// leaves it leased.
	to store.Transition
	// cancel: the delivery, released by to, is then cancelled with its
	// notification while the others of the mix are still leased.
	cancel bool
}

var statusKinds = []statusKind{
	{name: "pending", to: store.Released{}},
	{name: "deferred", to: store.ReleasedWithReason{Outcome: heraldtype.OutcomeDeferred, RunAt: at(8 * time.Hour),
		ErrorCode: heraldtype.CodeQuietHours, Error: "quiet hours"}},
	{name: "leased"},
	{name: "sent", to: store.Sent{}},
	{name: "dead", to: store.Dead{Failure: store.Failure{ErrorCode: "UNREGISTERED", Error: "UNREGISTERED"}}},
	{name: "unknown", to: store.Unknown{Failure: store.Failure{ErrorCode: "timeout", Error: "timed out"}}},
	{name: "skipped", to: store.Skipped{ErrorCode: "device_invalid", Error: "device invalid"}},
	{name: "opted_out", to: store.OptedOut{ErrorCode: "type_disabled", Error: "turned off"}},
	{name: "rate_limited", to: store.RateLimited{ErrorCode: "duplicate", Error: "a duplicate"}},
	{name: "cancelled", to: store.Released{}, cancel: true},
}

// testStatusAgreement runs the SQL form of the status rule (the history
// list, its status filter and its pages) over every mix of delivery kinds
// — one notification per subset of statusKinds, each kind one delivery —
// and checks it against the Go form over the same deliveries
// (rules.DeliveriesStatus, what GET /v1/notifications/{id} answers): the
// rule is written once, and both forms agree on every store (issue 22
// item 1, S3.9).
func testStatusAgreement(t *testing.T, newStore NewStore) {
	t.Parallel()
	f := newFixture(t, newStore)
	mixes := 1 << len(statusKinds)
	// User u<k> has k devices, so a notification to it gets k deliveries.
	for k := 0; k <= len(statusKinds); k++ {
		u := fmt.Sprintf("u%d", k)
		f.user(u)
		for i := range k {
			f.device(u, fmt.Sprintf("%s-d%d", u, i), heraldtype.PlatformAndroid)
		}
	}
	ns := make([]heraldtype.Notification, mixes)
	mixOf := map[string]int{}
	for m := range mixes {
		ns[m] = f.notification(fmt.Sprintf("u%d", bits.OnesCount(uint(m))))
		ns[m].CreatedAt = at(time.Duration(m) * time.Second)
		mixOf[ns[m].ID] = m
	}
	f.enqueue(params(ns...))
	byNotification := map[string][]heraldtype.Job{}
	for {
		jobs := f.claim("w", base(), 500)
		if len(jobs) == 0 {
			break
		}
		for _, j := range jobs {
			byNotification[j.Delivery.NotificationID] = append(byNotification[j.Delivery.NotificationID], j)
		}
	}
	// The cancelled kind's outcomes first, then the cancel of their
	// notifications (which finds only them pending), then the rest.
	var os, cancelling []store.Outcome
	var cancelled []string
	for id, jobs := range byNotification {
		slices.SortFunc(jobs, func(a, b heraldtype.Job) int { return int(a.Delivery.ID - b.Delivery.ID) })
		m, next := mixOf[id], 0
		for k, kind := range statusKinds {
			if m&(1<<k) == 0 {
				continue
			}
			switch {
			case kind.cancel:
				cancelling = append(cancelling, outcome(jobs[next], kind.to, at(time.Minute)))
				cancelled = append(cancelled, id)
			case kind.to != nil:
				os = append(os, outcome(jobs[next], kind.to, at(time.Minute)))
			}
			next++
		}
		if next != len(jobs) {
			t.Fatalf("notification %s (mix %b) has %d deliveries, want %d", id, m, len(jobs), next)
		}
	}
	f.complete(len(cancelling), cancelling...)
	if res := f.cancel(store.CancelParams{NotificationIDs: cancelled, Reason: "cancelled", Now: at(time.Minute)}); len(res.NotificationIDs) != len(cancelled) {
		t.Fatalf("cancelled %d notifications, want %d", len(res.NotificationIDs), len(cancelled))
	}
	f.complete(len(os), os...)

	type verdict struct {
		status heraldtype.HistoryStatus
		reason string
		perCh  map[heraldtype.Channel]heraldtype.HistoryStatus
	}
	want := map[string]verdict{}
	for _, n := range ns {
		st, reason, perCh := rules.DeliveriesStatus(n.Channels, f.deliveries(n.ID))
		want[n.ID] = verdict{st, reason, perCh}
	}
	walk := func(filter heraldtype.HistoryFilter) []heraldtype.HistoryEntry {
		t.Helper()
		var all []heraldtype.HistoryEntry
		for {
			es, next, err := f.s.ListHistory(f.ctx, filter, 0)
			if err != nil {
				t.Fatalf("ListHistory(%+v): %v", filter, err)
			}
			all = append(all, es...)
			if next == "" {
				return all
			}
			filter.Cursor = next
		}
	}
	all := walk(heraldtype.HistoryFilter{Limit: 200})
	if len(all) != mixes {
		t.Fatalf("history has %d entries, want %d", len(all), mixes)
	}
	seen := map[heraldtype.HistoryStatus]bool{}
	for _, e := range all {
		w := want[e.NotificationID]
		seen[w.status] = true
		if e.Status != w.status || e.Reason != w.reason {
			t.Errorf("mix %s: SQL says %s %q, Go says %s %q", mixName(mixOf[e.NotificationID]), e.Status, e.Reason, w.status, w.reason)
		}
		// One channel: its status is the notification's.
		if !maps.Equal(e.ChannelStatus, w.perCh) || w.perCh[heraldtype.ChannelPush] != w.status {
			t.Errorf("mix %s: channel status %v, Go says %v", mixName(mixOf[e.NotificationID]), e.ChannelStatus, w.perCh)
		}
	}
	// The filter selects by the same rule, page after page.
	for _, st := range heraldtype.HistoryStatuses {
		if !seen[st] {
			t.Errorf("no mix is %s", st)
		}
		var got, wantIDs []string
		for _, e := range walk(heraldtype.HistoryFilter{Status: st, Limit: 50}) {
			got = append(got, e.NotificationID)
		}
		for i := len(ns) - 1; i >= 0; i-- {
			if want[ns[i].ID].status == st {
				wantIDs = append(wantIDs, ns[i].ID)
			}
		}
		if !slices.Equal(got, wantIDs) {
			t.Errorf("status=%s lists %d notifications, want %d", st, len(got), len(wantIDs))
		}
	}
}

// mixName lists the kinds of a mix.
func mixName(m int) string {
	var names []string
	for k, kind := range statusKinds {
		if m&(1<<k) != 0 {
			names = append(names, kind.name)
		}
	}
	return fmt.Sprint(names)
}
