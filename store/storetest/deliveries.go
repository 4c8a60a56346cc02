package storetest

import (
	"fmt"
	"maps"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/heraldhq/herald/heraldtype"
	"github.com/heraldhq/herald/store"
)

// deadLetters builds 20 finished deliveries: 10 of type "reminder" for u1
// created at base, 10 of type "promo" for u2 created an hour later; by
// position, dead UNREGISTERED, dead INTERNAL or sent. It returns them as
// the test knows them (no attempts).
func deadLetters(t *testing.T, f *fixture) []heraldtype.Delivery {
	f.user("u1")
	f.user("u2")
	f.device("u1", "d1", "android")
	f.device("u2", "d2", "ios")
	var a, b []heraldtype.Notification
	for range 10 {
		a = append(a, f.notification("u1"))
		n := f.notification("u2")
		n.Type = "promo"
		b = append(b, n)
	}
	f.enqueue(params(a...))
	pb := params(b...)
	pb.Now = at(time.Hour)
	f.enqueue(pb)
	jobs := f.claim("w", at(2*time.Hour), 100)
	if len(jobs) != 20 {
		t.Fatalf("claimed %d, want 20", len(jobs))
	}
	var os []store.Outcome
	var known []heraldtype.Delivery
	for i, j := range jobs {
		d := j.Delivery
		var to store.Transition = store.Sent{}
		switch i % 3 {
		case 0:
			to, d.LastErrorCode = store.Dead{Failure: store.Failure{ErrorCode: "UNREGISTERED"}}, "UNREGISTERED"
		case 1:
			to, d.LastErrorCode = store.Dead{Failure: store.Failure{ErrorCode: "INTERNAL"}}, "INTERNAL"
		}
		os = append(os, outcome(j, to, at(3*time.Hour)))
		d.State = to.State()
		known = append(known, d)
	}
	f.complete(len(os), os...)
	return known
}

// listAll pages through ListDeliveries with a small page and checks that
// pages are newest first without duplicates.
func listAll(t *testing.T, f *fixture, filter heraldtype.DeliveryFilter) []int64 {
	t.Helper()
	filter.Limit = 3
	var got []int64
	for page := 0; ; page++ {
		ds, next, err := f.s.ListDeliveries(f.ctx, filter)
		if err != nil {
			t.Fatalf("ListDeliveries(%+v): %v", filter, err)
		}
		if len(ds) > 3 {
			t.Fatalf("page of %d, limit 3", len(ds))
		}
		for _, d := range ds {
			if len(got) > 0 && d.ID >= got[len(got)-1] {
				t.Fatalf("delivery %d after %d: not newest first, or repeated", d.ID, got[len(got)-1])
			}
			if len(d.Attempts) == 0 {
				t.Fatalf("delivery %d listed without its attempts", d.ID)
			}
			got = append(got, d.ID)
		}
		if next == "" {
			return got
		}
		if page > 20 {
			t.Fatal("pagination does not end")
		}
		filter.Cursor = next
	}
}

func testListDeliveries(t *testing.T, newStore NewStore) {
	t.Parallel()
	f := newFixture(t, newStore)
	known := deadLetters(t, f)
	want := func(keep func(d heraldtype.Delivery) bool) []int64 {
		var out []int64
		for _, d := range known {
			if keep(d) {
				out = append(out, d.ID)
			}
		}
		slices.Sort(out)
		slices.Reverse(out)
		return out
	}
	cases := []struct {
		name   string
		filter heraldtype.DeliveryFilter
		keep   func(d heraldtype.Delivery) bool
	}{
		{"all", heraldtype.DeliveryFilter{}, func(heraldtype.Delivery) bool { return true }},
		{"dead", heraldtype.DeliveryFilter{State: heraldtype.StateDead}, func(d heraldtype.Delivery) bool { return d.State == heraldtype.StateDead }},
		{"code", heraldtype.DeliveryFilter{State: heraldtype.StateDead, ErrorCode: "UNREGISTERED"},
			func(d heraldtype.Delivery) bool { return d.LastErrorCode == "UNREGISTERED" }},
		{"type", heraldtype.DeliveryFilter{Type: "promo"}, func(d heraldtype.Delivery) bool { return d.Type == "promo" }},
		{"user", heraldtype.DeliveryFilter{UserID: "u1", State: heraldtype.StateSent},
			func(d heraldtype.Delivery) bool { return d.UserID == "u1" && d.State == heraldtype.StateSent }},
		{"notification", heraldtype.DeliveryFilter{NotificationID: known[4].NotificationID},
			func(d heraldtype.Delivery) bool { return d.NotificationID == known[4].NotificationID }},
		{"from", heraldtype.DeliveryFilter{From: at(time.Hour)}, func(d heraldtype.Delivery) bool { return d.UserID == "u2" }},
		{"to", heraldtype.DeliveryFilter{To: at(time.Hour)}, func(d heraldtype.Delivery) bool { return d.UserID == "u1" }},
		{"empty", heraldtype.DeliveryFilter{State: heraldtype.StatePending}, func(heraldtype.Delivery) bool { return false }},
		{"channel", heraldtype.DeliveryFilter{State: heraldtype.StateDead, Channel: heraldtype.ChannelPush},
			func(d heraldtype.Delivery) bool {
				return d.State == heraldtype.StateDead && d.Channel == heraldtype.ChannelPush
			}},
		{"other channel", heraldtype.DeliveryFilter{Channel: heraldtype.ChannelSMS}, func(heraldtype.Delivery) bool { return false }},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got, want := listAll(t, f, c.filter), want(c.keep); !slices.Equal(got, want) {
				t.Fatalf("listed %v, want %v", got, want)
			}
		})
	}
	t.Run("Limits", func(t *testing.T) {
		ds, next, err := f.s.ListDeliveries(f.ctx, heraldtype.DeliveryFilter{})
		if err != nil || len(ds) != 20 || next != "" {
			t.Fatalf("default limit: %d deliveries, next %q, %v", len(ds), next, err)
		}
		ds, next, err = f.s.ListDeliveries(f.ctx, heraldtype.DeliveryFilter{Limit: 20})
		if err != nil || len(ds) != 20 || next != "" {
			t.Fatalf("exact limit: %d deliveries, next %q, %v; want no next page", len(ds), next, err)
		}
		_, _, err = f.s.ListDeliveries(f.ctx, heraldtype.DeliveryFilter{Cursor: "not a cursor"})
		wantCode(t, err, heraldtype.EINVALID)
	})
}

// testGetDelivery: one delivery by id with its timeline, the same as the
// list shows it (issue 22 item 4, S0.4).
func testGetDelivery(t *testing.T, newStore NewStore) {
	t.Parallel()
	f := newFixture(t, newStore)
	known := deadLetters(t, f)
	for _, k := range []heraldtype.Delivery{known[0], known[1], known[2]} {
		d, err := f.s.GetDelivery(f.ctx, k.ID)
		if err != nil {
			t.Fatalf("GetDelivery(%d): %v", k.ID, err)
		}
		listed, _, err := f.s.ListDeliveries(f.ctx, heraldtype.DeliveryFilter{NotificationID: k.NotificationID})
		if err != nil || len(listed) != 1 {
			t.Fatalf("ListDeliveries(%s) = %v, %v", k.NotificationID, listed, err)
		}
		if !reflect.DeepEqual(d, listed[0]) {
			t.Fatalf("GetDelivery(%d) =\n%+v\nlisted as\n%+v", k.ID, d, listed[0])
		}
		if d.State != k.State || d.LastErrorCode != k.LastErrorCode || len(d.Attempts) != 1 {
			t.Fatalf("GetDelivery(%d) = %+v, want %s %q with one attempt", k.ID, d, k.State, k.LastErrorCode)
		}
	}
	// A pending delivery has no attempt yet.
	n := f.push("u1")[0]
	pending := f.delivery(n.ID)
	d, err := f.s.GetDelivery(f.ctx, pending.ID)
	if err != nil || d.State != heraldtype.StatePending || len(d.Attempts) != 0 || d.NotificationID != n.ID {
		t.Fatalf("GetDelivery of a pending delivery = %+v, %v", d, err)
	}
	_, err = f.s.GetDelivery(f.ctx, 987654321)
	wantMessage(t, err, heraldtype.ENOTFOUND, "delivery 987654321 not found")
}

func testReplay(t *testing.T, newStore NewStore) {
	t.Run("Single", func(t *testing.T) {
		t.Parallel()
		f := newFixture(t, newStore)
		known := deadLetters(t, f)
		dead, sent := known[0], known[2]
		now := at(4 * time.Hour)
		d, err := f.s.ReplayDelivery(f.ctx, dead.ID, now)
		if err != nil {
			t.Fatal(err)
		}
		if d.State != heraldtype.StatePending || d.Attempt != 0 || d.ReplayCount != 1 || d.LastErrorCode != "UNREGISTERED" ||
			d.FinishedAt != nil || d.LastReplayResult != "" {
			t.Fatalf("replayed delivery = %+v", d)
		}
		wantTime(t, "RunAt", d.RunAt, now)
		wantTimePtr(t, "LastReplayAt", d.LastReplayAt, now)
		wantOutcomes(t, d, heraldtype.OutcomeDead, heraldtype.OutcomeReplayed)

		_, err = f.s.ReplayDelivery(f.ctx, sent.ID, now)
		wantMessage(t, err, heraldtype.ECONFLICT,
			fmt.Sprintf("delivery %d is sent; only dead or unknown deliveries can be replayed", sent.ID))
		_, err = f.s.ReplayDelivery(f.ctx, dead.ID, now) // pending now
		wantMessage(t, err, heraldtype.ECONFLICT,
			fmt.Sprintf("delivery %d is pending; only dead or unknown deliveries can be replayed", dead.ID))
		_, err = f.s.ReplayDelivery(f.ctx, 987654321, now)
		wantMessage(t, err, heraldtype.ENOTFOUND, "delivery 987654321 not found")

		jobs := f.claim("w", now, 10)
		if len(jobs) != 1 || jobs[0].Delivery.ID != dead.ID || jobs[0].Delivery.Attempt != 1 {
			t.Fatalf("claim after replay = %+v", jobs)
		}
		f.complete(1, outcome(jobs[0], store.Sent{}, now.Add(time.Second)))
		ds, _, err := f.s.ListDeliveries(f.ctx, heraldtype.DeliveryFilter{NotificationID: dead.NotificationID})
		if err != nil || len(ds) != 1 {
			t.Fatalf("ListDeliveries = %v, %v", ds, err)
		}
		// The replay kept the dead error while pending; the send clears it
		// (issue 22 item 3), and the timeline keeps it.
		got := ds[0]
		if got.State != heraldtype.StateSent || got.LastReplayResult != heraldtype.StateSent || got.ReplayCount != 1 ||
			got.LastErrorCode != "" || got.LastError != "" {
			t.Fatalf("delivery after the replayed send = %+v", got)
		}
		wantOutcomes(t, got, heraldtype.OutcomeDead, heraldtype.OutcomeReplayed, heraldtype.OutcomeSent)
		if got.Attempts[0].ErrorCode != "UNREGISTERED" {
			t.Fatalf("dead attempt = %+v, want its error kept on the timeline", got.Attempts[0])
		}
	})
	t.Run("Unknown", func(t *testing.T) {
		t.Parallel()
		f := newFixture(t, newStore)
		f.user("u1")
		f.device("u1", "d1", "android")
		n := f.notification("u1")
		n.Guarantee = heraldtype.AtMostOnce
		f.enqueue(params(n))
		f.claim("w", base(), 1)
		if _, err := f.s.ReapExpiredLeases(f.ctx, at(time.Hour)); err != nil {
			t.Fatal(err)
		}
		d, err := f.s.ReplayDelivery(f.ctx, f.delivery(n.ID).ID, at(2*time.Hour))
		if err != nil || d.State != heraldtype.StatePending {
			t.Fatalf("replay of an unknown delivery = %+v, %v", d, err)
		}
		// Replayed and lost again: the replay's result is unknown.
		f.claim("w", at(2*time.Hour), 1)
		if _, err := f.s.ReapExpiredLeases(f.ctx, at(3*time.Hour)); err != nil {
			t.Fatal(err)
		}
		if d := f.delivery(n.ID); d.State != heraldtype.StateUnknown || d.LastReplayResult != heraldtype.StateUnknown {
			t.Fatalf("delivery = %+v", d)
		}
	})
	t.Run("Bulk", func(t *testing.T) {
		t.Parallel()
		f := newFixture(t, newStore)
		known := deadLetters(t, f)
		var internal, unregistered int
		for _, d := range known {
			switch d.LastErrorCode {
			case "INTERNAL":
				internal++
			case "UNREGISTERED":
				unregistered++
			}
		}
		now := at(4 * time.Hour)
		_, err := f.s.ReplayDeliveries(f.ctx, heraldtype.DeliveryFilter{State: heraldtype.StateSent}, now, 100)
		wantCode(t, err, heraldtype.EINVALID)
		n, err := f.s.ReplayDeliveries(f.ctx, heraldtype.DeliveryFilter{ErrorCode: "INTERNAL"}, now, 2)
		if err != nil || n != 2 {
			t.Fatalf("ReplayDeliveries max 2 = %d, %v", n, err)
		}
		n, err = f.s.ReplayDeliveries(f.ctx, heraldtype.DeliveryFilter{State: heraldtype.StateDead, ErrorCode: "INTERNAL"}, now, 100)
		if err != nil || n != internal-2 {
			t.Fatalf("ReplayDeliveries = %d, %v; want %d", n, err, internal-2)
		}
		if st := f.stats(); st[heraldtype.StatePending] != internal || st[heraldtype.StateDead] != unregistered {
			t.Fatalf("stats after bulk replay = %v", st)
		}
		ds, _, err := f.s.ListDeliveries(f.ctx, heraldtype.DeliveryFilter{State: heraldtype.StatePending})
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range ds {
			if d.ReplayCount != 1 || d.LastErrorCode != "INTERNAL" || d.Attempts[len(d.Attempts)-1].Outcome != heraldtype.OutcomeReplayed {
				t.Fatalf("bulk-replayed delivery = %+v", d)
			}
		}
	})
}

func testMaintenance(t *testing.T, newStore NewStore) {
	t.Run("QueueStats", func(t *testing.T) {
		t.Parallel()
		f := newFixture(t, newStore)
		// Only the queue's states are counted (store.QueueDepthStates):
		// the sent deliveries below are not.
		want := map[heraldtype.DeliveryState]int{
			heraldtype.StatePending: 0, heraldtype.StateLeased: 0, heraldtype.StateDead: 0,
			heraldtype.StateUnknown: 0,
		}
		if got := f.queueStats(); !maps.Equal(got, want) {
			t.Fatalf("empty stats = %v", got)
		}
		deadLetters(t, f)
		f.push("u1", "u1")
		leased := f.claim("w", at(5*time.Hour), 1)
		want[heraldtype.StatePending], want[heraldtype.StateLeased] = 1, 1
		want[heraldtype.StateDead] = 14
		if got := f.queueStats(); !maps.Equal(got, want) {
			t.Fatalf("stats = %v, want %v", got, want)
		}
		f.complete(1, outcome(leased[0], store.Unknown{}, at(6*time.Hour)))
		want[heraldtype.StateLeased], want[heraldtype.StateUnknown] = 0, 1
		if got := f.queueStats(); !maps.Equal(got, want) {
			t.Fatalf("stats after an unknown outcome = %v, want %v", got, want)
		}
	})
	t.Run("PruneTriggers", func(t *testing.T) {
		t.Parallel()
		f := newFixture(t, newStore)
		f.user("u1")
		old := params(f.notification("u1"))
		old.IdempotencyKey, old.RequestHash = "old", "h"
		f.enqueue(old)
		recent := params(f.notification("u1"))
		recent.IdempotencyKey, recent.RequestHash, recent.Now = "recent", "h", at(time.Hour)
		f.enqueue(recent)
		n, err := f.s.PruneTriggers(f.ctx, at(time.Minute))
		if err != nil || n != 1 {
			t.Fatalf("PruneTriggers = %d, %v; want 1", n, err)
		}
		old.Notifications = []heraldtype.Notification{f.notification("u1")}
		if res := f.enqueue(old); res.Replayed {
			t.Fatal("a pruned key still replays")
		}
		recent.Notifications = []heraldtype.Notification{f.notification("u1")}
		if res := f.enqueue(recent); !res.Replayed {
			t.Fatal("a kept key does not replay")
		}
	})
}
