package policy

import (
	"fmt"
	"time"

	"github.com/heraldhq/herald/heraldtype"
)

// QuietWindow is a parsed daily quiet-hours window, in minutes after local
// midnight. Start > End spans midnight (22:00–08:00).
type QuietWindow struct {
	Start, End string
	start, end int
}

// ParseQuietHours validates q: two "HH:MM" times that differ.
func ParseQuietHours(q heraldtype.QuietHours) (QuietWindow, error) {
	start, err := parseClock(q.Start)
	if err != nil {
		return QuietWindow{}, fmt.Errorf("start: %w", err)
	}
	end, err := parseClock(q.End)
	if err != nil {
		return QuietWindow{}, fmt.Errorf("end: %w", err)
	}
	if start == end {
		return QuietWindow{}, fmt.Errorf("start and end are both %s: a window must not be empty", q.Start)
	}
	return QuietWindow{Start: q.Start, End: q.End, start: start, end: end}, nil
}

func parseClock(s string) (int, error) {
	t, err := time.Parse("15:04", s)
	if err != nil || len(s) != 5 {
		return 0, fmt.Errorf("%q is not a time of day HH:MM (00:00-23:59)", s)
	}
	return t.Hour()*60 + t.Minute(), nil
}

// Until reports whether now falls inside the window in loc, and if so
// when the window ends: the next wall-clock End in loc. It works on wall
// clocks, not durations, so a window that spans a DST change still ends
// at End local time (the night is an hour shorter or longer).
func (w QuietWindow) Until(now time.Time, loc *time.Location) (time.Time, bool) {
	local := now.In(loc)
	m := local.Hour()*60 + local.Minute()
	var in bool
	if w.start < w.end {
		in = m >= w.start && m < w.end
	} else {
		in = m >= w.start || m < w.end
	}
	if !in {
		return time.Time{}, false
	}
	y, mo, d := local.Date()
	if m >= w.end {
		// Inside the evening part of a window that spans midnight: it
		// ends tomorrow.
		d++
	}
	until := time.Date(y, mo, d, w.end/60, w.end%60, 0, 0, loc)
	if !until.After(now) {
		// End fell into a DST gap and normalised backwards; an hour later
		// is the first instant the wall clock is past End.
		until = until.Add(time.Hour)
	}
	return until.UTC(), true
}

// LocalDay returns the user's calendar date at now in loc (YYYY-MM-DD)
// and the instant of the next local midnight, when the day's cap resets.
func LocalDay(now time.Time, loc *time.Location) (string, time.Time) {
	local := now.In(loc)
	y, mo, d := local.Date()
	return local.Format(time.DateOnly), time.Date(y, mo, d+1, 0, 0, 0, 0, loc).UTC()
}
