package dispatch

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/heraldhq/herald/heraldtype"
	"github.com/heraldhq/herald/internal/policy"
)

// An outcome that arrives after the reaper ended its lease — the worker
// was cut off from the database for longer than a lease — changes nothing
// (S1.3, S4.4) but is recorded on the delivery's timeline as a late report
// of what the worker did, so an operator can tell an unknown delivery that
// was never sent from one that may have been (issue 24 item 3).
func TestLateOutcomeRecordedAsLateReport(t *testing.T) {
	t.Parallel()
	const lease = 30 * time.Second
	for _, c := range []struct {
		name string
		// inPolicy: the reaper runs while the policy waits on its store,
		// so the send guard releases the delivery unsent; else while the
		// send is in flight.
		inPolicy bool
		want     string
	}{
		{"released unsent", true, heraldtype.ReportNotSent},
		{"sent", false, heraldtype.ReportSent},
	} {
		var h *harness
		reap := func() {
			now := h.clock.Advance(lease + time.Second)
			if _, err := h.store.ReapExpiredLeases(context.Background(), now); err != nil {
				t.Fatal(err)
			}
		}
		sender := senderFunc(func(_ context.Context, m *heraldtype.Message) (string, error) {
			if !c.inPolicy {
				reap()
			}
			return "pm-" + m.Key, nil
		})
		h = newHarness(t, map[string]Sender{"fcm": sender}, func(cfg *Config) {
			cfg.LeaseDuration = lease
			cfg.Policy = policyFunc(func(*heraldtype.Job, time.Time) (policy.Decision, error) {
				if c.inPolicy {
					reap()
				}
				return policy.Decision{Verdict: policy.Allow}, nil
			})
		})
		id := h.add(fakeDelivery{guarantee: heraldtype.AtMostOnce})
		h.runOnce(1)
		d := h.store.get(id)
		if d.State != heraldtype.StateUnknown {
			t.Fatalf("%s: state %s, want unknown: a late outcome must not move the delivery", c.name, d.State)
		}
		last := d.Attempts[len(d.Attempts)-1]
		if len(d.Attempts) != 2 || last.Outcome != heraldtype.OutcomeLateReport || last.ErrorCode != c.want ||
			last.Attempt != 1 || !strings.Contains(last.Error, "worker worker-a reported after its lease had expired") {
			t.Fatalf("%s: attempts %+v; want the reaper's row, then a late report %q", c.name, d.Attempts, c.want)
		}
	}
}

// A delivery whose lease the heartbeat found taken before its send started
// is not sent, and the worker says so: its release is ignored by the lease
// guard and recorded as a late report "not_sent" (issue 24 item 3).
func TestLostLeaseReportedNotSent(t *testing.T) {
	t.Parallel()
	var h *harness
	var sends int
	sender := senderFunc(func(_ context.Context, m *heraldtype.Message) (string, error) {
		sends++
		return "pm-" + m.Key, nil
	})
	h = newHarness(t, map[string]Sender{"fcm": sender}, func(cfg *Config) {
		cfg.Policy = policyFunc(func(*heraldtype.Job, time.Time) (policy.Decision, error) {
			// While the policy waits, the reaper ends the lease and the
			// heartbeat learns it.
			ctx := context.Background()
			now := h.clock.Advance(time.Hour)
			if _, err := h.store.ReapExpiredLeases(ctx, now); err != nil {
				t.Fatal(err)
			}
			h.w.heartbeat(ctx)
			return policy.Decision{Verdict: policy.Allow}, nil
		})
	})
	id := h.add(fakeDelivery{guarantee: heraldtype.AtMostOnce})
	h.runOnce(1)
	d := h.store.get(id)
	last := d.Attempts[len(d.Attempts)-1]
	if sends != 0 || d.State != heraldtype.StateUnknown || last.Outcome != heraldtype.OutcomeLateReport ||
		last.ErrorCode != heraldtype.ReportNotSent {
		t.Fatalf("sends %d, delivery %s, attempts %+v; want unsent, unknown, reported not_sent", sends, d.State, d.Attempts)
	}
}
