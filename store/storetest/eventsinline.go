package storetest

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/heraldhq/herald/heraldtype"
	"github.com/heraldhq/herald/store"
)

// A rule run whose whole audience fits one batch is written with its
// event (issue 39 item 3): the run done, its notifications enqueued, in
// the event's own transaction. A crash between the event's record and the
// run's batch is impossible by construction — they are one transaction —
// so these tests check the transaction's edges: all of it or none of it,
// and a redelivery writes nothing.

func testInlineRuns(t *testing.T, newStore NewStore) {
	inline := func(f *fixture, id string, users ...string) store.EventRecord {
		r := eventRecord(id, 0, ruleRun("price-drop", id), ruleRun("other", id))
		var ns []heraldtype.Notification
		for _, u := range users {
			ns = append(ns, f.notification(u))
		}
		p := params(ns...)
		r.Inline = map[string]store.InlineBatch{"price-drop": {Recipients: len(users), Cursor: users[len(users)-1], Enqueue: &p}}
		return r
	}
	t.Run("DoneWithItsNotifications", func(t *testing.T) {
		f := newFixture(t, newStore)
		f.user("u1")
		f.user("u2")
		got := f.record(inline(f, "ev-1", "u1", "u2"))
		if got.Replayed || got.Conflict || len(got.Enqueued["price-drop"].Notifications) != 2 || len(got.Enqueued) != 1 {
			t.Fatalf("recorded: %+v", got)
		}
		run, err := f.s.RuleRun(f.ctx, "price-drop", store.RuleRunID("product.inventory.v1", "", "ev-1"))
		if err != nil || run.State != heraldtype.RunDone || run.Recipients != 2 || run.Enqueued != 2 || run.Cursor != "u2" ||
			run.FinishedAt.IsZero() || run.LastError != "" {
			t.Fatalf("inline run: %+v %v", run, err)
		}
		// The other rule's run is the runner's, and the inline one is not.
		runs, err := f.s.RunningRuleRuns(f.ctx, 10)
		if err != nil || len(runs) != 1 || runs[0].Rule != "other" {
			t.Fatalf("running: %+v %v", runs, err)
		}
		if h, _, err := f.s.ListHistory(f.ctx, heraldtype.HistoryFilter{Limit: 10}, 0); err != nil || len(h) != 2 {
			t.Fatalf("%d notifications (%v), want 2", len(h), err)
		}
		// A redelivery finds the record and writes nothing: no second send.
		again := inline(f, "ev-1", "u1", "u2")
		again.Seq = 1
		if got := f.record(again); !got.Replayed || got.Enqueued != nil {
			t.Fatalf("redelivery: %+v", got)
		}
		if h, _, err := f.s.ListHistory(f.ctx, heraldtype.HistoryFilter{Limit: 10}, 0); err != nil || len(h) != 2 {
			t.Fatalf("after the redelivery: %d notifications (%v), want 2", len(h), err)
		}
	})
	t.Run("AllOrNothing", func(t *testing.T) {
		f := newFixture(t, newStore)
		f.user("u1")
		// u9 does not exist: the enqueue fails inside the transaction,
		// and nothing of the event is left — no record, no subject, no
		// run, no notification — so the caller may decide again.
		_, err := f.s.RecordEvent(f.ctx, inline(f, "ev-1", "u1", "u9"))
		if heraldtype.ErrorCode(err) != heraldtype.ENOTFOUND {
			t.Fatalf("RecordEvent with an unknown user: %v, want not_found", err)
		}
		if _, ok, err := f.s.RecordedEvent(f.ctx, store.EventKey{Source: "product.inventory.v1", ID: "ev-1"}); ok || err != nil {
			t.Fatalf("the event was recorded: %v %v", ok, err)
		}
		if subj, err := f.s.EventSubject(f.ctx, "product.inventory.v1", "product:42"); err != nil || subj.Seq != 0 {
			t.Fatalf("the subject was written: %+v %v", subj, err)
		}
		if runs, err := f.s.RunningRuleRuns(f.ctx, 10); err != nil || len(runs) != 0 {
			t.Fatalf("runs: %+v %v", runs, err)
		}
		if h, _, err := f.s.ListHistory(f.ctx, heraldtype.HistoryFilter{Limit: 10}, 0); err != nil || len(h) != 0 {
			t.Fatalf("%d notifications (%v), want none", len(h), err)
		}
		// Written again without the inline batch, the run is the runner's.
		r := inline(f, "ev-1", "u1")
		r.Inline = nil
		f.record(r)
		if runs, err := f.s.RunningRuleRuns(f.ctx, 10); err != nil || len(runs) != 2 {
			t.Fatalf("runs after the fallback: %+v %v", runs, err)
		}
	})
	t.Run("RunKeptAfterItsEventWasPruned", func(t *testing.T) {
		// The event's record is pruned while its run still runs; the
		// event delivered again writes a new record but neither the run
		// (it exists) nor its inline batch (the runner sends it).
		f := newFixture(t, newStore)
		f.user("u1")
		f.record(eventRecord("ev-1", 0, ruleRun("price-drop", "ev-1"), ruleRun("other", "ev-1")))
		if _, err := f.s.PruneEvents(f.ctx, at(time.Hour), 100); err != nil {
			t.Fatal(err)
		}
		r := inline(f, "ev-1", "u1")
		r.Seq = 1
		if got := f.record(r); got.Replayed || got.Conflict || len(got.Enqueued) != 0 {
			t.Fatalf("recorded again: %+v", got)
		}
		if _, ok, err := f.s.RecordedEvent(f.ctx, store.EventKey{Source: "product.inventory.v1", ID: "ev-1"}); !ok || err != nil {
			t.Fatalf("the event's new record: %v %v", ok, err)
		}
		if runs, err := f.s.RunningRuleRuns(f.ctx, 10); err != nil || len(runs) != 2 {
			t.Fatalf("runs: %+v %v", runs, err)
		}
		if h, _, err := f.s.ListHistory(f.ctx, heraldtype.HistoryFilter{Limit: 10}, 0); err != nil || len(h) != 0 {
			t.Fatalf("%d notifications (%v), want none", len(h), err)
		}
	})
	t.Run("EmptyAudience", func(t *testing.T) {
		f := newFixture(t, newStore)
		r := eventRecord("ev-1", 0, ruleRun("price-drop", "ev-1"))
		r.Inline = map[string]store.InlineBatch{"price-drop": {}}
		if got := f.record(r); len(got.Enqueued) != 1 {
			t.Fatalf("recorded: %+v", got)
		}
		run, err := f.s.RuleRun(f.ctx, "price-drop", store.RuleRunID("product.inventory.v1", "", "ev-1"))
		if err != nil || run.State != heraldtype.RunDone || run.Recipients != 0 || run.Enqueued != 0 {
			t.Fatalf("run: %+v %v", run, err)
		}
	})
	t.Run("Refused", func(t *testing.T) {
		f := newFixture(t, newStore)
		for name, r := range map[string]store.EventRecord{
			"no run of the rule": func() store.EventRecord {
				r := eventRecord("ev-1", 0)
				r.Inline = map[string]store.InlineBatch{"price-drop": {}}
				return r
			}(),
			"a failed run": func() store.EventRecord {
				run := ruleRun("price-drop", "ev-1")
				run.LastError = "the event could not be judged"
				r := eventRecord("ev-1", 0, run)
				r.Inline = map[string]store.InlineBatch{"price-drop": {}}
				return r
			}(),
			"fewer recipients than notifications": func() store.EventRecord {
				p := params(f.notification("u1"))
				r := eventRecord("ev-1", 0, ruleRun("price-drop", "ev-1"))
				r.Inline = map[string]store.InlineBatch{"price-drop": {Enqueue: &p}}
				return r
			}(),
		} {
			if _, err := f.s.RecordEvent(f.ctx, r); heraldtype.ErrorCode(err) != heraldtype.EINVALID {
				t.Errorf("%s: %v, want invalid_argument", name, err)
			}
		}
	})
}

// testEventState: the rules, the record and the subject an event is
// decided on, read together, say what ListRules, RecordedEvent and
// EventSubject say.
func testEventState(t *testing.T, newStore NewStore) {
	f := newFixture(t, newStore)
	key := store.EventKey{Source: "product.inventory.v1", ID: "ev-1"}
	q := store.EventQuery{Key: key, Subject: "product:42",
		Rules: store.RuleFilter{Source: "product.inventory.v1", Event: "PRICE_CHANGE", Enabled: true, Limit: 1}}
	if st, err := f.s.EventState(f.ctx, q); err != nil || st.Found || st.Subject.Seq != 0 || len(st.Rules) != 0 || st.RulesNext != "" {
		t.Fatalf("nothing yet: %+v %v", st, err)
	}
	for _, name := range []string{"a-drop", "b-drop", "c-off"} {
		r := heraldtype.Rule{Name: name, Source: heraldtype.RuleSource{KafkaTopic: "product.inventory.v1"},
			When: heraldtype.RuleWhen{Event: "PRICE_CHANGE"}, Disabled: name == "c-off"}
		if _, _, err := f.s.PutRule(f.ctx, r, base()); err != nil {
			t.Fatal(err)
		}
	}
	f.record(eventRecord("ev-1", 0))
	st, err := f.s.EventState(f.ctx, q)
	var o map[string]string
	if err != nil || !st.Found || json.Unmarshal(st.Recorded.Outcome, &o) != nil || o["event_id"] != "ev-1" {
		t.Fatalf("recorded: %+v %v", st, err)
	}
	if len(st.Rules) != 1 || st.Rules[0].Name != "a-drop" || st.RulesNext == "" {
		t.Fatalf("the rules' first page: %+v next %q", st.Rules, st.RulesNext)
	}
	next, _, err := f.s.ListRules(f.ctx, store.RuleFilter{Source: q.Rules.Source, Event: q.Rules.Event, Enabled: true,
		Limit: 1, Cursor: st.RulesNext})
	if err != nil || len(next) != 1 || next[0].Name != "b-drop" {
		t.Fatalf("the next page: %+v %v", next, err)
	}
	q.Key.ID, q.Rules.Limit = "ev-2", 10
	st, err = f.s.EventState(f.ctx, q)
	if err != nil || st.Found || st.Subject.Seq != 1 || st.Subject.Version != 100 || len(st.Subject.State) == 0 ||
		len(st.Rules) != 2 || st.RulesNext != "" {
		t.Fatalf("the subject: %+v %v", st, err)
	}
	// Interests read ahead: each page as InterestedUsers answers it.
	for _, u := range []string{"u1", "u2", "u3"} {
		f.user(u)
		f.putInterests(heraldtype.Interest{UserID: u, Subject: "product:42", Kind: "VIEW", At: base(),
			Data: map[string]string{"target_price": "8000"}})
	}
	q.Interests = []heraldtype.InterestQuery{{Subject: "product:42", Kinds: []string{"VIEW"}, Limit: 2},
		{Subject: "product:42", After: "u2", Limit: 2}, {Subject: "product:7", Limit: 2}}
	st, err = f.s.EventState(f.ctx, q)
	if err != nil || len(st.Interested) != 3 {
		t.Fatalf("interests read ahead: %+v %v", st.Interested, err)
	}
	for i, iq := range q.Interests {
		want, err := f.s.InterestedUsers(f.ctx, iq)
		if err != nil || len(want) != len(st.Interested[i]) {
			t.Fatalf("page %d: %+v, InterestedUsers %+v %v", i, st.Interested[i], want, err)
		}
		for j := range want {
			if got := st.Interested[i][j]; got.UserID != want[j].UserID || got.Data["target_price"] != want[j].Data["target_price"] {
				t.Fatalf("page %d: %+v, InterestedUsers %+v", i, st.Interested[i], want)
			}
		}
	}
	if n := len(st.Interested[0]) + len(st.Interested[1]); n != 3 {
		t.Fatalf("%d users in the two pages, want 3", n)
	}
	q.Interests = []heraldtype.InterestQuery{{Subject: "product:42"}}
	if _, err := f.s.EventState(f.ctx, q); heraldtype.ErrorCode(err) != heraldtype.EINVALID {
		t.Fatalf("an interest page of no size: %v, want invalid_argument", err)
	}
	q.Interests = nil
	// No id (the engine made one up) and no subject: neither is read.
	q.Key.ID, q.Subject = "", ""
	if st, err := f.s.EventState(f.ctx, q); err != nil || st.Found || st.Subject.Seq != 0 || len(st.Rules) != 2 {
		t.Fatalf("no id, no subject: %+v %v", st, err)
	}
	// A rule filter the store refuses is refused here too.
	q.Rules.Cursor = "!!"
	if _, err := f.s.EventState(f.ctx, q); heraldtype.ErrorCode(err) != heraldtype.EINVALID {
		t.Fatalf("a bad cursor: %v, want invalid_argument", err)
	}
}
