package storetest

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/heraldhq/herald/heraldtype"
	"github.com/heraldhq/herald/store"
)

// The event log's stream (issue 35 item 5, store/webhookstream.go).

// claimStream claims a stream for owner at now, waiting (up to 10 s) for
// events whose transaction PostgreSQL does not yet count as ended when
// want is true; nil when none is claimable.
func (f *fixture) claimStream(owner string, now time.Time, limit int, want bool) *store.WebhookStream {
	f.t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	f.waitWebhookEvents(deadline)
	for {
		st, err := f.s.ClaimWebhookStream(f.ctx, store.WebhookStreamClaim{Owner: owner, Now: now, LeaseUntil: now.Add(time.Minute),
			Limit: limit})
		if err != nil {
			f.t.Fatalf("ClaimWebhookStream: %v", err)
		}
		if st != nil || !want || time.Now().After(deadline) {
			return st
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// waitWebhookEvents waits, on a store whose stream sees an event only once
// every older transaction has ended (PostgreSQL, where the other tests'
// transactions count too), until the events written so far can be
// streamed: a claim then hands out all of them, not the first few.
func (f *fixture) waitWebhookEvents(deadline time.Time) {
	f.t.Helper()
	w, ok := f.s.(interface {
		WaitWebhookEventsVisible(context.Context) error
	})
	if !ok {
		return
	}
	ctx, cancel := context.WithDeadline(f.ctx, deadline)
	defer cancel()
	if err := w.WaitWebhookEventsVisible(ctx); err != nil {
		f.t.Fatalf("WaitWebhookEventsVisible: %v", err)
	}
}

func streamIDs(st *store.WebhookStream) []string {
	var out []string
	for _, e := range st.Events {
		out = append(out, e.EventID)
	}
	return out
}

func (f *fixture) advanceStream(a store.WebhookStreamAdvance) bool {
	f.t.Helper()
	applied, _, err := f.s.AdvanceWebhookStream(f.ctx, a)
	if err != nil {
		f.t.Fatalf("AdvanceWebhookStream: %v", err)
	}
	return applied
}

func states(ms []heraldtype.WebhookMessage) map[string]heraldtype.WebhookMessageState {
	out := map[string]heraldtype.WebhookMessageState{}
	for _, m := range ms {
		out[m.EventID] = m.State
	}
	return out
}

// testWebhookStream: the stream hands out an endpoint's events in log
// order, a batch at a time; an advance moves the cursor past the batch
// and copies only the events it names into the retry table, with their
// seqs; the list shows each event once, sent behind the cursor, pending
// past it, and a copied one as the retry table has it. A disabled
// endpoint's stream is not handed out; its events wait in the log.
func testWebhookStream(t *testing.T, f *fixture) {
	f.webhookEndpoint("wh")
	f.webhookEvents("k1", "e1", "e2")
	f.webhookEvents("k2", "e3")
	f.webhookEvents("k3", "e4")
	st := f.claimStream("w", base(), 3, true)
	if st == nil || st.EndpointID != "wh" || !slices.Equal(streamIDs(st), []string{"e1", "e2", "e3"}) || len(st.Held) != 0 ||
		len(st.Secrets) != 1 || st.URL != "https://example.com/wh" {
		t.Fatalf("first batch: %+v", st)
	}
	if st.Events[0].State != heraldtype.WebhookPending || st.Events[0].Attempt != 0 || !st.Events[0].OccurredAt.Equal(base()) ||
		string(st.Events[0].Data) != `{"id":"e1"}` || st.Events[0].OrderingKey != "k1" {
		t.Fatalf("an event: %+v", st.Events[0])
	}
	for i := 1; i < len(st.Events); i++ {
		if st.Events[i].Position().Compare(st.Events[i-1].Position()) <= 0 {
			t.Fatalf("events out of log order: %+v", st.Events)
		}
	}
	// e3 failed: copied with its answer, due later; e1 and e2 sent.
	failed := st.Events[2]
	if !f.advanceStream(store.WebhookStreamAdvance{EndpointID: "wh", Owner: "w", At: at(time.Second), Sent: true, Failed: true,
		Through: failed.Position(), Moves: []store.WebhookMove{{Event: failed, State: heraldtype.WebhookPending, Attempt: 1,
			RunAt: at(time.Minute), FirstAt: base(), LastStatus: 503, LastError: "answered 503"}}}) {
		t.Fatal("the advance did not apply")
	}
	if got := states(f.webhookMessages("wh", "")); got["e1"] != heraldtype.WebhookSent || got["e2"] != heraldtype.WebhookSent ||
		got["e3"] != heraldtype.WebhookPending || got["e4"] != heraldtype.WebhookPending || len(got) != 4 {
		t.Fatalf("listed: %v", got)
	}
	if sent := f.webhookMessages("wh", heraldtype.WebhookSent); len(sent) != 2 || sent[0].EventID != "e2" {
		t.Fatalf("sent, newest first: %+v", sent)
	}
	// The copy keeps the event's seq and id, and the retry claim has it
	// when due.
	jobs, err := f.s.ClaimWebhookMessages(f.ctx, store.WebhookClaim{Owner: "r", Now: at(time.Minute), LeaseUntil: at(2 * time.Minute), Limit: 10})
	if err != nil || len(jobs) != 1 || jobs[0].Seq != failed.Seq || jobs[0].EventID != "e3" || jobs[0].Attempt != 2 || jobs[0].LastStatus != 503 {
		t.Fatalf("the retry claim: %+v, %v", jobs, err)
	}
	// The rest of the log, then nothing.
	st = f.claimStream("w", at(time.Second), 10, true)
	if st == nil || !slices.Equal(streamIDs(st), []string{"e4"}) {
		t.Fatalf("second batch: %+v", st)
	}
	if !f.advanceStream(store.WebhookStreamAdvance{EndpointID: "wh", Owner: "w", At: at(time.Second), Sent: true, Through: st.Events[0].Position()}) {
		t.Fatal("the second advance did not apply")
	}
	if st := f.claimStream("w", at(time.Second), 10, false); st != nil {
		t.Fatalf("a stream past its last event: %+v", st)
	}
	if n, err := f.s.CountWebhookBacklog(f.ctx, "wh", 10); err != nil || n != 0 {
		t.Fatalf("backlog = %d, %v", n, err)
	}
	// A disabled endpoint's events wait in the log (those written before
	// it was disabled: a disabled endpoint gets none); enabled, they
	// stream.
	off, on := false, true
	f.webhookEvents("k4", "e5")
	if _, err := f.s.UpdateWebhookEndpoint(f.ctx, "wh", store.WebhookEndpointUpdate{Enabled: &off}, at(time.Second)); err != nil {
		t.Fatal(err)
	}
	if n, err := f.s.CountWebhookBacklog(f.ctx, "wh", 10); err != nil || n != 1 {
		t.Fatalf("backlog while disabled = %d, %v", n, err)
	}
	if st := f.claimStream("w", at(time.Second), 10, false); st != nil {
		t.Fatalf("a disabled endpoint's stream: %+v", st)
	}
	if _, err := f.s.UpdateWebhookEndpoint(f.ctx, "wh", store.WebhookEndpointUpdate{Enabled: &on}, at(time.Second)); err != nil {
		t.Fatal(err)
	}
	if st := f.claimStream("w", at(time.Second), 10, true); st == nil || !slices.Equal(streamIDs(st), []string{"e5"}) {
		t.Fatalf("after enabling: %+v", st)
	}
}

// testWebhookStreamLease: one owner at a time streams an endpoint; a
// lease that ends lets another take the same events, and the first
// owner's late advance applies nothing (its batch is sent again: at least
// once). Skip leaves an endpoint out.
func testWebhookStreamLease(t *testing.T, f *fixture) {
	f.webhookEndpoint("wh")
	f.webhookEvents("k1", "e1")
	first := f.claimStream("a", base(), 10, true)
	if first == nil {
		t.Fatal("no stream")
	}
	if st := f.claimStream("b", base(), 10, false); st != nil {
		t.Fatalf("a leased stream handed out again: %+v", st)
	}
	st, err := f.s.ClaimWebhookStream(f.ctx, store.WebhookStreamClaim{Owner: "b", Now: at(2 * time.Minute),
		LeaseUntil: at(3 * time.Minute), Limit: 10, Skip: []string{"wh"}})
	if err != nil || st != nil {
		t.Fatalf("a skipped endpoint's stream: %+v, %v", st, err)
	}
	second := f.claimStream("b", at(2*time.Minute), 10, false) // past a's lease
	if second == nil || !slices.Equal(streamIDs(second), []string{"e1"}) {
		t.Fatalf("after the lease: %+v", second)
	}
	if f.advanceStream(store.WebhookStreamAdvance{EndpointID: "wh", Owner: "a", At: at(2 * time.Minute), Sent: true,
		Through: first.Events[0].Position()}) {
		t.Fatal("an advance applied after its lease was taken")
	}
	if !f.advanceStream(store.WebhookStreamAdvance{EndpointID: "wh", Owner: "b", At: at(2 * time.Minute), Sent: true,
		Through: second.Events[0].Position()}) {
		t.Fatal("the new owner's advance did not apply")
	}
	_, _, err = f.s.AdvanceWebhookStream(f.ctx, store.WebhookStreamAdvance{EndpointID: "wh", Owner: "b", At: base()})
	wantCode(t, err, heraldtype.EINVALID)
}

// testWebhookStreamHeld: an event whose ordering key has an unfinished
// message in the retry table is reported Held, so it waits behind it;
// once that message is finished, the key is free.
func testWebhookStreamHeld(t *testing.T, f *fixture) {
	f.webhookEndpoint("wh")
	f.webhookEvents("k1", "e1")
	st := f.claimStream("w", base(), 10, true)
	f.advanceStream(store.WebhookStreamAdvance{EndpointID: "wh", Owner: "w", At: base(), Failed: true, Through: st.Events[0].Position(),
		Moves: []store.WebhookMove{{Event: st.Events[0], State: heraldtype.WebhookPending, Attempt: 1, RunAt: at(time.Minute), FirstAt: base()}}})
	f.webhookEvents("k1", "e2")
	f.webhookEvents("k2", "e3")
	st = f.claimStream("w", base(), 10, true)
	if st == nil || !slices.Equal(streamIDs(st), []string{"e2", "e3"}) || !st.Held["k1"] || st.Held["k2"] {
		t.Fatalf("held: %+v", st)
	}
	// e2 copied behind e1, e3 sent: the retry claim hands out e1 only,
	// then e2 once e1 is sent.
	f.advanceStream(store.WebhookStreamAdvance{EndpointID: "wh", Owner: "w", At: base(), Sent: true, Through: st.Events[1].Position(),
		Moves: []store.WebhookMove{{Event: st.Events[0], State: heraldtype.WebhookPending, RunAt: base(), FirstAt: base()}}})
	jobs := f.claimWebhooks("r", at(time.Minute), 10)
	if ids := eventIDs(jobs); !slices.Equal(ids, []string{"e1"}) {
		t.Fatalf("retry claim: %v, want e1 alone", ids)
	}
	f.finishWebhook(jobs[0], "r", store.WebhookFinish{State: heraldtype.WebhookSent, At: at(time.Minute)})
	if ids := eventIDs(f.claimWebhooks("r", at(time.Minute), 10)); !slices.Equal(ids, []string{"e2"}) {
		t.Fatalf("after e1: %v, want e2", ids)
	}
	f.webhookEvents("k1", "e4")
	if st := f.claimStream("w", at(time.Minute), 10, true); st == nil || !st.Held["k1"] {
		t.Fatalf("k1 with e2 leased: %+v", st)
	}
}
