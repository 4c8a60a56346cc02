package herald

import (
	"encoding/json"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/heraldhq/herald/heraldtype"
)

// Issue 31 item 1: the replay of a dead event of kind render_failed
// renders the event's failed run again with its rule as it is now and the
// detector's vars kept on the run (the subject's detector state has moved
// on since: judging again would find no drop); a rule still broken, or
// disabled, fails the replay; of replays at once exactly one restarts the
// run, and its audience is notified once.
func TestRenderFailedReplayRetriesTheRunOnce(t *testing.T) {
	p := newRulePipeline(t)
	p.interested("VIEW", "product:42", "u1")
	if _, _, err := p.client.PutRule(p.ctx, priceDropRule()); err != nil {
		t.Fatal(err)
	}
	ev := priceChange("ev-1", 10000, 5000)
	delete(ev.Data, "product_name") // the title needs it
	out, err := p.client.Track(p.ctx, ev)
	if err != nil || len(out.Rules) != 1 || !out.Rules[0].RenderFailed() {
		t.Fatalf("Track: %+v %v", out, err)
	}
	failures := out.RenderFailures()
	if failures == nil || !strings.HasPrefix(failures.Error(), `render_failed: rule "price-drop": notify.title: `) {
		t.Fatalf("RenderFailures: %v", failures)
	}
	runs, _ := p.client.ListRuleRuns(p.ctx, heraldtype.RuleRunFilter{Rule: "price-drop"})
	if len(runs.Runs) != 1 || runs.Runs[0].Job.DetectorVars["drop_pct"] != "50" {
		t.Fatalf("the failed run: %+v", runs.Runs)
	}
	payload, _ := json.Marshal(ev)
	id, err := p.client.RecordDeadEvent(p.ctx, heraldtype.DeadEvent{Topic: ev.Topic, Offset: 3, Kind: RecordRenderFailed,
		Value: payload, Payload: payload, Error: failures.Error(), Attempts: 1})
	if err != nil {
		t.Fatal(err)
	}

	if err := p.client.ReplayDeadEvent(p.ctx, id); err == nil || !strings.Contains(err.Error(), `render_failed: rule "price-drop"`) ||
		!strings.Contains(err.Error(), "product_name") {
		t.Fatalf("replay with the rule still broken: %v", err)
	}
	// The compiled rules are cached by last update: each edit is a
	// moment later.
	p.clock.Advance(time.Second)
	fixed := priceDropRule()
	fixed.Notify.Title = "{{.drop_pct}}% off"
	fixed.Disabled = true
	if _, _, err := p.client.PutRule(p.ctx, fixed); err != nil {
		t.Fatal(err)
	}
	if err := p.client.ReplayDeadEvent(p.ctx, id); heraldtype.ErrorCode(err) != heraldtype.ECONFLICT || !strings.Contains(err.Error(), "disabled") {
		t.Fatalf("replay with the rule disabled: %v", err)
	}
	fixed.Disabled = false
	p.clock.Advance(time.Second)
	if _, _, err := p.client.PutRule(p.ctx, fixed); err != nil {
		t.Fatal(err)
	}

	var wg sync.WaitGroup
	var mu sync.Mutex
	var errs []error
	for range 4 {
		wg.Go(func() {
			err := p.client.ReplayDeadEvent(p.ctx, id)
			mu.Lock()
			errs = append(errs, err)
			mu.Unlock()
		})
	}
	wg.Wait()
	ok := 0
	for _, err := range errs {
		switch {
		case err == nil:
			ok++
		case heraldtype.ErrorCode(err) != heraldtype.ECONFLICT:
			t.Errorf("a concurrent replay: %v", err)
		}
	}
	if ok != 1 {
		t.Fatalf("%d concurrent replays restarted the run (%v), want 1", ok, errs)
	}
	p.fanOut()
	if got := p.notified("price_drop"); !slices.Equal(got, []string{"u1"}) {
		t.Fatalf("notified %v", got)
	}
	runs, _ = p.client.ListRuleRuns(p.ctx, heraldtype.RuleRunFilter{Rule: "price-drop"})
	if r := runs.Runs[0]; r.State != heraldtype.RunDone || r.Enqueued != 1 || r.Job.Notification.Title != "50% off" ||
		r.Job.Notification.DedupeKey != "product:42" || r.LastError != "" {
		t.Fatalf("the retried run: %+v", r)
	}
	// The bulk replay has nothing left to do.
	res, err := p.client.ReplayDeadEvents(p.ctx, DeadEventFilter{Kind: RecordRenderFailed}, false)
	if err != nil || res.Matched != 0 {
		t.Fatalf("bulk replay: %+v %v", res, err)
	}
}
