package store

import (
	"fmt"
	"reflect"

	"github.com/heraldhq/herald/heraldtype"
)

// Writer is the Store method that makes a move of the delivery state
// machine.
type Writer uint8

const (
	ByEnqueue Writer = iota
	ByClaim
	ByExtendLeases
	ByComplete
	ByReap
	ByReplay
	ByCancel
	writers
)

var writerNames = [writers]string{"Store.Enqueue", "Store.Claim", "Store.ExtendLeases", "Store.Complete",
	"Store.ReapExpiredLeases", "Store.ReplayDelivery", "Store.CancelNotifications"}

func (w Writer) String() string {
	if w < writers {
		return writerNames[w]
	}
	return fmt.Sprintf("Writer(%d)", uint8(w))
}

// Move is one legal change of a delivery's state. From is "" for a
// delivery being created.
type Move struct {
	From, To heraldtype.DeliveryState
	By       Writer
	// Transition is, for a move of Complete, the zero value of the
	// Transition that makes it.
	Transition Transition
}

// Moves is the delivery state machine: every state change any store makes,
// and nothing else. Each is one statement guarded by the state it leaves
// (outcomes also by lease owner and attempt), so a late or duplicate
// writer changes nothing (S4.4). CheckOutcome refuses a Complete move not
// in it; storetest walks every move on every store and checks each writer
// leaves the states it does not move from alone; docs/ARCHITECTURE.md's
// table is tested against it.
var Moves = []Move{
	// Push, sms and email deliveries; an in_app one scheduled for later
	// (its inbox item is written when it is due: InboxSent, issue 22).
	{From: "", To: heraldtype.StatePending, By: ByEnqueue},
	// A channel with no address, or an address suppressed on it.
	{From: "", To: heraldtype.StateSkipped, By: ByEnqueue},
	// In-app deliveries due now: the inbox row is the delivery.
	{From: "", To: heraldtype.StateSent, By: ByEnqueue},
	// In-app deliveries due now that the user's preferences refuse
	// (issue 22): no inbox row.
	{From: "", To: heraldtype.StateOptedOut, By: ByEnqueue},
	{From: heraldtype.StatePending, To: heraldtype.StateLeased, By: ByClaim},
	{From: heraldtype.StateLeased, To: heraldtype.StateLeased, By: ByExtendLeases},
	{From: heraldtype.StateLeased, To: heraldtype.StateSent, By: ByComplete, Transition: Sent{}},
	{From: heraldtype.StateLeased, To: heraldtype.StateSent, By: ByComplete, Transition: InboxSent{}},
	{From: heraldtype.StateLeased, To: heraldtype.StatePending, By: ByComplete, Transition: Retry{}},
	{From: heraldtype.StateLeased, To: heraldtype.StatePending, By: ByComplete, Transition: Released{}},
	{From: heraldtype.StateLeased, To: heraldtype.StatePending, By: ByComplete, Transition: ReleasedWithReason{}},
	{From: heraldtype.StateLeased, To: heraldtype.StateDead, By: ByComplete, Transition: Dead{}},
	{From: heraldtype.StateLeased, To: heraldtype.StateUnknown, By: ByComplete, Transition: Unknown{}},
	{From: heraldtype.StateLeased, To: heraldtype.StateSkipped, By: ByComplete, Transition: Skipped{}},
	{From: heraldtype.StateLeased, To: heraldtype.StateOptedOut, By: ByComplete, Transition: OptedOut{}},
	{From: heraldtype.StateLeased, To: heraldtype.StateRateLimited, By: ByComplete, Transition: RateLimited{}},
	// An expired lease: at_least_once back to pending, at_most_once unknown (S1.3).
	{From: heraldtype.StateLeased, To: heraldtype.StatePending, By: ByReap},
	{From: heraldtype.StateLeased, To: heraldtype.StateUnknown, By: ByReap},
	{From: heraldtype.StateDead, To: heraldtype.StatePending, By: ByReplay},
	{From: heraldtype.StateUnknown, To: heraldtype.StatePending, By: ByReplay},
	// A cancel (issue 36 item 4) ends every pending delivery of the
	// notifications it selects; a leased one is in flight and is left to
	// its worker's outcome.
	{From: heraldtype.StatePending, To: heraldtype.StateCancelled, By: ByCancel},
}

// TransitionName is a Transition's type name ("Sent", "Retry", …), "" for
// nil.
func TransitionName(t Transition) string {
	if t == nil {
		return ""
	}
	return reflect.TypeOf(t).Name()
}

// stateIndex numbers the states for legal: 0 is "" (a delivery being
// created), -1 a state that does not exist.
func stateIndex(s heraldtype.DeliveryState) int {
	switch s {
	case "":
		return 0
	case heraldtype.StatePending:
		return 1
	case heraldtype.StateLeased:
		return 2
	case heraldtype.StateSent:
		return 3
	case heraldtype.StateDead:
		return 4
	case heraldtype.StateUnknown:
		return 5
	case heraldtype.StateSkipped:
		return 6
	case heraldtype.StateOptedOut:
		return 7
	case heraldtype.StateRateLimited:
		return 8
	case heraldtype.StateCancelled:
		return 9
	}
	return -1
}

// legal[w][from] is the set of states writer w moves a delivery in state
// from to, one bit per stateIndex: Moves, indexed for Allowed, which
// Complete asks once per outcome.
var legal = func() (l [writers][10]uint16) {
	for _, m := range Moves {
		l[m.By][stateIndex(m.From)] |= 1 << stateIndex(m.To)
	}
	return l
}()

// Allowed reports whether Moves has the move from → to by w.
func Allowed(from, to heraldtype.DeliveryState, w Writer) bool {
	f, t := stateIndex(from), stateIndex(to)
	return w < writers && f >= 0 && t > 0 && legal[w][f]&(1<<t) != 0
}
