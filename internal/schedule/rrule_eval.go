package schedule

import "time"

// boundRule is a rule with the parts it left out taken from its DTSTART
// (RFC 5545), ready to enumerate floating wall times.
type boundRule struct {
	r         *rrule
	start     time.Time // DTSTART, floating, whole minutes
	startDay  int64     // DTSTART's day, days since 1970-01-01
	weekStart int64     // first day (WKST) of DTSTART's week
	y0        int
	m0        int // DTSTART's month index, year·12 + month−1

	months    [13]bool
	hasMonths bool
	monthDays []int
	days      []nthDay
	hours     []int
	minutes   []int
	seconds   []int
	buf       [4]int
}

func (r *rrule) bind(start time.Time, b *boundRule) {
	start = start.Truncate(time.Minute)
	*b = boundRule{r: r, start: start, months: r.months, hasMonths: r.hasMonths,
		monthDays: r.monthDays, days: r.days, hours: r.hours, minutes: r.minutes, seconds: r.seconds}
	y, m, d := start.Date()
	b.startDay = dayNumber(y, m, d)
	b.weekStart = b.startDay - int64((weekdayOf(b.startDay)-r.wkst+7)%7)
	b.y0, b.m0 = y, y*12+int(m)-1
	if len(r.days) == 0 && len(r.monthDays) == 0 {
		switch r.freq {
		case yearly:
			if !r.hasMonths {
				b.months[m], b.hasMonths = true, true
			}
			b.buf[0] = d
			b.monthDays = b.buf[0:1]
		case monthly:
			b.buf[0] = d
			b.monthDays = b.buf[0:1]
		case weekly:
			b.days = []nthDay{{wd: start.Weekday()}}
		}
	}
	if len(b.hours) == 0 {
		b.buf[1] = start.Hour()
		b.hours = b.buf[1:2]
	}
	if len(b.minutes) == 0 {
		b.buf[2] = start.Minute()
		b.minutes = b.buf[2:3]
	}
	if len(b.seconds) == 0 {
		b.buf[3] = 0
		b.seconds = b.buf[3:4]
	}
}

// next returns the first occurrence (floating) strictly after the floating
// time after, false when there is none: the rule's COUNT or UNTIL is
// exhausted, or nothing matches within Horizon.
func (b *boundRule) next(after time.Time) (time.Time, bool) {
	if b.r.count == 0 {
		return b.match(after)
	}
	// A counted rule is walked from DTSTART: the count is of its
	// occurrences from there (MaxCount bounds the walk).
	w := b.start.Add(-time.Second)
	for range b.r.count {
		var ok bool
		if w, ok = b.match(w); !ok {
			return time.Time{}, false
		}
		if w.After(after) {
			return w, true
		}
	}
	return time.Time{}, false
}

// match returns the first time matching the rule strictly after after and
// at or after DTSTART, within Horizon and UNTIL.
func (b *boundRule) match(after time.Time) (time.Time, bool) {
	var day int64
	var from int
	if after.Before(b.start) {
		// From DTSTART on: its day, no earlier than its time.
		after = b.start.Add(-time.Second)
		day, from = b.startDay, b.start.Hour()*3600+b.start.Minute()*60-1
	} else {
		ay, am, ad := after.Date()
		day, from = dayNumber(ay, am, ad), after.Hour()*3600+after.Minute()*60+after.Second()
	}
	limit := after.Add(Horizon)
	if !b.r.until.IsZero() && b.r.until.Before(limit) {
		limit = b.r.until
	}
	lastDay := day + int64(Horizon/(24*time.Hour)) + 1
	for day <= lastDay {
		y, m, d := civil(day)
		if skip := b.skip(day, y, m, d); skip > 0 {
			day, from = day+skip, -1
			continue
		}
		if b.matchDay(day, y, m, d) {
			if s, ok := b.timeAfter(from); ok {
				w := time.Unix(day*86400+int64(s), 0).UTC()
				if w.After(limit) {
					return time.Time{}, false
				}
				return w, true
			}
		}
		day, from = day+1, -1
		if day*86400 > limit.Unix() {
			return time.Time{}, false
		}
	}
	return time.Time{}, false
}

// skip returns how many days to jump when day lies in a month the rule
// excludes or in a period INTERVAL passes over, 0 when day is a candidate.
func (b *boundRule) skip(day int64, y int, m time.Month, d int) int64 {
	dim := int64(daysIn(y, m))
	toNextMonth := dim - int64(d) + 1
	if b.hasMonths && !b.months[m] {
		return toNextMonth
	}
	n := int64(b.r.interval)
	switch b.r.freq {
	case daily:
		if rem := (day - b.startDay) % n; rem != 0 {
			return n - rem
		}
	case weekly:
		if rem := ((day - b.weekStart) / 7) % n; rem != 0 {
			return (n-rem)*7 - (day-b.weekStart)%7
		}
	case monthly:
		if (int64(y*12+int(m)-1-b.m0))%n != 0 {
			return toNextMonth
		}
	case yearly:
		if int64(y-b.y0)%n != 0 {
			return dayNumber(y+1, time.January, 1) - day
		}
	}
	return 0
}

func (b *boundRule) matchDay(day int64, y int, m time.Month, d int) bool {
	dim := daysIn(y, m)
	if len(b.monthDays) > 0 {
		ok := false
		for _, md := range b.monthDays {
			if md == d || md < 0 && dim+1+md == d {
				ok = true
				break
			}
		}
		if !ok {
			return false
		}
	}
	if len(b.days) == 0 {
		return true
	}
	wd := weekdayOf(day)
	for _, nd := range b.days {
		if nd.wd != wd {
			continue
		}
		if nd.n == 0 {
			return true
		}
		var fwd, back int
		if b.r.freq == monthly || b.hasMonths {
			fwd, back = (d-1)/7+1, (dim-d)/7+1
		} else {
			yd := int(day - dayNumber(y, time.January, 1))
			ylen := int(dayNumber(y+1, time.January, 1) - dayNumber(y, time.January, 1))
			fwd, back = yd/7+1, (ylen-1-yd)/7+1
		}
		if nd.n == fwd || nd.n == -back {
			return true
		}
	}
	return false
}

// timeAfter returns the first time of day (seconds) of the rule after from
// (-1: the day's first).
func (b *boundRule) timeAfter(from int) (int, bool) {
	for _, h := range b.hours {
		if h*3600+3599 <= from {
			continue
		}
		for _, mi := range b.minutes {
			if h*3600+mi*60+59 <= from {
				continue
			}
			for _, s := range b.seconds {
				if t := h*3600 + mi*60 + s; t > from {
					return t, true
				}
			}
		}
	}
	return 0, false
}

// dayNumber returns the days from 1970-01-01 to the civil date y-m-d
// (proleptic Gregorian; H. Hinnant's days_from_civil).
func dayNumber(y int, m time.Month, d int) int64 {
	yy := int64(y)
	if m <= 2 {
		yy--
	}
	era := yy / 400
	if yy < 0 && yy%400 != 0 {
		era--
	}
	yoe := yy - era*400
	mp := (int64(m) + 9) % 12
	doy := (153*mp+2)/5 + int64(d) - 1
	doe := yoe*365 + yoe/4 - yoe/100 + doy
	return era*146097 + doe - 719468
}

// civil is dayNumber's inverse.
func civil(days int64) (int, time.Month, int) {
	z := days + 719468
	era := z / 146097
	if z < 0 && z%146097 != 0 {
		era--
	}
	doe := z - era*146097
	yoe := (doe - doe/1460 + doe/36524 - doe/146096) / 365
	y := yoe + era*400
	doy := doe - (365*yoe + yoe/4 - yoe/100)
	mp := (5*doy + 2) / 153
	d := doy - (153*mp+2)/5 + 1
	m := mp + 3
	if m > 12 {
		m -= 12
	}
	if m <= 2 {
		y++
	}
	return int(y), time.Month(m), int(d)
}

func weekdayOf(day int64) time.Weekday {
	// 1970-01-01 was a Thursday.
	return time.Weekday(((day+4)%7 + 7) % 7)
}

func daysIn(y int, m time.Month) int {
	switch m {
	case time.February:
		if y%4 == 0 && (y%100 != 0 || y%400 == 0) {
			return 29
		}
		return 28
	case time.April, time.June, time.September, time.November:
		return 30
	}
	return 31
}
