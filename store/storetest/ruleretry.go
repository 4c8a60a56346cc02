package storetest

import (
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/heraldhq/herald/heraldtype"
	"github.com/heraldhq/herald/store"
)

// A failed rule run sent again (issue 31 item 1): the replay of an event
// whose rule's message could not be rendered moves the run back to
// running with the message rendered anew, in one write guarded by the
// run's version and state — of replays at once exactly one restarts it,
// and a run that is not failed (running, or retried already) is left as
// it is.
func testRetryRuleRun(t *testing.T, newStore NewStore) {
	f := newFixture(t, newStore)
	failed := ruleRun("price-drop", "ev-1")
	failed.LastError = "render_failed: notify.title: the template builds more than 262144 bytes (templates.max_bytes)"
	failed.Job.Notification.Title = ""
	failed.Job.DetectorVars = map[string]string{"drop_pct": "12"}
	f.record(eventRecord("ev-1", 0, failed, ruleRun("restock", "ev-1")))

	if _, err := f.s.RuleRun(f.ctx, "price-drop", "no-such-run"); heraldtype.ErrorCode(err) != heraldtype.ENOTFOUND {
		t.Fatalf("RuleRun of no run: %v, want not_found", err)
	}
	run, err := f.s.RuleRun(f.ctx, "price-drop", failed.ID)
	if err != nil || run.State != heraldtype.RunFailed || run.LastError != failed.LastError ||
		run.Job.DetectorVars["drop_pct"] != "12" || run.FinishedAt.IsZero() {
		t.Fatalf("the failed run: %+v %v", run, err)
	}
	job := run.Job
	job.Notification.Title = "Kettle: 12% off"
	retry := store.RuleRetry{Rule: run.Rule, RunID: run.ID, Version: run.Version, Job: job, Now: at(time.Minute)}

	var wg sync.WaitGroup
	var won atomic.Int32
	for range 8 {
		wg.Go(func() {
			ok, err := f.s.RetryRuleRun(f.ctx, retry)
			if err != nil {
				t.Error(err)
			}
			if ok {
				won.Add(1)
			}
		})
	}
	wg.Wait()
	if n := won.Load(); n != 1 {
		t.Fatalf("%d concurrent retries restarted the run, want 1", n)
	}
	got, err := f.s.RuleRun(f.ctx, "price-drop", failed.ID)
	if err != nil || got.State != heraldtype.RunRunning || got.LastError != "" || !got.FinishedAt.IsZero() ||
		got.Job.Notification.Title != "Kettle: 12% off" || got.Version == run.Version || !got.UpdatedAt.Equal(at(time.Minute)) {
		t.Fatalf("the retried run: %+v %v", got, err)
	}
	if runs, err := f.s.RunningRuleRuns(f.ctx, 10); err != nil || len(runs) != 2 {
		t.Fatalf("running runs: %+v %v; want the retried one and the other rule's", runs, err)
	}
	// Running now: a retry with its new version changes nothing either,
	// nor does one of a run that was never failed.
	again := retry
	again.Version = got.Version
	if ok, err := f.s.RetryRuleRun(f.ctx, again); err != nil || ok {
		t.Fatalf("retry of a running run: %v %v", ok, err)
	}
	other, _ := f.s.RuleRun(f.ctx, "restock", failed.ID)
	if ok, err := f.s.RetryRuleRun(f.ctx, store.RuleRetry{Rule: "restock", RunID: other.ID, Version: other.Version,
		Job: other.Job, Now: at(time.Minute)}); err != nil || ok {
		t.Fatalf("retry of a run that never failed: %v %v", ok, err)
	}
	if _, err := f.s.RetryRuleRun(f.ctx, store.RuleRetry{Rule: "price-drop", RunID: failed.ID}); heraldtype.ErrorCode(err) != heraldtype.EINVALID {
		t.Fatalf("retry without a time: %v, want invalid_argument", err)
	}
}
