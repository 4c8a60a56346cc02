package schedule

import "time"

// EarliestZone is the zone whose wall clock is ahead of every other one
// (UTC+14, the Line Islands; no DST). A schedule delivered at a local time
// in each user's own zone ("09:00 wherever they are", a campaign's
// local_time) is evaluated on this wall clock: its occurrence is the first
// instant anyone on earth reaches that wall time, when the run must start.
const EarliestZone = "Etc/GMT-14"

// LoadZone loads an IANA zone by name through the evaluator's cache,
// refusing "" and "Local"; the refusal names field.
func LoadZone(field, name string) (*time.Location, error) { return loadZone(field, name) }

// WallClock returns the wall-clock time of t in loc as a floating time
// (its fields read as UTC).
func WallClock(t time.Time, loc *time.Location) time.Time { return floating(t.In(loc)) }

// LocalInstant maps a floating wall-clock time into loc by the rules every
// schedule follows: a wall time in a spring-forward gap moves forward by
// the gap, one in an autumn overlap is its first instant.
func LocalInstant(wall time.Time, loc *time.Location) time.Time {
	at, _ := resolve(wall, loc)
	return at
}
