package store

import (
	"fmt"

	"github.com/heraldhq/herald/heraldtype"
)

// CheckOutcome rejects an outcome that would write a broken row, and
// fills RunAt when it may default to At. Every store's Complete calls it
// first, so all of them refuse the same outcomes.
func CheckOutcome(o *Outcome) error {
	bad := func(format string, args ...any) error {
		return heraldtype.Errorf(heraldtype.EINVALID, "outcome of delivery %d: %s", o.DeliveryID, fmt.Sprintf(format, args...))
	}
	switch {
	case o.DeliveryID <= 0:
		return bad("delivery id must be positive")
	case o.Owner == "":
		return bad("owner must not be empty")
	case o.At.IsZero():
		return bad("at is not set")
	case o.Release && o.State != heraldtype.StatePending && o.State != "":
		return bad("a release returns the delivery to pending, not %q", o.State)
	case !o.Release && AttemptOutcome(o.State) == "":
		return bad("state must be sent, pending, dead, skipped, opted_out, rate_limited or unknown, not %q", o.State)
	case !o.Release && o.ReleaseOutcome != "":
		return bad("a release outcome needs Release")
	case o.Release && o.ReleaseOutcome != "" && o.ReleaseOutcome != heraldtype.OutcomeDeferred &&
		o.ReleaseOutcome != heraldtype.OutcomePolicyError:
		return bad("a release outcome must be deferred or policy_error, not %q", o.ReleaseOutcome)
	case o.InvalidateDevice && o.InvalidReason == "":
		return bad("invalidating a device needs a reason")
	}
	if o.Release {
		o.State = heraldtype.StatePending
	}
	if o.State == heraldtype.StatePending && o.RunAt.IsZero() {
		o.RunAt = o.At
	}
	return nil
}

// AttemptOutcome is the timeline entry of an outcome's state, "" for a
// state an outcome cannot have.
func AttemptOutcome(s heraldtype.DeliveryState) heraldtype.AttemptOutcome {
	switch s {
	case heraldtype.StateSent:
		return heraldtype.OutcomeSent
	case heraldtype.StatePending:
		return heraldtype.OutcomeRetry
	case heraldtype.StateDead:
		return heraldtype.OutcomeDead
	case heraldtype.StateSkipped:
		return heraldtype.OutcomeSkipped
	case heraldtype.StateUnknown:
		return heraldtype.OutcomeUnknown
	case heraldtype.StateOptedOut:
		return heraldtype.OutcomeOptedOut
	case heraldtype.StateRateLimited:
		return heraldtype.OutcomeRateLimited
	}
	return ""
}

// TimelineOutcome is the attempt row's outcome: a policy release's own, or
// the one of the new state.
func TimelineOutcome(o Outcome) heraldtype.AttemptOutcome {
	if o.Release {
		return o.ReleaseOutcome
	}
	return AttemptOutcome(o.State)
}
