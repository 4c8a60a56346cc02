package schedule

import (
	"time"

	"github.com/heraldhq/herald/heraldtype"
)

// OnTime is how late an occurrence may be and still count as on time under
// every catch-up policy, skip included: a scheduler that claims due rows
// every few seconds, or takes over a crashed peer's lease, is late by
// seconds, and that is not a downtime to catch up on.
const OnTime = time.Minute

// MaxCatchUp bounds the occurrences one catch-up fires under "all": the
// most recent ones in the window are kept (a half-hourly schedule missed
// for a week would otherwise send 336 notifications at once).
const MaxCatchUp = 100

// Decision is what a scheduler does with a due reminder: fire Fire (oldest
// first; sent_count grows by len(Fire), each enqueued with its
// occurrence's ID in the idempotency key) and store Next, in the one
// transaction that enqueues them (issue 19 item 4). Done means the
// schedule has no further occurrence: the reminder stops (reason: the
// schedule is exhausted).
type Decision struct {
	Fire []Occurrence
	Next Occurrence
	Done bool
	// Missed counts the occurrences passed over unfired: late ones the
	// policy dropped and those older than the window (counted exactly up
	// to MaxCatchUp·4 of them, then at least that many).
	Missed int
}

// CatchUp decides what to fire now for the stored occurrence due, which
// fell due at due.Due (issue 19 item 7). The missed occurrences are due
// and every later one whose Due is not after now; an occurrence is late by
// now − its Due. Then, per the plan's catch_up:
//
//   - skip fires those at most OnTime late (normally just due, when the
//     scheduler runs);
//   - once (the default) fires the latest one at most the window late;
//   - all fires every one at most the window late, oldest first, at most
//     MaxCatchUp (the latest).
//
// A backoff has one outstanding occurrence, never a series of missed ones
// (each waits from the send before it), so once and all fire it if it is
// within the window, and Next waits Interval from now. Next is the first
// occurrence not yet due; every fired occurrence is strictly before it, so
// no occurrence is fired twice by successive decisions. If now is before
// due.Due, nothing is fired and Next is due.
func (p *Plan) CatchUp(a Anchor, due Occurrence, sentCount int, now time.Time) Decision {
	if now.Before(due.Due) {
		return Decision{Next: due}
	}
	if p.kind == KindBackoff {
		return p.catchUpBackoff(a, due, sentCount, now)
	}
	var d Decision
	var missed []Occurrence
	o, ok := due, true
	// Occurrences before this cannot be within the window: Due is at most
	// spread after At.
	oldest := now.Add(-p.window - p.spread)
	if o.At.Before(oldest) {
		d.Missed++
		for ok && o.At.Before(oldest) && d.Missed < MaxCatchUp*4 {
			if o, ok = p.Next(a, o.At, sentCount); ok && o.At.Before(oldest) {
				d.Missed++
			}
		}
		if ok && o.At.Before(oldest) {
			o, ok = p.next(a, oldest, sentCount) // oldest is no occurrence: no spacing from it
		}
	}
	for ok && !o.Due.After(now) {
		if now.Sub(o.Due) <= p.window {
			missed = append(missed, o)
		} else {
			d.Missed++
		}
		if len(missed) > MaxCatchUp {
			missed = missed[1:]
			d.Missed++
		}
		o, ok = p.Next(a, o.At, sentCount)
	}
	d.Next, d.Done = o, !ok
	switch p.catchUp {
	case heraldtype.CatchUpSkip:
		for _, m := range missed {
			if now.Sub(m.Due) <= OnTime {
				d.Fire = append(d.Fire, m)
			} else {
				d.Missed++
			}
		}
	case heraldtype.CatchUpAll:
		d.Fire = missed
	default: // once
		if n := len(missed); n > 0 {
			d.Fire, d.Missed = missed[n-1:], d.Missed+n-1
		}
	}
	return d
}

func (p *Plan) catchUpBackoff(a Anchor, due Occurrence, sentCount int, now time.Time) Decision {
	var d Decision
	late := now.Sub(due.Due)
	fire := late <= OnTime || p.catchUp != heraldtype.CatchUpSkip && late <= p.window
	if fire {
		d.Fire = []Occurrence{due}
		sentCount++
	} else {
		d.Missed = 1
	}
	d.Next, _ = p.Next(a, now, sentCount)
	return d
}
