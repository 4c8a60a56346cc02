package storetest

import (
	"slices"
	"testing"
	"time"

	"github.com/heraldhq/herald/heraldtype"
	"github.com/heraldhq/herald/store"
)

// testOverview: the overview's counts come from the queue's states and
// stop at the cap, saying so; the oldest due pending delivery is found;
// the rollup adds an instance's rows, sums the instances when read, reads
// only the minutes asked for, and is pruned by age.
func testOverview(t *testing.T, newStore NewStore) {
	t.Parallel()
	f := newFixture(t, newStore)
	f.user("u1")
	f.device("u1", "d1", "android")
	var ns []heraldtype.Notification
	for range 5 {
		ns = append(ns, f.notification("u1"))
	}
	f.enqueue(params(ns...))
	jobs := f.claim("w", at(time.Minute), 2)
	f.complete(1, outcome(jobs[0], store.Dead{Failure: store.Failure{ErrorCode: "X"}}, at(time.Minute)))
	for i := range 3 {
		d := heraldtype.DeadEvent{Topic: "t", Offset: int64(i), Kind: "events", Value: []byte("v"), Error: "e", Attempts: 1}
		if _, err := f.s.PutDeadEvent(f.ctx, d, base()); err != nil {
			t.Fatal(err)
		}
	}

	o, err := f.s.Overview(f.ctx, store.OverviewParams{Now: at(2 * time.Minute), Since: base(), Cap: 10, MaxCodes: 10})
	if err != nil {
		t.Fatal(err)
	}
	queue := map[heraldtype.DeliveryState]int64{}
	for _, q := range o.Queue {
		if q.Channel != heraldtype.ChannelPush {
			t.Errorf("queue row %+v: want push", q)
		}
		queue[q.State] += q.Count
	}
	if queue[heraldtype.StatePending] != 3 || queue[heraldtype.StateLeased] != 1 || o.QueueCapped {
		t.Errorf("queue %v (capped %v), want 3 pending and 1 leased", queue, o.QueueCapped)
	}
	if o.DeadLetters != (heraldtype.CappedCount{Count: 1}) || o.DeadEvents != (heraldtype.CappedCount{Count: 3}) ||
		o.RuleRunsRunning != (heraldtype.CappedCount{}) {
		t.Errorf("dead letters %+v, dead events %+v, rule runs %+v; want 1, 3, 0", o.DeadLetters, o.DeadEvents, o.RuleRunsRunning)
	}
	if !o.OldestPending.Equal(base()) || !o.ReminderDue.IsZero() {
		t.Errorf("oldest pending %s, reminder due %s; want %s and none", o.OldestPending, o.ReminderDue, base())
	}

	capped, err := f.s.Overview(f.ctx, store.OverviewParams{Now: base().Add(-time.Second), Since: base(), Cap: 2, MaxCodes: 10})
	if err != nil {
		t.Fatal(err)
	}
	if !capped.QueueCapped || capped.DeadEvents != (heraldtype.CappedCount{Count: 2, Capped: true}) {
		t.Errorf("cap 2: queue capped %v, dead events %+v; want capped", capped.QueueCapped, capped.DeadEvents)
	}
	if !capped.OldestPending.IsZero() {
		t.Errorf("nothing is due before base, yet the oldest pending is %s", capped.OldestPending)
	}

	m := at(time.Minute).Truncate(time.Minute)
	add := func(instance string, rows ...store.DeliveryMinute) {
		t.Helper()
		if err := f.s.AddDeliveryMinutes(f.ctx, instance, rows); err != nil {
			t.Fatal(err)
		}
	}
	push := heraldtype.ChannelPush
	add("a", store.DeliveryMinute{Minute: m, Channel: push, Outcome: store.RollupSent, Count: 5},
		store.DeliveryMinute{Minute: m, Channel: push, Outcome: store.RollupFailed, ErrorCode: "X", Count: 2},
		store.DeliveryMinute{Minute: at(-2 * time.Hour), Channel: push, Outcome: store.RollupSent, Count: 100})
	add("b", store.DeliveryMinute{Minute: m.Add(30 * time.Second), Channel: heraldtype.ChannelSMS, Outcome: store.RollupSent, Count: 3},
		store.DeliveryMinute{Minute: m, Channel: push, Outcome: store.RollupFailed, ErrorCode: "Y", Count: 1})
	add("a", store.DeliveryMinute{Minute: m, Channel: push, Outcome: store.RollupSent, Count: 1},
		store.DeliveryMinute{Minute: m, Channel: push, Outcome: store.RollupSent, Count: 1})
	add("a")
	o, err = f.s.Overview(f.ctx, store.OverviewParams{Now: at(2 * time.Minute), Since: base(), Cap: 10, MaxCodes: 10})
	if err != nil {
		t.Fatal(err)
	}
	want := []heraldtype.MinuteCount{{Minute: m, Sent: 10, Failed: 3}}
	if !slices.EqualFunc(o.Minutes, want, func(a, b heraldtype.MinuteCount) bool {
		return a.Minute.Equal(b.Minute) && a.Sent == b.Sent && a.Failed == b.Failed
	}) {
		t.Errorf("minutes %+v, want %+v", o.Minutes, want)
	}
	if !slices.Equal(o.FailuresByCode, []heraldtype.CodeCount{{Code: "X", Count: 2}, {Code: "Y", Count: 1}}) {
		t.Errorf("failures by code %+v, want X 2, Y 1", o.FailuresByCode)
	}
	o, err = f.s.Overview(f.ctx, store.OverviewParams{Now: at(2 * time.Minute), Since: base(), Cap: 10, MaxCodes: 1})
	if err != nil || len(o.FailuresByCode) != 1 || o.FailuresByCode[0].Code != "X" {
		t.Errorf("one code: %+v, %v", o.FailuresByCode, err)
	}
	n, err := f.s.PruneDeliveryMinutes(f.ctx, base())
	if err != nil || n != 1 {
		t.Errorf("PruneDeliveryMinutes = %d, %v; want the one row two hours old", n, err)
	}
}

// testCountReplayable: the dry run of a bulk replay counts what the
// replay would take — dead and unknown deliveries of the filter — and
// stops past max.
func testCountReplayable(t *testing.T, newStore NewStore) {
	t.Parallel()
	f := newFixture(t, newStore)
	known := deadLetters(t, f)
	dead := 0
	for _, d := range known {
		if d.State == heraldtype.StateDead && d.LastErrorCode == "UNREGISTERED" {
			dead++
		}
	}
	for _, c := range []struct {
		filter heraldtype.DeliveryFilter
		max    int
		want   int
	}{
		{heraldtype.DeliveryFilter{ErrorCode: "UNREGISTERED"}, 100, dead},
		{heraldtype.DeliveryFilter{ErrorCode: "UNREGISTERED"}, 2, 3},
		{heraldtype.DeliveryFilter{Channel: heraldtype.ChannelSMS}, 100, 0},
		{heraldtype.DeliveryFilter{State: heraldtype.StateUnknown}, 100, 0},
	} {
		n, err := f.s.CountReplayable(f.ctx, c.filter, c.max)
		if err != nil || n != c.want {
			t.Errorf("CountReplayable(%+v, %d) = %d, %v; want %d", c.filter, c.max, n, err, c.want)
		}
	}
}
