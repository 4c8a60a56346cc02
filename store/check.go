package store

import (
	"strings"
	"time"

	"github.com/heraldhq/herald/heraldtype"
)

// The argument checks of the Store methods that take more than ids.
// Every store calls the check of a method first, like CheckEnqueue and
// CheckOutcome, so all of them refuse the same calls with the same codes,
// fields and messages (the HTTP API shows them).

// CheckTryLock validates the arguments of TryLock.
func CheckTryLock(name, owner string, now, until time.Time) error {
	if err := CheckUnlock(name, owner); err != nil {
		return err
	}
	if !until.After(now) {
		return heraldtype.FieldErrorf("until", "must be after now")
	}
	return nil
}

// CheckUnlock validates the arguments of Unlock: a lock call with an
// empty name or owner would write a broken row.
func CheckUnlock(name, owner string) error {
	if name == "" {
		return heraldtype.FieldErrorf("name", "must not be empty")
	}
	if owner == "" {
		return heraldtype.FieldErrorf("owner", "must not be empty")
	}
	return nil
}

// CheckPruneFinished validates the limit of PruneFinished.
func CheckPruneFinished(limit int) error { return atLeastOne("limit", limit) }

// CheckAcquireDedupe validates the window of AcquireDedupe.
func CheckAcquireDedupe(window time.Duration) error {
	if window <= 0 {
		return heraldtype.FieldErrorf("window", "must be positive")
	}
	return nil
}

// CheckCountDaily validates the limit of CountDaily.
func CheckCountDaily(limit int) error { return atLeastOne("limit", limit) }

// CheckCountDailyBatch validates the items of CountDailyBatch
// (heraldtype.CheckDailyCounts).
func CheckCountDailyBatch(items []heraldtype.DailyCount) error {
	return heraldtype.CheckDailyCounts(items)
}

// CheckReplayDeliveries validates the arguments of ReplayDeliveries: a
// bulk replay may only ask for the replayable states (S0.4, S4.6), and
// replays at least one delivery.
func CheckReplayDeliveries(f heraldtype.DeliveryFilter, max int) error {
	if f.State != "" && !Allowed(f.State, heraldtype.StatePending, ByReplay) {
		return heraldtype.FieldErrorf("state", "only dead or unknown deliveries can be replayed, not %q", f.State)
	}
	return atLeastOne("max", max)
}

// ReplayableSQL is the condition on a delivery's state column that
// holds for the states a replay moves from: those of Moves' ByReplay
// moves (dead and unknown). Both stores guard their replay statements
// with it.
var ReplayableSQL = func() string {
	var in []string
	for _, m := range Moves {
		if m.By == ByReplay {
			in = append(in, "'"+string(m.From)+"'")
		}
	}
	return "state IN (" + strings.Join(in, ", ") + ")"
}()

// ReplayRefusal is what ReplayDelivery answers when its replay moved
// nothing: ENOTFOUND when the delivery does not exist (d is nil),
// ECONFLICT naming its state when that state cannot be replayed.
func ReplayRefusal(id int64, d *heraldtype.Delivery) error {
	if d == nil {
		return DeliveryNotFound(id)
	}
	return heraldtype.Errorf(heraldtype.ECONFLICT, "delivery %d is %s; only dead or unknown deliveries can be replayed", id, d.State)
}

// CheckGetDelivery validates the argument of GetDelivery: a delivery id is
// positive.
func CheckGetDelivery(id int64) error {
	if id <= 0 {
		return heraldtype.FieldErrorf("id", "must be a positive delivery id")
	}
	return nil
}

// DeliveryNotFound is the ENOTFOUND of a delivery id no delivery has, the
// same message from every store and method.
func DeliveryNotFound(id int64) error {
	return heraldtype.Errorf(heraldtype.ENOTFOUND, "delivery %d not found", id)
}

func atLeastOne(field string, n int) error {
	if n < 1 {
		return heraldtype.FieldErrorf(field, "must be at least 1")
	}
	return nil
}
