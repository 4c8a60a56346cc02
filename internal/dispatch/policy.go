package dispatch

import (
	"context"
	"slices"
	"time"

	"github.com/heraldhq/herald/heraldtype"
	"github.com/heraldhq/herald/internal/policy"
	"github.com/heraldhq/herald/store"
)

// Policy decides whether a claimed delivery may be sent now
// (internal/policy.Engine). An error means it could not decide: the
// delivery is then not sent (fail-closed, S1.3).
//
// Prefetch runs once per claimed batch, on the deliveries that will reach
// the policy, and does for all of them in a round trip or two what Check
// would do per delivery (the users' preferences, the daily cap counts);
// its error is logged and Check then does what failed on its own.
type Policy interface {
	Prefetch(ctx context.Context, jobs []heraldtype.Job, now time.Time) (*policy.Prefetched, error)
	Check(ctx context.Context, job *heraldtype.Job, now time.Time, pre *policy.Prefetched) (policy.Decision, error)
}

var _ Policy = (*policy.Engine)(nil)

// checkPolicy runs the policy on a delivery about to be sent. done is true
// when the delivery must not be sent now; record says whether o is to be
// recorded (false when the worker is shutting down).
//
// A deferred delivery and one the policy could not decide go back to the
// queue without counting an attempt, with an attempt row that says why;
// an opted-out or rate-limited one ends in its final state.
func (w *Worker) checkPolicy(ctx context.Context, job *heraldtype.Job, pre *policy.Prefetched, now time.Time) (o store.Outcome, record, done bool) {
	d := &job.Delivery
	mt := w.cfg.Metrics
	m := mt.PolicyDecisions
	pctx, cancel := w.storeCtx(ctx)
	dec, err := w.cfg.Policy.Check(pctx, job, now, pre)
	cancel()
	if err != nil {
		if ctx.Err() != nil {
			// Our own shutdown: the lease expires and the reaper decides.
			return store.Outcome{}, false, true
		}
		m.WithLabelValues(policy.CodePolicyError, policy.CodePolicyError).Inc()
		due := d.CreatedAt
		if job.Notification != nil && job.Notification.SendAt.After(due) {
			due = job.Notification.SendAt
		}
		if !due.IsZero() && now.Sub(due) > w.cfg.PolicyMaxDelay {
			w.log.Error("dispatch: the delivery policy failed for too long; the delivery ends dead", "delivery_id", d.ID,
				"due", due, "err", err)
			return w.dead(d, now, policy.CodePolicyError, "the delivery policy could not be evaluated since "+
				due.Format(time.RFC3339)+": "+err.Error()), true, true
		}
		w.log.Warn("dispatch: the delivery policy failed; not sending, retrying later", "delivery_id", d.ID, "err", err)
		return w.outcome(d, now, store.ReleasedWithReason{Outcome: heraldtype.OutcomePolicyError,
			RunAt: now.Add(w.cfg.PolicyRetry), ErrorCode: policy.CodePolicyError, Error: err.Error()}), true, true
	}
	switch dec.Verdict {
	case policy.Defer:
		m.WithLabelValues(string(heraldtype.OutcomeDeferred), mt.Code(dec.Code)).Inc()
		return w.outcome(d, now, store.ReleasedWithReason{Outcome: heraldtype.OutcomeDeferred, RunAt: dec.Until,
			ErrorCode: dec.Code, Error: dec.Reason}), true, true
	case policy.Block:
		m.WithLabelValues(mt.Code(string(dec.State)), mt.Code(dec.Code)).Inc()
		// A block ends the delivery opted_out or rate_limited (policy.Decision).
		if dec.State == heraldtype.StateOptedOut {
			return w.outcome(d, now, store.OptedOut{ErrorCode: dec.Code, Error: dec.Reason}), true, true
		}
		return w.outcome(d, now, store.RateLimited{ErrorCode: dec.Code, Error: dec.Reason}), true, true
	}
	m.WithLabelValues("allowed", "none").Inc()
	return store.Outcome{}, false, false
}

// prefetch runs the policy's Prefetch on the deliveries of a claimed batch
// that will reach it: one screen refuses (a removed device, no sender…)
// is not sent whatever the policy says and must not spend a slot of its
// user's daily cap. It returns nil without a policy, and what Prefetch
// returned when it failed (each Check then does the rest on its own, and
// fails closed if the store is down).
func (w *Worker) prefetch(ctx context.Context, jobs []heraldtype.Job) *policy.Prefetched {
	if w.cfg.Policy == nil || len(jobs) == 0 {
		return nil
	}
	reach := jobs
	if slices.ContainsFunc(jobs, w.refused) {
		reach = slices.DeleteFunc(slices.Clone(jobs), w.refused)
	}
	pctx, cancel := w.storeCtx(ctx)
	defer cancel()
	pre, err := w.cfg.Policy.Prefetch(pctx, reach, w.cfg.Now())
	if err != nil && ctx.Err() == nil {
		w.log.Warn("dispatch: prefetching the policy's reads and counts for the batch failed; each delivery does its own",
			"err", err)
	}
	return pre
}
