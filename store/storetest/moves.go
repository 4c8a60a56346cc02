package storetest

import (
	"sync"
	"testing"
	"time"

	"github.com/heraldhq/herald/heraldtype"
	"github.com/heraldhq/herald/store"
)

// testMoves walks the delivery state machine, store.Moves, on the store:
// every writer is run on a delivery in every state, and it must make
// exactly the moves the table gives it from that state and leave every
// other delivery alone (ignored, or refused with ECONFLICT). Every move of
// the table must have been seen.
func testMoves(t *testing.T, newStore NewStore) {
	type key struct {
		from, to   heraldtype.DeliveryState
		by         store.Writer
		transition string
	}
	var mu sync.Mutex
	walked := map[key]bool{}
	seen := func(from, to heraldtype.DeliveryState, by store.Writer, tr store.Transition) {
		mu.Lock()
		defer mu.Unlock()
		walked[key{from, to, by, store.TransitionName(tr)}] = true
	}
	// check compares the deliveries' states after a writer ran with those
	// before, against the table, and records the moves it saw. moved is
	// the state each delivery moved to, or its own state when unchanged
	// (only ExtendLeases moves a delivery to the state it was in).
	check := func(t *testing.T, f *fixture, w store.Writer, tr store.Transition, before map[int64]heraldtype.DeliveryState,
		moved map[int64]bool) {
		t.Helper()
		for id, from := range before {
			to := f.stateOf(id)
			switch {
			case to != from || moved[id]:
				if !store.Allowed(from, to, w) {
					t.Errorf("%s moved delivery %d %s → %s, a move store.Moves does not have", w, id, from, to)
				}
				seen(from, to, w, tr)
			default:
				for _, m := range store.Moves {
					if m.By == w && m.From == from && m.From != m.To &&
						(tr == nil || store.TransitionName(m.Transition) == store.TransitionName(tr)) {
						t.Errorf("%s left delivery %d in %s; store.Moves says it moves it to %s", w, id, from, m.To)
					}
				}
			}
		}
	}

	t.Run("Walk", func(t *testing.T) {
		t.Run("Enqueue", func(t *testing.T) {
			t.Parallel()
			f := newFixture(t, newStore)
			f.contact("u1", "", "u1@example.com")
			f.device("u1", "d1", heraldtype.PlatformAndroid)
			// push → pending; sms without a phone → skipped; in_app → sent;
			// in_app refused by the preferences → opted_out; in_app
			// scheduled for later → pending (issue 22).
			f.contact("u2", "", "")
			f.prefs(heraldtype.Preferences{UserID: "u2", OptedOutChannels: []heraldtype.Channel{heraldtype.ChannelInApp}})
			n := f.on("u1", heraldtype.ChannelPush, heraldtype.ChannelSMS, heraldtype.ChannelInApp)
			refused := f.on("u2", heraldtype.ChannelInApp)
			later := f.on("u1", heraldtype.ChannelInApp)
			later.SendAt = at(time.Hour)
			f.enqueue(channelParams(n, refused, later))
			for _, id := range []string{n.ID, refused.ID, later.ID} {
				for _, d := range f.deliveries(id) {
					if !store.Allowed("", d.State, store.ByEnqueue) {
						t.Errorf("Enqueue created a %s delivery in %s, a move store.Moves does not have", d.Channel, d.State)
					}
					seen("", d.State, store.ByEnqueue, nil)
				}
			}
		})
		t.Run("Claim", func(t *testing.T) {
			t.Parallel()
			f, js := everyState(t, newStore)
			before := f.states(js)
			jobs := f.claim("w2", at(time.Hour), 100)
			if len(jobs) != 1 || jobs[0].Delivery.ID != js[slot(heraldtype.StatePending)].Delivery.ID {
				t.Errorf("claimed %v, want only the pending delivery %d", ids(jobs), js[slot(heraldtype.StatePending)].Delivery.ID)
			}
			check(t, f, store.ByClaim, nil, before, nil)
		})
		t.Run("ExtendLeases", func(t *testing.T) {
			t.Parallel()
			f, js := everyState(t, newStore)
			before := f.states(js)
			var all []int64
			for _, j := range js {
				all = append(all, j.Delivery.ID)
			}
			got, err := f.s.ExtendLeases(f.ctx, "w", all, at(time.Hour))
			if err != nil {
				t.Fatal(err)
			}
			moved := map[int64]bool{}
			for _, id := range got {
				moved[id] = true
			}
			check(t, f, store.ByExtendLeases, nil, before, moved)
		})
		for _, m := range store.Moves {
			if m.By != store.ByComplete {
				continue
			}
			t.Run("Complete"+store.TransitionName(m.Transition), func(t *testing.T) {
				t.Parallel()
				f, js := everyState(t, newStore)
				before := f.states(js)
				// Every delivery gets the outcome, under the guard of the
				// lease it had last: only a leased one may take it (S4.4).
				tr := example(m.Transition)
				var os []store.Outcome
				for _, j := range js {
					os = append(os, outcome(j, tr, at(time.Minute)))
				}
				f.complete(2, os...)
				check(t, f, store.ByComplete, tr, before, nil)
			})
		}
		t.Run("Reap", func(t *testing.T) {
			t.Parallel()
			f, js := everyState(t, newStore)
			before := f.states(js)
			res, err := f.s.ReapExpiredLeases(f.ctx, at(time.Hour))
			if err != nil || res != (store.ReapResult{Requeued: 1, Unknown: 1}) {
				t.Errorf("reap = %+v, %v; want the two leases", res, err)
			}
			check(t, f, store.ByReap, nil, before, nil)
		})
		t.Run("ReportLate", func(t *testing.T) {
			// Not a move: a late report only appends to the timeline
			// (issue 24 item 3), whatever state each delivery is in.
			t.Parallel()
			f, js := everyState(t, newStore)
			if _, err := f.s.ReapExpiredLeases(f.ctx, at(time.Hour)); err != nil {
				t.Fatal(err)
			}
			before := f.states(js)
			var os []store.Outcome
			for _, j := range js {
				os = append(os, outcome(j, store.Sent{}, at(2*time.Hour)))
			}
			if _, err := f.s.ReportLate(f.ctx, os); err != nil {
				t.Fatal(err)
			}
			for id, from := range before {
				if to := f.stateOf(id); to != from {
					t.Errorf("ReportLate moved delivery %d %s → %s", id, from, to)
				}
			}
		})
		t.Run("Cancel", func(t *testing.T) {
			t.Parallel()
			f, js := everyState(t, newStore)
			before := f.states(js)
			var ns []string
			for _, j := range js {
				ns = append(ns, j.Delivery.NotificationID)
			}
			f.cancel(store.CancelParams{NotificationIDs: ns, Reason: "cancelled by the test", Now: at(time.Hour)})
			check(t, f, store.ByCancel, nil, before, nil)
		})
		t.Run("Replay", func(t *testing.T) {
			t.Parallel()
			f, js := everyState(t, newStore)
			before := f.states(js)
			for st, j := range js {
				_, err := f.s.ReplayDelivery(f.ctx, j.Delivery.ID, at(time.Hour))
				if store.Allowed(st.state(), heraldtype.StatePending, store.ByReplay) {
					if err != nil {
						t.Errorf("replaying a %s delivery: %v", st, err)
					}
				} else if heraldtype.ErrorCode(err) != heraldtype.ECONFLICT {
					t.Errorf("replaying a %s delivery = %v, want %s", st, err, heraldtype.ECONFLICT)
				}
			}
			check(t, f, store.ByReplay, nil, before, nil)
		})
	})
	for _, m := range store.Moves {
		if !walked[key{m.From, m.To, m.By, store.TransitionName(m.Transition)}] {
			t.Errorf("move %q → %s by %s %s was never walked", m.From, m.To, m.By, store.TransitionName(m.Transition))
		}
	}
}

// example is a valid value of the transition tr is the zero value of.
func example(tr store.Transition) store.Transition {
	switch tr.(type) {
	case store.ReleasedWithReason:
		return store.ReleasedWithReason{Outcome: heraldtype.OutcomeDeferred, ErrorCode: heraldtype.CodeQuietHours, Error: "quiet hours"}
	case store.Dead:
		return store.Dead{Failure: store.Failure{ErrorCode: "INVALID_ARGUMENT"}}
	}
	return tr
}

// slot names a delivery of everyState: its state, and a second leased
// delivery whose guarantee is at_most_once.
type slot string

const leasedAtMostOnce slot = "leased (at_most_once)"

func (s slot) state() heraldtype.DeliveryState {
	if s == leasedAtMostOnce {
		return heraldtype.StateLeased
	}
	return heraldtype.DeliveryState(s)
}

// everyState makes one delivery in each state of store.DeliveryStates, and
// one more leased at_most_once, each reached by moves of the table:
// enqueued and claimed by "w" at 1s (leases until 1m1s), then completed at
// 2s (pending: released). It returns the job of each claim.
func everyState(t *testing.T, newStore NewStore) (*fixture, map[slot]heraldtype.Job) {
	t.Helper()
	f := newFixture(t, newStore)
	f.user("u1")
	f.device("u1", "d1", heraldtype.PlatformAndroid)
	var ns []heraldtype.Notification
	for range store.DeliveryStates {
		ns = append(ns, f.notification("u1"))
	}
	most := f.notification("u1")
	most.Guarantee = heraldtype.AtMostOnce
	f.enqueue(params(append(ns, most)...))
	jobs := map[string]heraldtype.Job{}
	for _, j := range f.claim("w", at(time.Second), 100) {
		jobs[j.Delivery.NotificationID] = j
	}
	if len(jobs) != len(ns)+1 {
		t.Fatalf("claimed %d, want %d", len(jobs), len(ns)+1)
	}
	js := map[slot]heraldtype.Job{leasedAtMostOnce: jobs[most.ID]}
	var os []store.Outcome
	for i, st := range store.DeliveryStates {
		j := jobs[ns[i].ID]
		js[slot(st)] = j
		switch st {
		case heraldtype.StateLeased:
			continue
		case heraldtype.StatePending, heraldtype.StateCancelled:
			// A cancelled one is released, then cancelled below.
			os = append(os, outcome(j, store.Released{}, at(2*time.Second)))
			continue
		}
		for _, m := range store.Moves {
			if m.By == store.ByComplete && m.To == st {
				os = append(os, outcome(j, example(m.Transition), at(2*time.Second)))
				break
			}
		}
	}
	f.complete(len(os), os...)
	f.cancel(store.CancelParams{NotificationIDs: []string{js[slot(heraldtype.StateCancelled)].Delivery.NotificationID},
		Reason: "cancelled by the test", Now: at(3 * time.Second)})
	for s, j := range js {
		if got := f.stateOf(j.Delivery.ID); got != s.state() {
			t.Fatalf("delivery %d of %s is %s", j.Delivery.ID, s, got)
		}
	}
	return f, js
}

// states maps each job's delivery to its state now.
func (f *fixture) states(js map[slot]heraldtype.Job) map[int64]heraldtype.DeliveryState {
	f.t.Helper()
	m := map[int64]heraldtype.DeliveryState{}
	for _, j := range js {
		m[j.Delivery.ID] = f.stateOf(j.Delivery.ID)
	}
	return m
}

// stateOf is the state of the delivery with id.
func (f *fixture) stateOf(id int64) heraldtype.DeliveryState {
	f.t.Helper()
	ds, _, err := f.s.ListDeliveries(f.ctx, heraldtype.DeliveryFilter{UserID: "u1", Limit: 1000})
	if err != nil {
		f.t.Fatal(err)
	}
	for _, d := range ds {
		if d.ID == id {
			return d.State
		}
	}
	f.t.Fatalf("no delivery %d", id)
	return ""
}
