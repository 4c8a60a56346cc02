package storetest

import (
	"strings"
	"testing"
	"time"

	"github.com/heraldhq/herald/heraldtype"
	"github.com/heraldhq/herald/store"
)

// testLateReports: Store.ReportLate records the outcome of a lease the
// reaper ended as a late_report attempt row saying what the worker did,
// once, and changes no delivery; it ignores every other outcome (issue 24
// item 3).
func testLateReports(t *testing.T, newStore NewStore) {
	t.Run("AfterReap", func(t *testing.T) {
		t.Parallel()
		f := newFixture(t, newStore)
		f.user("u1")
		f.device("u1", "d1", "android")
		released, sent, failed, live := f.notification("u1"), f.notification("u1"), f.notification("u1"), f.notification("u1")
		for _, n := range []*heraldtype.Notification{&released, &sent, &failed} {
			n.Guarantee = heraldtype.AtMostOnce
		}
		f.enqueue(params(released, sent, failed))
		jobs := f.claim("w1", base(), 10) // leases end at base+1m
		f.enqueue(params(live))
		liveJobs := f.claim("w2", at(90*time.Second), 10) // leases end at base+2m30s
		if len(jobs) != 3 || len(liveJobs) != 1 {
			t.Fatalf("claimed %d and %d", len(jobs), len(liveJobs))
		}
		byNotification := map[string]heraldtype.Job{}
		for _, j := range jobs {
			byNotification[j.Delivery.NotificationID] = j
		}
		if res, err := f.s.ReapExpiredLeases(f.ctx, at(2*time.Minute)); err != nil || res.Unknown != 3 {
			t.Fatalf("reap = %+v, %v", res, err)
		}
		late := at(3 * time.Minute)
		os := []store.Outcome{
			outcome(byNotification[released.ID], store.Released{}, late),
			outcome(byNotification[sent.ID], store.Sent{ProviderMessageID: "pm-1", Latency: time.Millisecond}, late),
			outcome(byNotification[failed.ID], store.Unknown{Failure: store.Failure{ErrorCode: "timeout", Error: "no answer"}}, late),
			// A live lease's outcome, and one of no lease at all: not late.
			outcome(liveJobs[0], store.Sent{}, late),
		}
		f.complete(0, os[:3]...)
		n, err := f.s.ReportLate(f.ctx, os)
		if err != nil || n != 3 {
			t.Fatalf("ReportLate = %d, %v; want the three reaped leases", n, err)
		}
		for _, c := range []struct {
			id, report, says string
		}{
			{released.ID, heraldtype.ReportNotSent, "never handed the message to a provider"},
			{sent.ID, heraldtype.ReportSent, "provider message id pm-1"},
			{failed.ID, heraldtype.ReportSendUnknown, "got no answer (timeout: no answer)"},
		} {
			d := f.delivery(c.id)
			if d.State != heraldtype.StateUnknown || d.LastErrorCode != "lease_expired" {
				t.Errorf("%s: a late report moved the delivery: %s %s", c.report, d.State, d.LastErrorCode)
			}
			wantOutcomes(t, d, heraldtype.OutcomeUnknown, heraldtype.OutcomeLateReport)
			a := d.Attempts[1]
			if a.ErrorCode != c.report || a.Attempt != 1 || !strings.Contains(a.Error, "worker w1 reported") ||
				!strings.Contains(a.Error, c.says) {
				t.Errorf("%s: late report %+v", c.report, a)
			}
			wantTime(t, "late report at", a.At, late)
			if d.LateReport != c.report {
				t.Errorf("%s: Delivery.LateReport = %q", c.report, d.LateReport)
			}
		}
		if d := f.delivery(sent.ID); d.Attempts[1].ProviderMessageID != "pm-1" || d.Attempts[1].Latency != time.Millisecond {
			t.Errorf("sent report %+v", d.Attempts[1])
		}
		if d := f.delivery(live.ID); d.State != heraldtype.StateLeased || len(d.Attempts) != 0 || d.LateReport != "" {
			t.Errorf("a live lease's outcome was reported late: %+v", d)
		}
		// Lists show the report too: `deliveries list --state unknown`.
		page, _, err := f.s.ListDeliveries(f.ctx, heraldtype.DeliveryFilter{State: heraldtype.StateUnknown, Limit: 10})
		if err != nil || len(page) != 3 {
			t.Fatalf("list unknown = %d, %v", len(page), err)
		}
		for _, d := range page {
			if d.LateReport == "" {
				t.Errorf("listed delivery %d without its late report", d.ID)
			}
		}

		// Once per lease: the same outcomes again record nothing.
		if n, err := f.s.ReportLate(f.ctx, os); err != nil || n != 0 {
			t.Fatalf("ReportLate again = %d, %v; want 0", n, err)
		}
		// A replay restarts the attempts: the old report no longer shows,
		// and the old lease's outcome is not reported again.
		if _, err := f.s.ReplayDelivery(f.ctx, byNotification[released.ID].Delivery.ID, at(4*time.Minute)); err != nil {
			t.Fatal(err)
		}
		if n, err := f.s.ReportLate(f.ctx, os[:1]); err != nil || n != 0 {
			t.Fatalf("ReportLate after a replay = %d, %v; want 0", n, err)
		}
		if d := f.delivery(released.ID); d.LateReport != "" || d.State != heraldtype.StatePending {
			t.Errorf("replayed delivery: %s, late report %q", d.State, d.LateReport)
		}
	})
	t.Run("NotAfterOwnOutcome", func(t *testing.T) {
		t.Parallel()
		// An outcome whose lease ended by its own recording (a flush
		// retried after its commit's answer was lost) is no late report.
		f := newFixture(t, newStore)
		f.user("u1")
		f.device("u1", "d1", "android")
		n := f.notification("u1")
		f.enqueue(params(n))
		jobs := f.claim("w1", base(), 10)
		o := outcome(jobs[0], store.Sent{}, at(time.Second))
		f.complete(1, o)
		f.complete(0, o)
		if got, err := f.s.ReportLate(f.ctx, []store.Outcome{o}); err != nil || got != 0 {
			t.Fatalf("ReportLate of an applied outcome = %d, %v; want 0", got, err)
		}
		wantOutcomes(t, f.delivery(n.ID), heraldtype.OutcomeSent)
	})
	t.Run("AtLeastOnce", func(t *testing.T) {
		t.Parallel()
		// A reaped at_least_once lease is reported too, and the report
		// shows until the next attempt's outcome.
		f := newFixture(t, newStore)
		f.user("u1")
		f.device("u1", "d1", "android")
		n := f.notification("u1")
		f.enqueue(params(n))
		jobs := f.claim("w1", base(), 10)
		if _, err := f.s.ReapExpiredLeases(f.ctx, at(2*time.Minute)); err != nil {
			t.Fatal(err)
		}
		again := f.claim("w2", at(2*time.Minute), 10)
		if got, err := f.s.ReportLate(f.ctx, []store.Outcome{outcome(jobs[0], store.Sent{}, at(150*time.Second))}); err != nil || got != 1 {
			t.Fatalf("ReportLate = %d, %v; want 1", got, err)
		}
		if d := f.delivery(n.ID); d.State != heraldtype.StateLeased || d.LateReport != heraldtype.ReportSent {
			t.Errorf("after the report: %s, late report %q", d.State, d.LateReport)
		}
		f.complete(1, outcome(again[0], store.Sent{}, at(3*time.Minute)))
		d := f.delivery(n.ID)
		wantOutcomes(t, d, heraldtype.OutcomeLeaseExpired, heraldtype.OutcomeLateReport, heraldtype.OutcomeSent)
		if d.LateReport != "" {
			t.Errorf("late report %q shown after a later outcome", d.LateReport)
		}
	})
}
