package postgres

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/heraldhq/herald/heraldtype"
	"github.com/heraldhq/herald/store"
)

// batchEvent is event id about subject, its one rule run written done
// with an inline batch of one push to user.
func batchEvent(id, subject, user string) store.EventRecord {
	const source = "product.inventory.v1"
	run := heraldtype.RuleRun{Rule: "price-drop", ID: store.RuleRunID(source, "", id), Source: source, EventID: id,
		Event: "PRICE_CHANGE", Subject: subject,
		Job: heraldtype.RuleJob{Notification: heraldtype.RuleMessage{Type: "reservation", Title: "Kettle"},
			Audience: heraldtype.JobAudience{Subject: subject, Kinds: []string{"VIEW"}, Limit: 10}}}
	p := batchTrigger("n-"+id, user, "")
	return store.EventRecord{Source: source, ID: id, Name: "PRICE_CHANGE", Subject: subject, Version: 1, Write: true,
		State: json.RawMessage(`{}`), Outcome: json.RawMessage(`{"event_id":"` + id + `"}`), Runs: []heraldtype.RuleRun{run},
		Inline: map[string]store.InlineBatch{"price-drop": {Recipients: 1, Cursor: user, Enqueue: &p}}, Now: batchNow}
}

type eventAnswer = answer[store.EventRecorded]

func recordAsync(ctx context.Context, s *Store, r store.EventRecord) <-chan eventAnswer {
	return async(ctx, s.RecordEvent, r)
}

// waitGroupCommit waits until g has running leaders and queued calls.
func waitGroupCommit[P, R any](t *testing.T, g *groupCommit[P, R], running, queued int) {
	t.Helper()
	waitGroup(t, g, fmt.Sprintf("%d and %d", running, queued), func(r, q int) bool { return r == running && q == queued })
}

// TestRecordEventGroupCommit: events that wait for the slot are written
// by one transaction, each answered as alone — but for a second event of
// a subject, which never shares its first's batch (its guard would roll
// the batch back), and a failing event, whose batch is rolled back and
// written again one event at a time, failing no other.
func TestRecordEventGroupCommit(t *testing.T) {
	s := batchStore(t, 1, 3)
	ctx := t.Context()

	round := func(events ...store.EventRecord) map[string]eventAnswer {
		t.Helper()
		release := holdUser(t, s, "u1")
		chs := map[string]<-chan eventAnswer{events[0].ID: recordAsync(ctx, s, events[0])}
		waitGroupCommit(t, &s.events, 1, 0) // the first leads, held on u1…
		for _, r := range events[1:] {
			chs[r.ID] = recordAsync(ctx, s, r)
		}
		waitGroupCommit(t, &s.events, 1, len(events)-1) // …and the others wait for it
		release()
		out := map[string]eventAnswer{}
		for id, ch := range chs {
			out[id] = <-ch
		}
		return out
	}
	written := func(id string, a eventAnswer) {
		t.Helper()
		if a.err != nil || a.res.Replayed || a.res.Conflict || len(a.res.Enqueued["price-drop"].Notifications) != 1 {
			t.Errorf("%s: %+v %v", id, a.res, a.err)
		}
		if got := deliveriesOf(t, s, "n-"+id); got != 1 {
			t.Errorf("%s: %d deliveries, want 1", id, got)
		}
	}

	// Round 1: ev-1…ev-4 of their own subjects go in one batch; ev-5, of
	// ev-2's subject and decided on the same (empty) subject, waits for the
	// next and finds it moved on — or, queued before ev-2, goes in the
	// batch and ev-2 waits.
	got := round(batchEvent("ev-0", "product:0", "u1"), batchEvent("ev-1", "product:1", "u2"),
		batchEvent("ev-2", "product:2", "u3"), batchEvent("ev-3", "product:3", "u2"),
		batchEvent("ev-4", "product:4", "u3"), batchEvent("ev-5", "product:2", "u2"))
	for _, id := range []string{"ev-0", "ev-1", "ev-3", "ev-4"} {
		written(id, got[id])
	}
	first, second := "ev-2", "ev-5"
	if got[first].res.Conflict {
		first, second = second, first
	}
	written(first, got[first])
	if a := got[second]; a.err != nil || !a.res.Conflict {
		t.Errorf("%s: %+v %v, want a conflict", second, a.res, a.err)
	}
	if got := deliveriesOf(t, s, "n-"+second); got != 0 {
		t.Errorf("%s: %d deliveries, want 0", second, got)
	}
	if b, n := s.events.batches.Load(), s.events.batched.Load(); b != 1 || n != 4 {
		t.Fatalf("%d batches of %d events, want 1 of 4", b, n)
	}

	// Round 2: one event names a user who does not exist and one is a
	// redelivery of ev-1; the batch is rolled back, and alone each gets
	// its own answer: not found, replayed, written.
	got = round(batchEvent("ev-6", "product:6", "u1"), batchEvent("ev-7", "product:7", "nobody"),
		batchEvent("ev-1", "product:1", "u2"), batchEvent("ev-8", "product:8", "u3"))
	written("ev-6", got["ev-6"])
	written("ev-8", got["ev-8"])
	if a := got["ev-7"]; heraldtype.ErrorCode(a.err) != heraldtype.ENOTFOUND {
		t.Errorf("ev-7: %+v %v, want not found", a.res, a.err)
	}
	var o map[string]string
	if a := got["ev-1"]; a.err != nil || !a.res.Replayed || json.Unmarshal(a.res.Outcome, &o) != nil || o["event_id"] != "ev-1" {
		t.Errorf("ev-1 again: %+v %v, want replayed with its first outcome", a.res, a.err)
	}
	if got := deliveriesOf(t, s, "n-ev-1"); got != 1 {
		t.Errorf("ev-1: %d deliveries after its redelivery, want 1", got)
	}
	if _, ok, err := s.RecordedEvent(ctx, store.EventKey{Source: "product.inventory.v1", ID: "ev-7"}); ok || err != nil {
		t.Errorf("ev-7 recorded: %v %v", ok, err)
	}
	if b := s.events.batches.Load(); b != 2 {
		t.Fatalf("%d batches, want 2", b)
	}
	s.events.mu.Lock()
	defer s.events.mu.Unlock()
	if s.events.running != 0 || len(s.events.queue) != 0 {
		t.Fatalf("batcher left running %d, queue %d", s.events.running, len(s.events.queue))
	}
}
