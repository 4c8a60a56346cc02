package schedule

import (
	"slices"
	"time"

	"github.com/robfig/cron/v3"
)

// WithSpacing returns a copy of p whose Next passes over every occurrence
// less than d after the previous one (issue 31 item 6: a reminder's own
// occurrences are at least the scheduler's gap apart, so BYSECOND=0..59
// cannot fire every second). d ≤ 0 returns p.
func (p *Plan) WithSpacing(d time.Duration) *Plan {
	if d <= 0 || d == p.spacing {
		return p
	}
	q := *p
	q.spacing = d
	return &q
}

// Immediately reports whether the plan's first occurrence is its anchor's
// start.
func (p *Plan) Immediately() bool { return p.immediately }

// MinSpacing returns the least distance between two occurrences of one day
// that the plan's form alone gives: for an RRULE or cron, the closest two
// of its times of day (0 when it has one time a day); for a backoff, its
// first interval; 0 for a one-shot. Clocks changing can bring two
// occurrences nearer still; WithSpacing keeps those apart when they fire.
func (p *Plan) MinSpacing() time.Duration {
	switch p.kind {
	case KindBackoff:
		return p.first
	case KindRRule:
		return closest(timesOfDay(orZero(p.rule.hours), orZero(p.rule.minutes), orZero(p.rule.seconds)))
	case KindCron:
		s, ok := p.cron.(*cron.SpecSchedule)
		if !ok {
			return 0
		}
		return closest(timesOfDay(bits(s.Hour, 23), bits(s.Minute, 59), bits(s.Second, 59)))
	}
	return 0
}

// orZero stands in one value for a list a rule leaves to its DTSTART:
// one value adds no time of day.
func orZero(v []int) []int {
	if len(v) == 0 {
		return []int{0}
	}
	return v
}

// bits lists the values set in a robfig/cron field mask.
func bits(mask uint64, top int) []int {
	var out []int
	for i := 0; i <= top; i++ {
		if mask&(1<<uint(i)) != 0 {
			out = append(out, i)
		}
	}
	return orZero(out)
}

// timesOfDay returns the seconds of the day hours × minutes × seconds
// give, sorted.
func timesOfDay(hours, minutes, seconds []int) []int {
	out := make([]int, 0, len(hours)*len(minutes)*len(seconds))
	for _, h := range hours {
		for _, m := range minutes {
			for _, s := range seconds {
				out = append(out, h*3600+m*60+s)
			}
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// closest returns the least difference of two neighbours of sorted
// seconds, 0 for fewer than two.
func closest(secs []int) time.Duration {
	least := 0
	for i := 1; i < len(secs); i++ {
		if d := secs[i] - secs[i-1]; least == 0 || d < least {
			least = d
		}
	}
	return time.Duration(least) * time.Second
}
