package schedule

import (
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/heraldhq/herald/heraldtype"
)

// Herald evaluates RFC 5545 recurrence rules itself, over the subset below,
// instead of with github.com/teambition/rrule-go (which resolves and which
// the tests use as an oracle for this evaluator): its iterator runs to the
// year 9999 before it gives up on a rule that never matches (seconds of CPU
// for FREQ=DAILY;BYMONTH=2;BYMONTHDAY=30, sent by anyone who may register a
// reminder), it writes to the shared rule while iterating (a data race for a
// scheduler evaluating one plan on several goroutines), and every After
// iterates from DTSTART. This evaluator bounds every search by Horizon.
//
// The subset (anything else is refused by name):
//
//	FREQ=DAILY|WEEKLY|MONTHLY|YEARLY   (sub-daily schedules are cron's)
//	INTERVAL=n                         1..MaxInterval
//	COUNT=n | UNTIL=date[-time[Z]]     COUNT 1..MaxCount; not both (RFC 5545)
//	BYMONTH=1..12,…
//	BYMONTHDAY=±1..31,…                -1 is the month's last day
//	BYDAY=MO,…  or, with MONTHLY/YEARLY, an ordinal: 1MO, -1FR (last Friday)
//	BYHOUR=0..23,…  BYMINUTE=0..59,…  BYSECOND=0..59,…
//	WKST=MO|…|SU
//
// DTSTART is the registration: the anchor's Start truncated to the minute,
// on the zone's wall clock (S2.3: an update restarts the schedule from
// now). As RFC 5545 says, what the rule leaves out comes from DTSTART: the
// hour and minute without BYHOUR/BYMINUTE (the second is 0 without
// BYSECOND), the weekday of a WEEKLY rule without BYDAY, the day of the
// month of a MONTHLY rule and the month and day of a YEARLY rule without
// BYDAY or BYMONTHDAY. Occurrences are the matches at or after DTSTART (as in
// python-dateutil and rrule-go, DTSTART itself counts only if it matches).
// UNTIL with Z is converted to the zone's wall clock; without, it is a wall
// time; a date alone includes its whole day.
type rrule struct {
	freq     rfreq
	interval int
	count    int
	until    time.Time // floating wall time; zero: none
	wkst     time.Weekday

	months    [13]bool
	hasMonths bool
	monthDays []int
	days      []nthDay
	hours     []int
	minutes   []int
	seconds   []int
}

type rfreq int

const (
	daily rfreq = iota
	weekly
	monthly
	yearly
)

type nthDay struct {
	wd time.Weekday
	n  int // 0: every such weekday; ±k: the k-th (from the end)
}

// Limits of a recurrence rule, listed in docs/ARCHITECTURE.md and checked by
// Compile.
const (
	// MaxRuleLength bounds the RRULE text.
	MaxRuleLength = 512
	// MaxCount bounds COUNT: a rule with a count is evaluated from its
	// DTSTART, so the count bounds the work of each evaluation.
	MaxCount = 1000
	// MaxInterval bounds INTERVAL.
	MaxInterval = 1000
	// MaxTimesPerDay bounds BYHOUR × BYMINUTE × BYSECOND.
	MaxTimesPerDay = 1440
)

var weekdays = map[string]time.Weekday{
	"SU": time.Sunday, "MO": time.Monday, "TU": time.Tuesday, "WE": time.Wednesday,
	"TH": time.Thursday, "FR": time.Friday, "SA": time.Saturday,
}

// parseRRule parses and checks a rule of the documented subset. loc
// converts a UTC UNTIL to the wall clock.
func parseRRule(text string, loc *time.Location) (*rrule, error) {
	const field = "schedule.rrule"
	fail := func(format string, args ...any) (*rrule, error) {
		return nil, heraldtype.FieldErrorf(field, format, args...)
	}
	if len(text) > MaxRuleLength {
		return fail("longer than %d characters", MaxRuleLength)
	}
	s := strings.TrimSpace(text)
	if len(s) >= 6 && strings.EqualFold(s[:6], "RRULE:") {
		s = s[6:]
	}
	if s == "" {
		return fail("empty; for example \"FREQ=WEEKLY;BYDAY=MO;BYHOUR=9;BYMINUTE=0\"")
	}
	r := &rrule{interval: 1, wkst: time.Monday}
	seen := map[string]bool{}
	for part := range strings.SplitSeq(s, ";") {
		name, value, ok := strings.Cut(part, "=")
		name = strings.ToUpper(strings.TrimSpace(name))
		value = strings.ToUpper(strings.TrimSpace(value))
		if !ok || name == "" || value == "" {
			return fail("%q is not NAME=VALUE", part)
		}
		if seen[name] {
			return fail("%s is given twice", name)
		}
		seen[name] = true
		var err error
		switch name {
		case "FREQ":
			switch value {
			case "DAILY":
				r.freq = daily
			case "WEEKLY":
				r.freq = weekly
			case "MONTHLY":
				r.freq = monthly
			case "YEARLY":
				r.freq = yearly
			case "HOURLY", "MINUTELY", "SECONDLY":
				return fail("FREQ=%s is not supported: use cron for schedules more often than daily", value)
			default:
				return fail("FREQ=%s is not a frequency (DAILY, WEEKLY, MONTHLY, YEARLY)", value)
			}
		case "INTERVAL":
			r.interval, err = ruleInt(name, value, 1, MaxInterval)
		case "COUNT":
			r.count, err = ruleInt(name, value, 1, MaxCount)
		case "UNTIL":
			r.until, err = ruleUntil(value, loc)
		case "WKST":
			wd, ok := weekdays[value]
			if !ok {
				return fail("WKST=%s is not a weekday (MO … SU)", value)
			}
			r.wkst = wd
		case "BYMONTH":
			var ms []int
			ms, err = ruleInts(name, value, 1, 12, false)
			for _, m := range ms {
				r.months[m] = true
			}
			r.hasMonths = true
		case "BYMONTHDAY":
			r.monthDays, err = ruleInts(name, value, 1, 31, true)
		case "BYDAY":
			r.days, err = ruleDays(value)
		case "BYHOUR":
			r.hours, err = ruleInts(name, value, 0, 23, false)
		case "BYMINUTE":
			r.minutes, err = ruleInts(name, value, 0, 59, false)
		case "BYSECOND":
			r.seconds, err = ruleInts(name, value, 0, 59, false)
		case "BYSETPOS", "BYYEARDAY", "BYWEEKNO", "DTSTART", "RDATE", "EXDATE", "EXRULE":
			return fail("%s is not supported (supported: FREQ, INTERVAL, COUNT, UNTIL, WKST, BYMONTH, BYMONTHDAY, BYDAY, BYHOUR, BYMINUTE, BYSECOND; DTSTART is the registration time)", name)
		default:
			return fail("%s is not an RRULE part", name)
		}
		if err != nil {
			return nil, heraldtype.FieldErrorf(field, "%s", err.Error())
		}
	}
	if !seen["FREQ"] {
		return fail("FREQ is required")
	}
	if seen["COUNT"] && seen["UNTIL"] {
		return fail("COUNT and UNTIL must not both be given (RFC 5545)")
	}
	for _, d := range r.days {
		if d.n != 0 && r.freq != monthly && r.freq != yearly {
			return fail("BYDAY with an ordinal (%d%s) needs FREQ=MONTHLY or YEARLY", d.n, strings.ToUpper(d.wd.String()[:2]))
		}
		if d.n != 0 && (d.n > 5 || d.n < -5) && (r.freq == monthly || r.hasMonths) {
			return fail("BYDAY ordinal %d is out of range for a month (±1..5)", d.n)
		}
	}
	if r.freq == weekly && len(r.monthDays) > 0 {
		return fail("BYMONTHDAY must not be used with FREQ=WEEKLY (RFC 5545)")
	}
	if n := max(len(r.hours), 1) * max(len(r.minutes), 1) * max(len(r.seconds), 1); n > MaxTimesPerDay {
		return fail("BYHOUR × BYMINUTE × BYSECOND gives %d times a day; at most %d", n, MaxTimesPerDay)
	}
	return r, nil
}

type ruleError string

func (e ruleError) Error() string { return string(e) }

func ruleInt(name, v string, lo, hi int) (int, error) {
	n, err := strconv.Atoi(v)
	if err != nil || n < lo || n > hi {
		return 0, ruleError(name + "=" + v + " must be a whole number from " + strconv.Itoa(lo) + " to " + strconv.Itoa(hi))
	}
	return n, nil
}

// ruleInts parses a sorted, de-duplicated list; signed allows -hi..-lo too.
func ruleInts(name, v string, lo, hi int, signed bool) ([]int, error) {
	var out []int
	for item := range strings.SplitSeq(v, ",") {
		n, err := strconv.Atoi(strings.TrimPrefix(item, "+"))
		ok := err == nil && (n >= lo && n <= hi || signed && n <= -lo && n >= -hi)
		if !ok {
			rng := strconv.Itoa(lo) + " to " + strconv.Itoa(hi)
			if signed {
				rng += " or -" + strconv.Itoa(hi) + " to -" + strconv.Itoa(lo)
			}
			return nil, ruleError(name + ": " + strconv.Quote(item) + " is not from " + rng)
		}
		if len(out) >= 366 {
			return nil, ruleError(name + " lists too many values")
		}
		out = append(out, n)
	}
	slices.Sort(out)
	return slices.Compact(out), nil
}

func ruleDays(v string) ([]nthDay, error) {
	var out []nthDay
	for item := range strings.SplitSeq(v, ",") {
		if len(item) < 2 || len(out) >= 64 {
			return nil, ruleError("BYDAY: " + strconv.Quote(item) + " is not a weekday such as MO, 2TU or -1FR")
		}
		wd, ok := weekdays[item[len(item)-2:]]
		n := 0
		if prefix := item[:len(item)-2]; prefix != "" {
			var err error
			n, err = strconv.Atoi(strings.TrimPrefix(prefix, "+"))
			ok = ok && err == nil && n != 0 && n >= -53 && n <= 53
		}
		if !ok {
			return nil, ruleError("BYDAY: " + strconv.Quote(item) + " is not a weekday such as MO, 2TU or -1FR")
		}
		d := nthDay{wd: wd, n: n}
		if !slices.Contains(out, d) {
			out = append(out, d)
		}
	}
	return out, nil
}

// ruleUntil reads UNTIL as a floating wall time in loc.
func ruleUntil(v string, loc *time.Location) (time.Time, error) {
	bad := ruleError("UNTIL=" + v + " is not a date (20261231), a local date-time (20261231T235959) or a UTC one (20261231T235959Z)")
	switch len(v) {
	case 8:
		d, err := time.Parse("20060102", v)
		if err != nil {
			return time.Time{}, bad
		}
		return d.Add(24*time.Hour - time.Second), nil
	case 15:
		d, err := time.Parse("20060102T150405", v)
		if err != nil {
			return time.Time{}, bad
		}
		return d, nil
	case 16:
		d, err := time.Parse("20060102T150405Z", v)
		if err != nil {
			return time.Time{}, bad
		}
		return floating(d.In(loc)), nil
	}
	return time.Time{}, bad
}
