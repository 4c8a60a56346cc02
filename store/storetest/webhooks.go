package storetest

import (
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/heraldhq/herald/heraldtype"
	"github.com/heraldhq/herald/store"
)

// testWebhooks checks the outbound webhook storage (issue 35 item 4):
// endpoints, secret rotation, the claim in order per (endpoint, ordering
// key), finishing a send (sent, retry, dead, the endpoint disabled), the
// dead letter list and replay.
func testWebhooks(t *testing.T, newStore NewStore) {
	t.Run("Endpoints", func(t *testing.T) { t.Parallel(); testWebhookEndpoints(t, newFixture(t, newStore)) })
	t.Run("Rotation", func(t *testing.T) { t.Parallel(); testWebhookRotation(t, newFixture(t, newStore)) })
	t.Run("Subscriptions", func(t *testing.T) { t.Parallel(); testWebhookSubscriptions(t, newFixture(t, newStore)) })
	t.Run("ClaimOrder", func(t *testing.T) { t.Parallel(); testWebhookClaimOrder(t, newFixture(t, newStore)) })
	t.Run("ClaimPerEndpoint", func(t *testing.T) { t.Parallel(); testWebhookClaimPerEndpoint(t, newFixture(t, newStore)) })
	t.Run("ClaimConcurrent", func(t *testing.T) { t.Parallel(); testWebhookClaimConcurrent(t, newFixture(t, newStore)) })
	t.Run("Finish", func(t *testing.T) { t.Parallel(); testWebhookFinish(t, newFixture(t, newStore)) })
	t.Run("FinishSent", func(t *testing.T) { t.Parallel(); testWebhooksSent(t, newFixture(t, newStore)) })
	t.Run("DeadAndReplay", func(t *testing.T) { t.Parallel(); testWebhookReplay(t, newFixture(t, newStore)) })
	t.Run("BadArguments", func(t *testing.T) { t.Parallel(); testWebhookArguments(t, newFixture(t, newStore)) })
	t.Run("Prune", func(t *testing.T) { t.Parallel(); testWebhookPrune(t, newFixture(t, newStore)) })
	t.Run("Stream", func(t *testing.T) { t.Parallel(); testWebhookStream(t, newFixture(t, newStore)) })
	t.Run("StreamLease", func(t *testing.T) { t.Parallel(); testWebhookStreamLease(t, newFixture(t, newStore)) })
	t.Run("StreamHeld", func(t *testing.T) { t.Parallel(); testWebhookStreamHeld(t, newFixture(t, newStore)) })
}

const (
	whSecret  = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
	whSecret2 = "whsec_C2FVsBQIhrscChlQIMV+b5sSYspob7oD"
)

// webhookEndpoint creates an enabled endpoint subscribed to events.
func (f *fixture) webhookEndpoint(id string, events ...string) store.WebhookEndpoint {
	f.t.Helper()
	e := store.WebhookEndpoint{WebhookEndpoint: heraldtype.WebhookEndpoint{ID: id, URL: "https://example.com/" + id,
		Events: events, Enabled: true, CreatedAt: base(), UpdatedAt: base()}, Secret: whSecret}
	if err := f.s.CreateWebhookEndpoint(f.ctx, e); err != nil {
		f.t.Fatalf("CreateWebhookEndpoint(%s): %v", id, err)
	}
	return e
}

// webhookEvents adds events of type "test.event" (which only endpoints
// subscribed to every type get), keyed by key, and returns how many
// messages were written.
func (f *fixture) webhookEvents(key string, ids ...string) int {
	f.t.Helper()
	var es []store.WebhookEvent
	for _, id := range ids {
		es = append(es, store.WebhookEvent{EventID: id, Type: "test.event", OrderingKey: key,
			Data: []byte(`{"id":"` + id + `"}`), At: base()})
	}
	n, err := f.s.AddWebhookEvents(f.ctx, es)
	if err != nil {
		f.t.Fatalf("AddWebhookEvents: %v", err)
	}
	return n
}

// drainStreams copies every event past its endpoint's cursor into the
// retry table as a pending message due at its event's time, and moves the
// cursors past them: the retry claim's cases start from there, as they
// did before the log (an event reaches the retry table only by a failed
// or held send, store/webhookstream.go).
//
// On PostgreSQL an event is streamed only once every transaction older
// than its own has ended, the other tests' included: until each enabled
// endpoint's backlog is empty, a claim that finds nothing waits a little.
func (f *fixture) drainStreams(now time.Time) {
	f.t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		st, err := f.s.ClaimWebhookStream(f.ctx, store.WebhookStreamClaim{Owner: "drain", Now: now, LeaseUntil: now.Add(time.Minute),
			Limit: store.MaxWebhookClaim})
		if err != nil {
			f.t.Fatalf("ClaimWebhookStream: %v", err)
		}
		if st == nil {
			if f.backlog() == 0 {
				return
			}
			if time.Now().After(deadline) {
				f.t.Fatalf("the webhook events stayed past their cursors for 10 s")
			}
			time.Sleep(5 * time.Millisecond)
			continue
		}
		a := store.WebhookStreamAdvance{EndpointID: st.EndpointID, Owner: "drain", At: now,
			Through: st.Events[len(st.Events)-1].Position()}
		for _, e := range st.Events {
			a.Moves = append(a.Moves, store.WebhookMove{Event: e, State: heraldtype.WebhookPending, RunAt: e.OccurredAt, FirstAt: e.OccurredAt})
		}
		if applied, _, err := f.s.AdvanceWebhookStream(f.ctx, a); err != nil || !applied {
			f.t.Fatalf("AdvanceWebhookStream = %v, %v", applied, err)
		}
	}
}

// backlog counts the events past their cursors of the enabled endpoints
// (a disabled one's are held there).
func (f *fixture) backlog() int {
	f.t.Helper()
	es, err := f.s.ListWebhookEndpoints(f.ctx)
	if err != nil {
		f.t.Fatal(err)
	}
	n := 0
	for _, e := range es {
		if e.Enabled {
			k, err := f.s.CountWebhookBacklog(f.ctx, e.ID, store.MaxWebhookClaim)
			if err != nil {
				f.t.Fatal(err)
			}
			n += k
		}
	}
	return n
}

func (f *fixture) claimWebhooks(owner string, now time.Time, limit int) []store.WebhookJob {
	f.t.Helper()
	f.drainStreams(now)
	jobs, err := f.s.ClaimWebhookMessages(f.ctx, store.WebhookClaim{Owner: owner, Now: now, LeaseUntil: now.Add(time.Minute), Limit: limit})
	if err != nil {
		f.t.Fatalf("ClaimWebhookMessages: %v", err)
	}
	return jobs
}

func eventIDs(jobs []store.WebhookJob) []string {
	out := make([]string, len(jobs))
	for i, j := range jobs {
		out[i] = j.EventID
	}
	return out
}

func (f *fixture) finishWebhook(j store.WebhookJob, owner string, fin store.WebhookFinish) (bool, bool) {
	f.t.Helper()
	fin.Seq, fin.Owner, fin.Attempt = j.Seq, owner, j.Attempt
	if fin.At.IsZero() {
		fin.At = base()
	}
	applied, disabled, err := f.s.FinishWebhookMessage(f.ctx, fin)
	if err != nil {
		f.t.Fatalf("FinishWebhookMessage(%s): %v", j.EventID, err)
	}
	return applied, disabled
}

func (f *fixture) webhookMessages(endpoint string, state heraldtype.WebhookMessageState) []heraldtype.WebhookMessage {
	f.t.Helper()
	ms, err := f.s.ListWebhookMessages(f.ctx, store.WebhookMessageFilter{EndpointID: endpoint, State: state, Limit: 100})
	if err != nil {
		f.t.Fatalf("ListWebhookMessages: %v", err)
	}
	return ms
}

func testWebhookEndpoints(t *testing.T, f *fixture) {
	e := f.webhookEndpoint("wh1", heraldtype.WebhookDeliveryFinished)
	e.Description = "crm"
	dup := e
	wantCode(t, f.s.CreateWebhookEndpoint(f.ctx, dup), heraldtype.ECONFLICT)
	f.webhookEndpoint("wh2")

	got, err := f.s.GetWebhookEndpoint(f.ctx, "wh1")
	if err != nil {
		t.Fatal(err)
	}
	if got.URL != e.URL || !slices.Equal(got.Events, e.Events) || !got.Enabled || got.Secret != whSecret || got.PreviousSecret != "" {
		t.Fatalf("GetWebhookEndpoint = %+v", got)
	}
	wantTime(t, "CreatedAt", got.CreatedAt, base())
	_, err = f.s.GetWebhookEndpoint(f.ctx, "nope")
	wantCode(t, err, heraldtype.ENOTFOUND)

	list, err := f.s.ListWebhookEndpoints(f.ctx)
	if err != nil || len(list) != 2 || list[0].ID != "wh1" || list[1].ID != "wh2" || len(list[1].Events) != 0 {
		t.Fatalf("ListWebhookEndpoints = %+v, %v", list, err)
	}

	url, desc, off := "https://example.org/hook", "the CRM", false
	events := []string{}
	got, err = f.s.UpdateWebhookEndpoint(f.ctx, "wh1", store.WebhookEndpointUpdate{URL: &url, Description: &desc,
		Events: &events, Enabled: &off}, at(time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	if got.URL != url || got.Description != desc || len(got.Events) != 0 || got.Enabled || got.Secret != whSecret {
		t.Fatalf("UpdateWebhookEndpoint = %+v", got)
	}
	wantTime(t, "UpdatedAt", got.UpdatedAt, at(time.Minute))
	// A partial update keeps the rest.
	desc2 := "billing"
	if got, err = f.s.UpdateWebhookEndpoint(f.ctx, "wh1", store.WebhookEndpointUpdate{Description: &desc2}, at(2*time.Minute)); err != nil {
		t.Fatal(err)
	}
	if got.URL != url || got.Description != desc2 || got.Enabled {
		t.Fatalf("a partial update = %+v", got)
	}
	_, err = f.s.UpdateWebhookEndpoint(f.ctx, "nope", store.WebhookEndpointUpdate{Description: &desc2}, base())
	wantCode(t, err, heraldtype.ENOTFOUND)

	// Deleting an endpoint deletes its messages.
	if n := f.webhookEvents("k", "evt_a"); n != 1 { // wh2 only: wh1 is disabled
		t.Fatalf("messages written = %d, want 1", n)
	}
	if err := f.s.DeleteWebhookEndpoint(f.ctx, "wh2"); err != nil {
		t.Fatal(err)
	}
	wantCode(t, f.s.DeleteWebhookEndpoint(f.ctx, "wh2"), heraldtype.ENOTFOUND)
	_, err = f.s.ListWebhookMessages(f.ctx, store.WebhookMessageFilter{EndpointID: "wh2", Limit: 10})
	wantCode(t, err, heraldtype.ENOTFOUND)
	if jobs := f.claimWebhooks("w", at(time.Hour), 10); len(jobs) != 0 {
		t.Fatalf("a deleted endpoint's message was claimed: %v", eventIDs(jobs))
	}
	// Its messages went with it: none is left for the pruner as an orphan.
	if n, err := f.s.PruneWebhookMessages(f.ctx, at(-time.Hour)); err != nil || n != 0 {
		t.Fatalf("PruneWebhookMessages after the delete = %d, %v; want 0 (the messages deleted with the endpoint)", n, err)
	}
}

func testWebhookRotation(t *testing.T, f *fixture) {
	f.webhookEndpoint("wh")
	got, err := f.s.RotateWebhookSecret(f.ctx, "wh", whSecret2, at(time.Hour), at(time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	if got.Secret != whSecret2 || got.PreviousSecret != whSecret || got.PreviousSecretUntil == nil {
		t.Fatalf("RotateWebhookSecret = %+v", got)
	}
	wantTime(t, "PreviousSecretUntil", *got.PreviousSecretUntil, at(time.Hour))
	_, err = f.s.RotateWebhookSecret(f.ctx, "nope", whSecret2, at(time.Hour), base())
	wantCode(t, err, heraldtype.ENOTFOUND)

	f.webhookEvents("k1", "evt_1")
	f.webhookEvents("k2", "evt_2")
	// During the overlap both secrets sign, the new one first.
	jobs := f.claimWebhooks("w", at(30*time.Minute), 1)
	if len(jobs) != 1 || !slices.Equal(jobs[0].Secrets, []string{whSecret2, whSecret}) {
		t.Fatalf("secrets during the overlap = %+v", jobs)
	}
	// After it, only the new one.
	jobs = f.claimWebhooks("w", at(time.Hour), 1)
	if len(jobs) != 1 || !slices.Equal(jobs[0].Secrets, []string{whSecret2}) {
		t.Fatalf("secrets after the overlap = %+v", jobs)
	}
}

func testWebhookSubscriptions(t *testing.T, f *fixture) {
	f.webhookEndpoint("all")
	f.webhookEndpoint("finished", heraldtype.WebhookDeliveryFinished)
	f.webhookEndpoint("off")
	off := false
	if _, err := f.s.UpdateWebhookEndpoint(f.ctx, "off", store.WebhookEndpointUpdate{Enabled: &off}, base()); err != nil {
		t.Fatal(err)
	}
	n, err := f.s.AddWebhookEvents(f.ctx, []store.WebhookEvent{
		{EventID: "evt_f", Type: heraldtype.WebhookDeliveryFinished, OrderingKey: "n1", Data: []byte(`{}`), At: base()},
		{EventID: "evt_t", Type: "test.event", OrderingKey: "n1", Data: []byte(`{}`), At: base()},
		// A test message goes to its endpoint, subscribed or not, enabled or not.
		{EventID: "evt_ping", Type: "webhook.test", OrderingKey: "test", Data: []byte(`{}`), At: base(), EndpointID: "off"},
	})
	if err != nil || n != 4 {
		t.Fatalf("AddWebhookEvents = %d, %v; want 4 (all: 2, finished: 1, off: the test)", n, err)
	}
	for ep, want := range map[string][]string{"all": {"evt_t", "evt_f"}, "finished": {"evt_f"}, "off": {"evt_ping"}} {
		ms := f.webhookMessages(ep, "")
		var ids []string
		for _, m := range ms {
			ids = append(ids, m.EventID)
			if m.State != heraldtype.WebhookPending || m.Attempt != 0 || m.OrderingKey == "" {
				t.Errorf("%s: a new message = %+v", ep, m)
			}
			wantTime(t, "OccurredAt", m.OccurredAt, base())
			wantTime(t, "FirstAt", m.FirstAt, base())
		}
		if !slices.Equal(ids, want) {
			t.Errorf("%s's messages (newest first) = %v, want %v", ep, ids, want)
		}
	}
	// No endpoint subscribed: nothing is written, and that is no error.
	n, err = f.s.AddWebhookEvents(f.ctx, []store.WebhookEvent{{EventID: "evt_x", Type: "other.type", OrderingKey: "k", Data: []byte(`{}`), At: base()}})
	if err != nil || n != 1 { // "all" takes every type
		t.Fatalf("AddWebhookEvents(other.type) = %d, %v; want 1", n, err)
	}
}

func testWebhookClaimOrder(t *testing.T, f *fixture) {
	f.webhookEndpoint("wh")
	f.webhookEndpoint("other")
	f.webhookEvents("n1", "a1", "a2", "a3")
	f.webhookEvents("n2", "b1")
	// One message per key and endpoint: a1 and b1 on both endpoints.
	jobs := f.claimWebhooks("w1", base(), 100)
	if ids := eventIDs(jobs); !slices.Equal(ids, []string{"a1", "a1", "b1", "b1"}) {
		t.Fatalf("first claim = %v, want a1, a1, b1, b1 (never a2 before a1)", ids)
	}
	for _, j := range jobs {
		if j.State != heraldtype.WebhookLeased || j.Attempt != 1 || j.URL == "" || string(j.Data) == "" {
			t.Fatalf("a claimed job = %+v", j)
		}
	}
	// Leased messages are not claimed again, and hold their keys.
	if more := f.claimWebhooks("w2", at(time.Second), 100); len(more) != 0 {
		t.Fatalf("claimed while leased: %v", eventIDs(more))
	}
	byEndpoint := func(js []store.WebhookJob, ep, id string) store.WebhookJob {
		for _, j := range js {
			if j.EndpointID == ep && j.EventID == id {
				return j
			}
		}
		t.Fatalf("no job %s of %s in %v", id, ep, eventIDs(js))
		return store.WebhookJob{}
	}
	// wh's a1 fails and waits 10 minutes: a2 waits behind it.
	f.finishWebhook(byEndpoint(jobs, "wh", "a1"), "w1", store.WebhookFinish{State: heraldtype.WebhookPending,
		RunAt: at(10 * time.Minute), Status: 503, Error: "503"})
	// other's a1 is sent: other's a2 is next.
	f.finishWebhook(byEndpoint(jobs, "other", "a1"), "w1", store.WebhookFinish{State: heraldtype.WebhookSent, Status: 200})
	jobs2 := f.claimWebhooks("w2", at(2*time.Second), 100)
	if len(jobs2) != 1 || jobs2[0].EndpointID != "other" || jobs2[0].EventID != "a2" {
		t.Fatalf("after a retry and a send: %+v, want other's a2 only", eventIDs(jobs2))
	}
	keys := func(js []store.WebhookJob) []string {
		var out []string
		for _, j := range js {
			out = append(out, j.EndpointID+":"+j.EventID)
		}
		slices.Sort(out)
		return out
	}
	// At the retry's time wh's a1 comes again (attempt 2), still not a2;
	// the b1s and other's a2, whose leases (a minute) ended unfinished,
	// are claimed again.
	jobs3 := f.claimWebhooks("w3", at(10*time.Minute), 100)
	if got, want := keys(jobs3), []string{"other:a2", "other:b1", "wh:a1", "wh:b1"}; !slices.Equal(got, want) {
		t.Fatalf("at the retry: %v, want %v", got, want)
	}
	if j := byEndpoint(jobs3, "wh", "a1"); j.Attempt != 2 {
		t.Fatalf("wh's a1 at its retry has attempt %d, want 2", j.Attempt)
	}
	// The first owner of an expired lease changes nothing.
	if applied, _ := f.finishWebhook(byEndpoint(jobs, "wh", "b1"), "w1", store.WebhookFinish{State: heraldtype.WebhookSent}); applied {
		t.Fatal("a finish under an ended lease applied")
	}
	// A dead message no longer holds its key.
	for _, j := range jobs3 {
		fin := store.WebhookFinish{State: heraldtype.WebhookSent, Status: 200, At: at(10 * time.Minute)}
		if j.EndpointID == "wh" && j.EventID == "a1" {
			fin = store.WebhookFinish{State: heraldtype.WebhookDead, Status: 500, Error: "500", At: at(10 * time.Minute)}
		}
		f.finishWebhook(j, "w3", fin)
	}
	jobs4 := f.claimWebhooks("w4", at(10*time.Minute), 100)
	if got, want := keys(jobs4), []string{"other:a3", "wh:a2"}; !slices.Equal(got, want) {
		t.Fatalf("after wh's a1 died: %v, want %v", got, want)
	}
	// A disabled endpoint's messages are held, and flow again once it is
	// enabled.
	for _, j := range jobs4 {
		f.finishWebhook(j, "w4", store.WebhookFinish{State: heraldtype.WebhookPending, RunAt: at(11 * time.Minute), At: at(10 * time.Minute)})
	}
	off, on := false, true
	if _, err := f.s.UpdateWebhookEndpoint(f.ctx, "wh", store.WebhookEndpointUpdate{Enabled: &off}, at(10*time.Minute)); err != nil {
		t.Fatal(err)
	}
	if got := keys(f.claimWebhooks("w5", at(12*time.Minute), 100)); !slices.Equal(got, []string{"other:a3"}) {
		t.Fatalf("with wh disabled: %v, want other's a3 only", got)
	}
	if _, err := f.s.UpdateWebhookEndpoint(f.ctx, "wh", store.WebhookEndpointUpdate{Enabled: &on}, at(12*time.Minute)); err != nil {
		t.Fatal(err)
	}
	if got := keys(f.claimWebhooks("w6", at(12*time.Minute), 100)); !slices.Equal(got, []string{"wh:a2"}) {
		t.Fatalf("re-enabled: %v, want wh's a2", got)
	}
}

// testWebhookClaimPerEndpoint: a claim takes at most PerEndpoint messages
// of one endpoint, oldest first, and none of the endpoints Skip names —
// the dispatcher's cap on sends in flight per endpoint (issue 35 item 4).
func testWebhookClaimPerEndpoint(t *testing.T, f *fixture) {
	f.webhookEndpoint("wh")
	f.webhookEndpoint("other")
	for i := 1; i <= 5; i++ {
		f.webhookEvents(fmt.Sprintf("k%d", i), fmt.Sprintf("e%d", i))
	}
	f.drainStreams(base())
	claim := func(owner string, per int, skip ...string) []string {
		t.Helper()
		jobs, err := f.s.ClaimWebhookMessages(f.ctx, store.WebhookClaim{Owner: owner, Now: base(), LeaseUntil: at(time.Minute),
			Limit: 100, PerEndpoint: per, Skip: skip})
		if err != nil {
			t.Fatalf("ClaimWebhookMessages: %v", err)
		}
		var out []string
		for _, j := range jobs {
			out = append(out, j.EndpointID+":"+j.EventID)
		}
		slices.Sort(out)
		return out
	}
	if got, want := claim("w1", 2), []string{"other:e1", "other:e2", "wh:e1", "wh:e2"}; !slices.Equal(got, want) {
		t.Fatalf("two per endpoint: %v, want %v", got, want)
	}
	if got, want := claim("w2", 2, "wh"), []string{"other:e3", "other:e4"}; !slices.Equal(got, want) {
		t.Fatalf("skipping wh: %v, want %v", got, want)
	}
	if got := claim("w3", 2, "wh", "other"); len(got) != 0 {
		t.Fatalf("skipping both: %v, want none", got)
	}
	// The pending gauge's count: pending and leased alike, stopped at max.
	for _, c := range []struct{ max, want int }{{100, 10}, {4, 4}} {
		if n, err := f.s.CountWebhookMessagesPending(f.ctx, c.max); err != nil || n != c.want {
			t.Fatalf("CountWebhookMessagesPending(%d) = %d, %v; want %d", c.max, n, err, c.want)
		}
	}
	_, err := f.s.CountWebhookMessagesPending(f.ctx, 0)
	wantCode(t, err, heraldtype.EINVALID)
	if got, want := claim("w4", 0), []string{"other:e5", "wh:e3", "wh:e4", "wh:e5"}; !slices.Equal(got, want) {
		t.Fatalf("no cap: %v, want %v", got, want)
	}
}

// testWebhookClaimConcurrent claims from several goroutines at once: no
// message is handed out twice.
func testWebhookClaimConcurrent(t *testing.T, f *fixture) {
	f.webhookEndpoint("wh")
	const keys = 60
	for i := range keys {
		f.webhookEvents(fmt.Sprintf("k%02d", i), fmt.Sprintf("e%02d", i))
	}
	f.drainStreams(base())
	var (
		mu   sync.Mutex
		seen = map[int64]string{}
		wg   sync.WaitGroup
	)
	for w := range 4 {
		owner := fmt.Sprintf("w%d", w)
		wg.Go(func() {
			for range 10 {
				jobs, err := f.s.ClaimWebhookMessages(f.ctx, store.WebhookClaim{Owner: owner, Now: base(), LeaseUntil: at(time.Minute), Limit: 5})
				if err != nil {
					t.Error(err)
					return
				}
				mu.Lock()
				for _, j := range jobs {
					if prev, dup := seen[j.Seq]; dup {
						t.Errorf("message %d claimed by %s and %s", j.Seq, prev, owner)
					}
					seen[j.Seq] = owner
				}
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	if len(seen) != keys {
		t.Fatalf("claimed %d messages, want %d", len(seen), keys)
	}
}

func testWebhookFinish(t *testing.T, f *fixture) {
	f.webhookEndpoint("wh")
	f.webhookEvents("k1", "e1")
	f.webhookEvents("k2", "e2")
	f.webhookEvents("k3", "e3")
	f.webhookEvents("k4", "e4")
	ep := func() store.WebhookEndpoint {
		e, err := f.s.GetWebhookEndpoint(f.ctx, "wh")
		if err != nil {
			t.Fatal(err)
		}
		return e
	}
	jobs := f.claimWebhooks("w", base(), 100)
	if len(jobs) != 4 {
		t.Fatalf("claimed %d, want 4", len(jobs))
	}
	// A failure starts failing_since; a later one keeps it.
	f.finishWebhook(jobs[0], "w", store.WebhookFinish{State: heraldtype.WebhookPending, RunAt: at(time.Hour), Status: 500,
		Error: "answered 500", At: at(time.Minute), DisableFailingSince: at(-time.Hour), FailingReason: "failing"})
	if e := ep(); e.FailingSince == nil || !e.FailingSince.Equal(at(time.Minute)) || !e.Enabled {
		t.Fatalf("after a failure: %+v", e.WebhookEndpoint)
	}
	ms := f.webhookMessages("wh", heraldtype.WebhookPending)
	if len(ms) != 1 || ms[0].LastStatus != 500 || ms[0].LastError != "answered 500" {
		t.Fatalf("the retried message = %+v", ms)
	}
	wantTime(t, "RunAt", ms[0].RunAt, at(time.Hour))
	// A success clears it.
	f.finishWebhook(jobs[1], "w", store.WebhookFinish{State: heraldtype.WebhookSent, Status: 204, At: at(2 * time.Minute)})
	if e := ep(); e.FailingSince != nil {
		t.Fatalf("after a success failing_since = %v", e.FailingSince)
	}
	sent := f.webhookMessages("wh", heraldtype.WebhookSent)
	if len(sent) != 1 || sent[0].FinishedAt == nil || sent[0].LastStatus != 204 {
		t.Fatalf("the sent message = %+v", sent)
	}
	// Failing since before the disable_after cutoff disables it.
	f.finishWebhook(jobs[2], "w", store.WebhookFinish{State: heraldtype.WebhookPending, RunAt: at(time.Hour), Status: 500,
		At: at(3 * time.Minute), DisableFailingSince: at(2 * time.Minute), FailingReason: "failing"})
	if e := ep(); !e.Enabled {
		t.Fatalf("disabled at its first failure: %+v", e.WebhookEndpoint)
	}
	_, disabled := f.finishWebhook(jobs[3], "w", store.WebhookFinish{State: heraldtype.WebhookPending, RunAt: at(time.Hour), Status: 500,
		At: at(5 * time.Minute), DisableFailingSince: at(3 * time.Minute), FailingReason: "failing since then"})
	if e := ep(); !disabled || e.Enabled || e.DisabledReason != "failing since then" {
		t.Fatalf("failing for longer than allowed: disabled %v, %+v", disabled, e.WebhookEndpoint)
	}
	// Enabling it again starts afresh.
	on := true
	e, err := f.s.UpdateWebhookEndpoint(f.ctx, "wh", store.WebhookEndpointUpdate{Enabled: &on}, at(6*time.Minute))
	if err != nil || !e.Enabled || e.DisabledReason != "" || e.FailingSince != nil {
		t.Fatalf("re-enabled: %+v, %v", e.WebhookEndpoint, err)
	}
	// A success of an endpoint that is not failing leaves its row alone
	// (no write, updated_at kept): the usual outcome must not queue every
	// send on the endpoint's lock (issue 35 item 5).
	f.webhookEvents("k6", "e6")
	j6 := f.claimWebhooks("w", at(6*time.Minute+10*time.Second), 100)
	if len(j6) != 1 {
		t.Fatalf("claimed %v, want e6", eventIDs(j6))
	}
	f.finishWebhook(j6[0], "w", store.WebhookFinish{State: heraldtype.WebhookSent, Status: 204, At: at(6*time.Minute + 20*time.Second)})
	if e := ep(); !e.UpdatedAt.Equal(at(6*time.Minute)) || e.FailingSince != nil || !e.Enabled {
		t.Fatalf("a success of a healthy endpoint wrote it: %+v", e.WebhookEndpoint)
	}
	// 410 Gone disables at once.
	f.webhookEvents("k5", "e5")
	j := f.claimWebhooks("w", at(7*time.Minute), 100)
	if len(j) != 1 {
		t.Fatalf("claimed %v, want e5", eventIDs(j))
	}
	if _, disabled := f.finishWebhook(j[0], "w", store.WebhookFinish{State: heraldtype.WebhookPending, RunAt: at(7 * time.Minute),
		Status: 410, At: at(7 * time.Minute), Disable: "gone"}); !disabled {
		t.Fatal("410 did not disable")
	}
	if e := ep(); e.Enabled || e.DisabledReason != "gone" {
		t.Fatalf("after 410: %+v", e.WebhookEndpoint)
	}
}

func testWebhookReplay(t *testing.T, f *fixture) {
	f.webhookEndpoint("wh")
	f.webhookEndpoint("other")
	f.webhookEvents("k1", "e1")
	f.webhookEvents("k2", "e2")
	for _, j := range f.claimWebhooks("w", base(), 100) {
		f.finishWebhook(j, "w", store.WebhookFinish{State: heraldtype.WebhookDead, Status: 500, Error: "gave up", At: at(time.Minute)})
	}
	dead := f.webhookMessages("wh", heraldtype.WebhookDead)
	if len(dead) != 2 || dead[0].EventID != "e2" || dead[0].FinishedAt == nil || dead[0].LastError != "gave up" {
		t.Fatalf("dead letters = %+v", dead)
	}
	// A page: newest first, then before the cursor.
	page, err := f.s.ListWebhookMessages(f.ctx, store.WebhookMessageFilter{EndpointID: "wh", State: heraldtype.WebhookDead, Limit: 1})
	if err != nil || len(page) != 1 || page[0].EventID != "e2" {
		t.Fatalf("page 1 = %+v, %v", page, err)
	}
	page, err = f.s.ListWebhookMessages(f.ctx, store.WebhookMessageFilter{EndpointID: "wh", State: heraldtype.WebhookDead, Limit: 1, Before: page[0].Seq,
		BeforeTxid: page[0].Txid})
	if err != nil || len(page) != 1 || page[0].EventID != "e1" {
		t.Fatalf("page 2 = %+v, %v", page, err)
	}
	// Replay one by seq, then the rest: same event ids, attempt 0,
	// first_at now (a new retry window).
	n, err := f.s.ReplayWebhookMessages(f.ctx, "wh", []int64{page[0].Seq}, at(time.Hour))
	if err != nil || n != 1 {
		t.Fatalf("replay one = %d, %v", n, err)
	}
	n, err = f.s.ReplayWebhookMessages(f.ctx, "wh", nil, at(time.Hour))
	if err != nil || n != 1 {
		t.Fatalf("replay all = %d, %v", n, err)
	}
	_, err = f.s.ReplayWebhookMessages(f.ctx, "nope", nil, at(time.Hour))
	wantCode(t, err, heraldtype.ENOTFOUND)
	if n, _ := f.s.ReplayWebhookMessages(f.ctx, "wh", nil, at(time.Hour)); n != 0 {
		t.Fatalf("replayed %d with no dead message", n)
	}
	jobs := f.claimWebhooks("w2", at(time.Hour), 100)
	if ids := eventIDs(jobs); !slices.Equal(ids, []string{"e1", "e2"}) {
		t.Fatalf("replayed and claimed: %v", ids)
	}
	for _, j := range jobs {
		if j.EndpointID != "wh" || j.Attempt != 1 || j.FinishedAt != nil {
			t.Fatalf("a replayed job = %+v", j)
		}
		wantTime(t, "FirstAt", j.FirstAt, at(time.Hour))
		wantTime(t, "OccurredAt", j.OccurredAt, base())
	}
	if len(f.webhookMessages("other", heraldtype.WebhookDead)) != 2 {
		t.Fatal("another endpoint's dead letters were replayed")
	}
}

func testWebhookArguments(t *testing.T, f *fixture) {
	_, err := f.s.ClaimWebhookMessages(f.ctx, store.WebhookClaim{Owner: "", Now: base(), LeaseUntil: at(time.Minute), Limit: 1})
	wantCode(t, err, heraldtype.EINVALID)
	_, err = f.s.ClaimWebhookMessages(f.ctx, store.WebhookClaim{Owner: "w", Now: base(), LeaseUntil: base(), Limit: 1})
	wantCode(t, err, heraldtype.EINVALID)
	_, err = f.s.ClaimWebhookMessages(f.ctx, store.WebhookClaim{Owner: "w", Now: base(), LeaseUntil: at(time.Minute), Limit: 0})
	wantCode(t, err, heraldtype.EINVALID)
	_, err = f.s.ClaimWebhookMessages(f.ctx, store.WebhookClaim{Owner: "w", Now: base(), LeaseUntil: at(time.Minute), Limit: 1, PerEndpoint: -1})
	wantCode(t, err, heraldtype.EINVALID)
	_, _, err = f.s.FinishWebhookMessage(f.ctx, store.WebhookFinish{Seq: 1, Owner: "w", State: heraldtype.WebhookLeased})
	wantCode(t, err, heraldtype.EINVALID)
	_, _, err = f.s.FinishWebhookMessage(f.ctx, store.WebhookFinish{Seq: 1, Owner: "w", State: heraldtype.WebhookPending})
	wantCode(t, err, heraldtype.EINVALID)
	_, err = f.s.ListWebhookMessages(f.ctx, store.WebhookMessageFilter{EndpointID: "x", State: "lost", Limit: 1})
	wantCode(t, err, heraldtype.EINVALID)
	_, err = f.s.AddWebhookEvents(f.ctx, []store.WebhookEvent{{EventID: "e", Type: "t"}})
	wantCode(t, err, heraldtype.EINVALID)
	// Finishing a message nobody leased applies nothing.
	applied, disabled, err := f.s.FinishWebhookMessage(f.ctx, store.WebhookFinish{Seq: 12345, Owner: "w", Attempt: 1, State: heraldtype.WebhookSent, At: base()})
	if err != nil || applied || disabled {
		t.Fatalf("finishing an unknown message = %v, %v, %v", applied, disabled, err)
	}
}

// testWebhookPrune: retention deletes the messages sent or dead before
// the cutoff, and never a pending or leased one, however old; and the
// log's events before the cutoff that the cursor has passed, never one
// still to be sent.
func testWebhookPrune(t *testing.T, f *fixture) {
	f.webhookEndpoint("wh")
	f.webhookEvents("k1", "sent-old")
	f.webhookEvents("k2", "dead-old")
	f.webhookEvents("k3", "sent-new")
	f.webhookEvents("k4", "leased")
	f.webhookEvents("k5", "pending")
	jobs := f.claimWebhooks("w", base(), 4)
	if ids := eventIDs(jobs); !slices.Equal(ids, []string{"sent-old", "dead-old", "sent-new", "leased"}) {
		t.Fatalf("claimed %v", ids)
	}
	f.finishWebhook(jobs[0], "w", store.WebhookFinish{State: heraldtype.WebhookSent, At: at(time.Minute)})
	f.finishWebhook(jobs[1], "w", store.WebhookFinish{State: heraldtype.WebhookDead, At: at(time.Minute)})
	f.finishWebhook(jobs[2], "w", store.WebhookFinish{State: heraldtype.WebhookSent, At: at(time.Hour)})
	f.webhookEvents("k6", "waiting") // in the log, not yet streamed
	n, err := f.s.PruneWebhookMessages(f.ctx, at(30*time.Minute))
	if err != nil || n != 2+5 {
		t.Fatalf("PruneWebhookMessages = %d, %v; want 7 (2 messages, the 5 events the cursor passed)", n, err)
	}
	var left []string
	for _, m := range f.webhookMessages("wh", "") {
		left = append(left, m.EventID)
	}
	if want := []string{"waiting", "pending", "leased", "sent-new"}; !slices.Equal(left, want) {
		t.Fatalf("left %v, want %v", left, want)
	}
}

// testWebhooksSent: FinishWebhooksSent applies a batch of sent outcomes as
// FinishWebhookMessage would one by one — only those still leased by
// their owner for their attempt, clearing a failing endpoint, leaving a
// healthy one unwritten — and refuses anything but sent outcomes (issue 35
// item 5).
func testWebhooksSent(t *testing.T, f *fixture) {
	f.webhookEndpoint("sick")
	f.webhookEndpoint("well", heraldtype.WebhookDeliveryFinished) // gets no test.event
	f.webhookEvents("k1", "e1")
	f.webhookEvents("k2", "e2")
	f.webhookEvents("k3", "e3")
	f.webhookEvents("k4", "e4")
	jobs := f.claimWebhooks("w", base(), 100)
	if len(jobs) != 4 {
		t.Fatalf("claimed %d, want 4", len(jobs))
	}
	// The endpoint fails once: failing since then.
	f.finishWebhook(jobs[0], "w", store.WebhookFinish{State: heraldtype.WebhookPending, RunAt: at(time.Hour), Status: 500,
		At: at(time.Minute), DisableFailingSince: at(-time.Hour), FailingReason: "failing"})
	fin := func(j store.WebhookJob, owner string, attempt int) store.WebhookFinish {
		return store.WebhookFinish{Seq: j.Seq, Owner: owner, Attempt: attempt, State: heraldtype.WebhookSent, Status: 204,
			At: at(2 * time.Minute)}
	}
	// jobs[3] under another owner and jobs[0] (already retried) do not
	// apply; jobs[1] and jobs[2] do.
	n, err := f.s.FinishWebhooksSent(f.ctx, []store.WebhookFinish{fin(jobs[1], "w", jobs[1].Attempt),
		fin(jobs[2], "w", jobs[2].Attempt), fin(jobs[3], "other", jobs[3].Attempt), fin(jobs[0], "w", jobs[0].Attempt)})
	if err != nil || n != 2 {
		t.Fatalf("FinishWebhooksSent = %d, %v; want 2", n, err)
	}
	if sent := f.webhookMessages("sick", heraldtype.WebhookSent); len(sent) != 2 || sent[0].LastStatus != 204 || sent[0].FinishedAt == nil {
		t.Fatalf("sent = %+v", sent)
	}
	if pending := f.webhookMessages("sick", heraldtype.WebhookPending); len(pending) != 1 || pending[0].EventID != "e1" {
		t.Fatalf("pending = %+v", pending)
	}
	e, err := f.s.GetWebhookEndpoint(f.ctx, "sick")
	if err != nil || e.FailingSince != nil || !e.UpdatedAt.Equal(at(2*time.Minute)) {
		t.Fatalf("the failing endpoint after successes: %+v, %v", e.WebhookEndpoint, err)
	}
	// A healthy endpoint is not written.
	f.webhookEvents("k5", "e5")
	// (e4's lease, which the other owner held, has ended: it is claimed
	// again beside e5.)
	j := f.claimWebhooks("w", at(3*time.Minute), 100)
	if len(j) != 2 {
		t.Fatalf("claimed %v, want e4 and e5", eventIDs(j))
	}
	if n, err := f.s.FinishWebhooksSent(f.ctx, []store.WebhookFinish{fin(j[0], "w", j[0].Attempt), fin(j[1], "w", j[1].Attempt)}); err != nil || n != 2 {
		t.Fatalf("FinishWebhooksSent = %d, %v", n, err)
	}
	if e, err := f.s.GetWebhookEndpoint(f.ctx, "sick"); err != nil || !e.UpdatedAt.Equal(at(2*time.Minute)) {
		t.Fatalf("a healthy endpoint was written: %+v, %v", e.WebhookEndpoint, err)
	}
	if n, err := f.s.FinishWebhooksSent(f.ctx, nil); err != nil || n != 0 {
		t.Fatalf("an empty batch = %d, %v", n, err)
	}
	bad := fin(j[0], "w", j[0].Attempt)
	bad.State = heraldtype.WebhookDead
	if _, err := f.s.FinishWebhooksSent(f.ctx, []store.WebhookFinish{bad}); heraldtype.ErrorCode(err) != heraldtype.EINVALID {
		t.Fatalf("a dead outcome in the sent batch = %v, want invalid_argument", err)
	}
}
