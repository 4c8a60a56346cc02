package storetest

import (
	"encoding/json"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/heraldhq/herald/heraldtype"
	"github.com/heraldhq/herald/store"
)

// The rule engine's rows (issue 20 items 1 and 4, S3.1, S3.5): an event is
// recorded once with what it did; a subject's state is written under the
// seq the engine read; a rule run's batches commit with its cursor.

func eventRecord(id string, seq int64, runs ...heraldtype.RuleRun) store.EventRecord {
	return store.EventRecord{Source: "product.inventory.v1", ID: id, Name: "PRICE_CHANGE", Subject: "product:42",
		Version: 100, Write: true, Seq: seq, State: json.RawMessage(`{"price-drop":{}}`),
		Outcome: json.RawMessage(`{"event_id":"` + id + `"}`), Runs: runs, Now: base()}
}

func ruleRun(rule, event string) heraldtype.RuleRun {
	return heraldtype.RuleRun{Rule: rule, ID: store.RuleRunID("product.inventory.v1", "", event), Source: "product.inventory.v1",
		EventID: event, Event: "PRICE_CHANGE", Subject: "product:42",
		Job: heraldtype.RuleJob{Notification: heraldtype.RuleMessage{Type: "price_drop", Title: "Kettle"},
			Audience: heraldtype.JobAudience{Subject: "product:42", Kinds: []string{"VIEW"}, Limit: 10}}}
}

func (f *fixture) record(r store.EventRecord) store.EventRecorded {
	f.t.Helper()
	out, err := f.s.RecordEvent(f.ctx, r)
	if err != nil {
		f.t.Fatalf("RecordEvent(%s): %v", r.ID, err)
	}
	return out
}

func testEvents(t *testing.T, newStore NewStore) {
	t.Run("RecordOnceGuardedBySeq", func(t *testing.T) {
		f := newFixture(t, newStore)
		if subj, err := f.s.EventSubject(f.ctx, "product.inventory.v1", "product:42"); err != nil || subj.Seq != 0 {
			t.Fatalf("no subject yet: %+v %v", subj, err)
		}
		if got := f.record(eventRecord("ev-1", 0, ruleRun("price-drop", "ev-1"))); got.Replayed || got.Conflict {
			t.Fatalf("first record: %+v", got)
		}
		subj, err := f.s.EventSubject(f.ctx, "product.inventory.v1", "product:42")
		if err != nil || subj.Seq != 1 || subj.Version != 100 || string(subj.State) == "" {
			t.Fatalf("subject: %+v %v", subj, err)
		}
		// A redelivery: nothing written, the first outcome answered.
		again := eventRecord("ev-1", 1, ruleRun("price-drop", "ev-1"))
		again.Outcome = json.RawMessage(`{"event_id":"other"}`)
		got := f.record(again)
		var o map[string]string
		if err := json.Unmarshal(got.Outcome, &o); err != nil || !got.Replayed || o["event_id"] != "ev-1" {
			t.Fatalf("redelivery: %+v %v", got, err)
		}
		// Another event decided on a stale read of the subject: nothing
		// of it is written.
		if got := f.record(eventRecord("ev-2", 0, ruleRun("price-drop", "ev-2"))); !got.Conflict {
			t.Fatalf("create over an existing subject: %+v", got)
		}
		stale := eventRecord("ev-2", 5, ruleRun("price-drop", "ev-2"))
		if got := f.record(stale); !got.Conflict {
			t.Fatalf("update under a wrong seq: %+v", got)
		}
		if _, ok, _ := f.s.RecordedEvent(f.ctx, store.EventKey{Source: "product.inventory.v1", ID: "ev-2"}); ok {
			t.Fatal("a conflicting event was recorded")
		}
		// Decided again on the right seq; an unordered event (version 0)
		// keeps the subject's version.
		ok := eventRecord("ev-2", 1, ruleRun("price-drop", "ev-2"))
		ok.Version = 0
		if got := f.record(ok); got.Conflict || got.Replayed {
			t.Fatalf("ev-2 on seq 1: %+v", got)
		}
		if subj, _ := f.s.EventSubject(f.ctx, "product.inventory.v1", "product:42"); subj.Seq != 2 || subj.Version != 100 {
			t.Fatalf("subject after ev-2: %+v", subj)
		}
		runs, err := f.s.RunningRuleRuns(f.ctx, 10)
		if err != nil || len(runs) != 2 || runs[0].EventID != "ev-1" || runs[1].EventID != "ev-2" ||
			runs[0].Job.Audience.Kinds[0] != "VIEW" || runs[0].Version != 1 {
			t.Fatalf("running runs: %+v %v", runs, err)
		}
		// A run recorded with an error is failed from the start.
		bad := ruleRun("restock", "ev-3")
		bad.LastError = "notify.title: product_name is missing"
		noSubject := eventRecord("ev-3", 0, bad)
		noSubject.Subject, noSubject.Write = "", false
		f.record(noSubject)
		if runs, _ := f.s.RunningRuleRuns(f.ctx, 10); len(runs) != 2 {
			t.Fatalf("a failed run is running: %+v", runs)
		}
		page, _, err := f.s.ListRuleRuns(f.ctx, heraldtype.RuleRunFilter{Rule: "restock"})
		if err != nil || len(page) != 1 || page[0].State != heraldtype.RunFailed || page[0].LastError == "" || page[0].FinishedAt.IsZero() {
			t.Fatalf("failed run: %+v %v", page, err)
		}
	})
	t.Run("ConcurrentDeliveriesRecordOnce", func(t *testing.T) {
		f := newFixture(t, newStore)
		var wg sync.WaitGroup
		var mu sync.Mutex
		written := 0
		for range 8 {
			wg.Go(func() {
				got, err := f.s.RecordEvent(f.ctx, eventRecord("ev-1", 0, ruleRun("price-drop", "ev-1")))
				if err != nil {
					t.Error(err)
					return
				}
				if !got.Replayed && !got.Conflict {
					mu.Lock()
					written++
					mu.Unlock()
				}
			})
		}
		wg.Wait()
		if written != 1 {
			t.Fatalf("%d deliveries of one event were written", written)
		}
	})
	// Issue 31 item 5: an event id is its namespace's — the same id in
	// another namespace is an event of its own, with a run of its own —
	// and the record keeps the event's hash, also answered to a
	// redelivery, so the same id with another body can be told apart.
	t.Run("IDsBelongToTheirNamespace", func(t *testing.T) {
		f := newFixture(t, newStore)
		rec := func(ns, hash string) store.EventRecord {
			r := eventRecord("ev-1", 0)
			r.Source, r.Namespace, r.RequestHash, r.Subject, r.Write = "http", ns, hash, "", false
			run := ruleRun("price-drop", "ev-1")
			run.Source, run.ID = "http", store.RuleRunID("http", ns, "ev-1")
			r.Runs = []heraldtype.RuleRun{run}
			r.Outcome = json.RawMessage(`{"event_id":"ev-1","ns":"` + ns + `"}`)
			return r
		}
		for _, ns := range []string{"key-a", "key-b"} {
			if got := f.record(rec(ns, "hash-"+ns)); got.Replayed || got.Conflict {
				t.Fatalf("namespace %s: %+v", ns, got)
			}
		}
		for _, ns := range []string{"key-a", "key-b"} {
			got, ok, err := f.s.RecordedEvent(f.ctx, store.EventKey{Source: "http", Namespace: ns, ID: "ev-1"})
			if err != nil || !ok || got.RequestHash != "hash-"+ns || !strings.Contains(string(got.Outcome), ns) {
				t.Fatalf("RecordedEvent(%s) = %+v %v %v", ns, got, ok, err)
			}
		}
		if _, ok, _ := f.s.RecordedEvent(f.ctx, store.EventKey{Source: "http", ID: "ev-1"}); ok {
			t.Fatal("the empty namespace holds another's event")
		}
		again := f.record(rec("key-a", "hash-other"))
		if !again.Replayed || again.RequestHash != "hash-key-a" || !strings.Contains(string(again.Outcome), "key-a") {
			t.Fatalf("the same id again: %+v", again)
		}
		page, _, err := f.s.ListRuleRuns(f.ctx, heraldtype.RuleRunFilter{Rule: "price-drop"})
		if err != nil || len(page) != 2 {
			t.Fatalf("each namespace's event has its run: %+v %v", page, err)
		}
		if n, err := f.s.PruneEvents(f.ctx, base().Add(time.Hour), 10); err != nil || n != 2 {
			t.Fatalf("PruneEvents: %d %v", n, err)
		}
	})
	// Issue 30 item 5: a subject's version and detector state are its
	// source's: another source's newer version does not make an event
	// stale, nor share its state.
	t.Run("SubjectsBelongToTheirSource", func(t *testing.T) {
		f := newFixture(t, newStore)
		f.record(eventRecord("ev-1", 0))
		other := eventRecord("ev-1", 0)
		other.Source, other.Version, other.State = "http", 3, json.RawMessage(`{"other":{}}`)
		if got := f.record(other); got.Conflict || got.Replayed {
			t.Fatalf("another source's first event of the subject: %+v", got)
		}
		kafka, err := f.s.EventSubject(f.ctx, "product.inventory.v1", "product:42")
		if err != nil || kafka.Version != 100 || kafka.Seq != 1 {
			t.Fatalf("the topic's subject: %+v %v", kafka, err)
		}
		api, err := f.s.EventSubject(f.ctx, "http", "product:42")
		if err != nil || api.Version != 3 || api.Seq != 1 || !strings.Contains(string(api.State), "other") {
			t.Fatalf("the API's subject: %+v %v", api, err)
		}
	})
	t.Run("RetryFailedRunGuarded", func(t *testing.T) { testRetryRuleRun(t, newStore) })
	t.Run("InlineRuns", func(t *testing.T) { testInlineRuns(t, newStore) })
	t.Run("EventState", func(t *testing.T) { testEventState(t, newStore) })
	t.Run("Concurrent", func(t *testing.T) { testConcurrentEvents(t, newStore) })
	t.Run("RunBatchesCommitWithTheCursor", func(t *testing.T) {
		f := newFixture(t, newStore)
		f.user("u1")
		f.user("u2")
		f.user("u3")
		f.record(eventRecord("ev-1", 0, ruleRun("price-drop", "ev-1")))
		runs, _ := f.s.RunningRuleRuns(f.ctx, 10)
		run := runs[0]
		batch := func(version int64, finish heraldtype.CampaignRunState, users ...string) store.RuleBatch {
			var ns []heraldtype.Notification
			for _, u := range users {
				ns = append(ns, f.notification(u))
			}
			p := params(ns...)
			return store.RuleBatch{Rule: run.Rule, RunID: run.ID, Version: version, Cursor: users[len(users)-1],
				Enqueue: &p, Recipients: len(users), Finish: finish, Now: at(time.Minute)}
		}
		res, err := f.s.AdvanceRuleRun(f.ctx, batch(run.Version, "", "u1", "u2"))
		if err != nil || !res.Applied || res.Run.Cursor != "u2" || res.Run.Recipients != 2 || res.Run.Enqueued != 2 ||
			len(res.Result.Notifications) != 2 {
			t.Fatalf("first batch: %+v %v", res, err)
		}
		// A second runner with the old version writes nothing.
		if res, err := f.s.AdvanceRuleRun(f.ctx, batch(run.Version, "", "u1", "u2")); err != nil || res.Applied {
			t.Fatalf("stale batch: %+v %v", res, err)
		}
		last, err := f.s.AdvanceRuleRun(f.ctx, batch(res.Run.Version, heraldtype.RunDone, "u3"))
		if err != nil || !last.Applied || last.Run.State != heraldtype.RunDone || last.Run.Recipients != 3 || last.Run.FinishedAt.IsZero() {
			t.Fatalf("last batch: %+v %v", last, err)
		}
		if h, _, err := f.s.ListHistory(f.ctx, heraldtype.HistoryFilter{Limit: 10}, 0); err != nil || len(h) != 3 {
			t.Fatalf("%d notifications (%v), want 3", len(h), err)
		}
		// Pruning: the finished run and the event record go; a running run
		// stays.
		f.record(eventRecord("ev-2", 1, ruleRun("price-drop", "ev-2")))
		n, err := f.s.PruneEvents(f.ctx, at(time.Hour), 100)
		if err != nil || n != 3 {
			t.Fatalf("PruneEvents = %d, %v; want 2 events and 1 run", n, err)
		}
		if runs, _ := f.s.RunningRuleRuns(f.ctx, 10); len(runs) != 1 || runs[0].EventID != "ev-2" {
			t.Fatalf("after pruning: %+v", runs)
		}
		if _, ok, _ := f.s.RecordedEvent(f.ctx, store.EventKey{Source: "product.inventory.v1", ID: "ev-1"}); ok {
			t.Fatal("ev-1's record survived its retention")
		}
	})
}
