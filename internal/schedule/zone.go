package schedule

import (
	"sync"
	"time"

	"github.com/heraldhq/herald/heraldtype"
)

// DefaultZone is the zone of a user who has none (S2.2).
const DefaultZone = "Asia/Seoul"

// zoneSpan bounds the distance between a wall-clock reading and the instants
// that show it: no UTC offset in the tz database (local mean times
// included) exceeds 16 hours, so every instant whose wall clock is w lies
// within w ± zoneSpan.
const zoneSpan = 17 * 3600

// floating returns the wall clock of t in its location as a "floating"
// time: the same fields read as UTC, where no transition ever happens.
// Recurrences (RRULE, cron) are evaluated on floating times.
func floating(t time.Time) time.Time {
	_, off := t.Zone()
	return time.Unix(t.Unix()+int64(off), 0).UTC()
}

// resolve maps a floating wall-clock time w to the instant it names in loc,
// by explicit rules rather than time.Date's unspecified choice:
//
//   - a wall time shown once is that instant;
//   - a wall time shown twice (an autumn overlap) is the first instant, so
//     it fires once, before the clocks go back;
//   - a wall time never shown (a spring-forward gap) is moved forward by
//     the gap's length — 02:30 on a New York spring-forward day is 03:30
//     EDT, on Lord Howe (a 30-minute gap) 02:15 is 02:45 — and shifted is
//     true.
//
// It walks the zone's periods (time.Time.ZoneBounds) over w ± zoneSpan, so
// it is exact for every zone and year Go's tz data knows, including
// transitions of a whole day (Pacific/Apia skipped 30 December 2011).
func resolve(w time.Time, loc *time.Location) (at time.Time, shifted bool) {
	ws := w.Unix()
	gap := int64(0)
	haveGap := false
	prevOff, havePrev := 0, false
	t := time.Unix(ws-zoneSpan, 0).In(loc)
	for range 64 { // a 34-hour window never holds 64 transitions
		_, off := t.Zone()
		start, end := t.ZoneBounds()
		i := ws - int64(off)
		if (start.IsZero() || i >= start.Unix()) && (end.IsZero() || i < end.Unix()) {
			// Periods are visited in time order, so the first that shows w
			// holds its first instant.
			return time.Unix(i, 0).UTC(), false
		}
		if havePrev && !haveGap && !start.IsZero() && off > prevOff {
			s := start.Unix()
			if ws >= s+int64(prevOff) && ws < s+int64(off) {
				// In the gap this transition opened: read w with the offset
				// before it, i.e. move it forward by the gap's length.
				gap, haveGap = ws-int64(prevOff), true
			}
		}
		if end.IsZero() || end.Unix() > ws+zoneSpan {
			break
		}
		prevOff, havePrev = off, true
		t = end.In(loc)
	}
	if haveGap {
		return time.Unix(gap, 0).UTC(), true
	}
	// Unreachable with consistent tz data; fall back to Go's own choice
	// rather than fail a schedule.
	return time.Date(w.Year(), w.Month(), w.Day(), w.Hour(), w.Minute(), w.Second(), 0, loc).UTC(), false
}

// forwardJump returns the largest forward offset change of loc within two
// days of t, zero when there is none. A wall time up to that much before
// t's wall clock can be moved past t by a gap, so a search for the next
// occurrence after t starts that much earlier on the wall clock.
func forwardJump(t time.Time, loc *time.Location) time.Duration {
	const around = 48 * time.Hour
	c := t.Add(-around).In(loc)
	_, prev := c.Zone()
	jump := 0
	for range 64 {
		_, end := c.ZoneBounds()
		if end.IsZero() || end.After(t.Add(around)) {
			break
		}
		c = end.In(loc)
		_, off := c.Zone()
		jump = max(jump, off-prev)
		prev = off
	}
	return time.Duration(jump) * time.Second
}

// zones caches loaded locations: time.LoadLocation reads and parses the tz
// database on every call, too slow for a scheduler that compiles thousands
// of schedules a second. A *time.Location is immutable once loaded, and only
// names that loaded are cached, so the cache is bounded by the tz database
// (about 600 names).
var zones sync.Map // string → *time.Location

// loadZone loads an IANA zone by name, refusing names that are not zones of
// the tz database: "" and "Local" (the machine's zone) included, since a
// user's schedule must not depend on which machine evaluates it.
func loadZone(field, name string) (*time.Location, error) {
	if v, ok := zones.Load(name); ok {
		return v.(*time.Location), nil
	}
	if name == "" || name == "Local" || len(name) > 64 {
		return nil, heraldtype.FieldErrorf(field, "%q is not an IANA time zone (for example %q)", name, DefaultZone)
	}
	loc, err := time.LoadLocation(name)
	if err != nil {
		return nil, heraldtype.FieldErrorf(field, "%q is not an IANA time zone (for example %q)", name, DefaultZone)
	}
	zones.Store(name, loc)
	return loc, nil
}
