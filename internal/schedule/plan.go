// Package schedule is Herald's time evaluator (issue 19; S2.2, S2.3,
// S2.5, S3.7): it validates a heraldtype.Schedule and computes its
// occurrences — one-shot, exponential backoff driven by sent_count, or an
// RFC 5545 RRULE or cron expression on the wall clock of the user's time
// zone — what to fire after a downtime (CatchUp), and the deterministic
// spreading and collision jitter of due times (Spread, Jitter, Avoid). It
// is pure: no database, no clock of its own, no goroutines; the reminder
// scheduler and the campaign runner keep their rows in the store and call
// it with the times they read.
//
// Wall-clock recurrences are evaluated on "floating" times (the wall clock
// read as UTC, where no transition ever happens) and each wall time is then
// mapped into the zone by explicit rules (resolve): a wall time in a
// spring-forward gap fires once, moved forward by the gap; one in an
// autumn overlap fires once, at its first instant; every wall time the rule
// gives fires (RFC 5545), in the order of the instants they map to; and a
// firing is always strictly after the previous one, so two wall times that
// map to one instant fire once.
package schedule

import (
	"math"
	"strconv"
	"time"

	"github.com/heraldhq/herald/heraldtype"
	"github.com/robfig/cron/v3"
)

// Limits of a schedule, checked by Compile and listed in docs/ARCHITECTURE.md
// ("Schedules on the wall clock").
const (
	// Horizon bounds every search for a next occurrence: a schedule with
	// no occurrence within ten years of a time has none after it (a yearly
	// rule on February 29 waits at most eight, 2096 to 2104).
	Horizon = 3653 * 24 * time.Hour
	// MinBackoff and MaxBackoff bound a backoff's first and max intervals.
	MinBackoff = time.Minute
	MaxBackoff = 366 * 24 * time.Hour
	// MaxFactor bounds a backoff's factor.
	MaxFactor = 100.0
	// MaxSpread bounds spread (and MinSpread when one is given).
	MinSpread = time.Second
	MaxSpread = 24 * time.Hour
	// DefaultCatchUpWindow is the catch-up window when none is given;
	// MinCatchUpWindow and MaxCatchUpWindow bound one that is.
	DefaultCatchUpWindow = 24 * time.Hour
	MinCatchUpWindow     = OnTime
	MaxCatchUpWindow     = 7 * 24 * time.Hour
)

// Kind is which of a schedule's four forms it has.
type Kind string

const (
	KindAt      Kind = "at"
	KindBackoff Kind = "backoff"
	KindRRule   Kind = "rrule"
	KindCron    Kind = "cron"
)

// Plan is a validated schedule, ready to evaluate. It is immutable and safe
// for concurrent use.
type Plan struct {
	kind    Kind
	loc     *time.Location
	at      time.Time
	first   time.Duration
	max     time.Duration
	factor  float64
	rule    *rrule
	cron    cron.Schedule
	spread  time.Duration
	catchUp heraldtype.CatchUp
	window  time.Duration
	// immediately: the first occurrence is the anchor's Start (issue 30
	// item 6, S2.3's next = now).
	immediately bool
	// spacing is the least time between two occurrences Next returns
	// (issue 31 item 6); zero: none. Set by WithSpacing.
	spacing time.Duration
}

// Anchor is what one reminder (or one campaign × user) adds to a plan:
// Key seeds its spread, Start is its registration — the RRULE's DTSTART,
// reset by an update (S2.3: the schedule restarts from now).
type Anchor struct {
	Key   string
	Start time.Time
}

// Occurrence is one firing of a schedule.
type Occurrence struct {
	// At is the occurrence's nominal instant (UTC, whole seconds): the
	// wall time mapped into the zone, the one-shot time, or for a backoff
	// the previous send (or registration) plus the interval.
	At time.Time
	// Due is when it becomes due: At plus its spread offset. A scheduler
	// stores it as next_at and may move it further (collision jitter);
	// the occurrence's identity stays At (or Seq).
	Due time.Time
	// Seq is, for a backoff, the send this occurrence is (sent_count+1
	// when it was computed); 0 for the other kinds.
	Seq int
	// Wall is the nominal wall-clock time (floating: its fields read as
	// UTC) of an RRULE or cron occurrence; zero for the other kinds.
	Wall time.Time
	// Shifted says Wall fell in a spring-forward gap, so At shows the
	// wall time moved forward by the gap's length.
	Shifted bool
}

// ID is the occurrence's stable identity, the last part of its
// idempotency key reminder:{id}:{occurrence} (S2.6): for a backoff "n"
// and the send number ("n3"), which the occurrence keeps when an update
// reschedules it (S2.3) and which grows with every send; for the others the
// nominal instant in UTC ("20261207T000000Z"), which neither spreading nor
// collision jitter changes and which two occurrences of one schedule never
// share (firings are strictly increasing).
func (o Occurrence) ID() string {
	if o.Seq > 0 {
		return "n" + strconv.Itoa(o.Seq)
	}
	return o.At.UTC().Format("20060102T150405Z")
}

// Compile validates s and returns its plan. zone is the user's time zone,
// used when s names none ("" means DefaultZone). Every refusal is an
// invalid_argument heraldtype.Error naming its field (schedule.rrule,
// schedule.backoff.factor, …); Compile never panics.
func Compile(s heraldtype.Schedule, zone string) (*Plan, error) {
	p := &Plan{catchUp: s.CatchUp, window: s.CatchUpWindow.Std(), spread: s.Spread.Std(), immediately: s.Immediately}
	kinds := 0
	if !s.At.IsZero() {
		kinds, p.kind = kinds+1, KindAt
	}
	if s.Backoff != nil {
		kinds, p.kind = kinds+1, KindBackoff
	}
	if s.RRule != "" {
		kinds, p.kind = kinds+1, KindRRule
	}
	if s.Cron != "" {
		kinds, p.kind = kinds+1, KindCron
	}
	switch kinds {
	case 0:
		return nil, heraldtype.FieldErrorf("schedule", "give one of at, backoff, rrule or cron")
	case 1:
	default:
		return nil, heraldtype.FieldErrorf("schedule", "give only one of at, backoff, rrule or cron")
	}
	var err error
	if s.TimeZone != "" {
		p.loc, err = loadZone("schedule.time_zone", s.TimeZone)
	} else {
		if zone == "" {
			zone = DefaultZone
		}
		p.loc, err = loadZone("time_zone", zone)
	}
	if err != nil {
		return nil, err
	}
	switch p.kind {
	case KindAt:
		if y := s.At.Year(); y < 1970 || y > 9999 {
			return nil, heraldtype.FieldErrorf("schedule.at", "year %d is out of range", y)
		}
		// Whole seconds, rounded up: a one-shot never fires before the
		// time it was given.
		p.at = s.At.UTC().Truncate(time.Second)
		if p.at.Before(s.At) {
			p.at = p.at.Add(time.Second)
		}
	case KindBackoff:
		err = p.compileBackoff(*s.Backoff)
	case KindRRule:
		p.rule, err = parseRRule(s.RRule, p.loc)
	case KindCron:
		p.cron, err = parseCron(s.Cron)
	}
	if err != nil {
		return nil, err
	}
	return p, p.compileOptions()
}

func (p *Plan) compileBackoff(b heraldtype.Backoff) error {
	p.first, p.max, p.factor = b.First.Std(), b.Max.Std(), b.Factor
	switch {
	case p.first <= 0:
		return heraldtype.FieldErrorf("schedule.backoff.first", "must be a positive duration such as \"1h\"")
	case p.first < MinBackoff || p.first > MaxBackoff:
		return heraldtype.FieldErrorf("schedule.backoff.first", "must be from %s to %s", MinBackoff, MaxBackoff)
	case math.IsNaN(p.factor) || p.factor < 1:
		return heraldtype.FieldErrorf("schedule.backoff.factor", "must be at least 1 (1 repeats at a fixed interval)")
	case p.factor > MaxFactor:
		return heraldtype.FieldErrorf("schedule.backoff.factor", "must be at most %g", MaxFactor)
	case p.max <= 0:
		return heraldtype.FieldErrorf("schedule.backoff.max", "must be a positive duration such as \"48h\"")
	case p.max < p.first:
		return heraldtype.FieldErrorf("schedule.backoff.max", "%s is below first (%s)", p.max, p.first)
	case p.max > MaxBackoff:
		return heraldtype.FieldErrorf("schedule.backoff.max", "must be at most %s", MaxBackoff)
	}
	return nil
}

func (p *Plan) compileOptions() error {
	switch p.catchUp {
	case "":
		p.catchUp = heraldtype.CatchUpOnce
	case heraldtype.CatchUpSkip, heraldtype.CatchUpOnce, heraldtype.CatchUpAll:
	default:
		return heraldtype.FieldErrorf("schedule.catch_up", "%q is not skip, once or all", p.catchUp)
	}
	switch {
	case p.window == 0:
		p.window = DefaultCatchUpWindow
	case p.window < MinCatchUpWindow || p.window > MaxCatchUpWindow:
		return heraldtype.FieldErrorf("schedule.catch_up_window", "must be from %s to %s", MinCatchUpWindow, MaxCatchUpWindow)
	}
	if p.spread != 0 && (p.spread < MinSpread || p.spread > MaxSpread) {
		return heraldtype.FieldErrorf("schedule.spread", "must be from %s to %s", MinSpread, MaxSpread)
	}
	return nil
}

// Kind returns the plan's form.
func (p *Plan) Kind() Kind { return p.kind }

// Location returns the zone the plan evaluates wall-clock times in.
func (p *Plan) Location() *time.Location { return p.loc }

// CatchUpPolicy returns the plan's catch-up policy and window (defaults
// applied).
func (p *Plan) CatchUpPolicy() (heraldtype.CatchUp, time.Duration) { return p.catchUp, p.window }

// Interval returns a backoff's interval after k sends: min(first·factor^k,
// max) (S2.2). It is 0 for the other kinds.
func (p *Plan) Interval(k int) time.Duration {
	if p.kind != KindBackoff {
		return 0
	}
	d := float64(p.first) * math.Pow(p.factor, float64(max(k, 0)))
	if math.IsNaN(d) || d >= float64(p.max) {
		return p.max
	}
	return time.Duration(d)
}

// First returns the first occurrence of a schedule registered — or
// updated, which restarts it (S2.3) — at a.Start with sentCount sends
// already made: with Immediately, a.Start itself (whole seconds, due at
// once: no spread); otherwise for a backoff Start + Interval(sentCount)
// (sent_count is kept across updates, so a reminder that was sent three
// times waits the fourth interval), for the others the first occurrence
// strictly after Start. ok is false when there is none: an at in the past,
// an RRULE whose COUNT or UNTIL is exhausted, a rule that never matches
// within Horizon.
func (p *Plan) First(a Anchor, sentCount int) (Occurrence, bool) {
	if p.immediately {
		o := Occurrence{At: a.Start.UTC().Truncate(time.Second)}
		o.Due = o.At
		if p.kind == KindBackoff {
			o.Seq = max(sentCount, 0) + 1
		} else if p.kind != KindAt {
			o.Wall = floating(o.At.In(p.loc))
		}
		return o, true
	}
	return p.next(a, a.Start, sentCount)
}

// Next returns the first occurrence strictly after after, the previous
// occurrence's nominal time (or, for a backoff, the send that just
// happened), and at least the plan's spacing after it: nearer occurrences
// are passed over (issue 31 item 6). For a backoff it is after plus
// Interval(sentCount), sentCount counting that send (less the immediate
// one, which does not grow the backoff). ok is false when the schedule has
// no more.
func (p *Plan) Next(a Anchor, after time.Time, sentCount int) (Occurrence, bool) {
	o, ok := p.next(a, after, sentCount)
	if !ok || p.spacing <= 0 {
		return o, ok
	}
	least := after.Add(p.spacing)
	if !o.At.Before(least) {
		return o, true
	}
	switch p.kind {
	case KindBackoff:
		// The send's identity is its number, not its time: it waits.
		o.At = least.UTC().Truncate(time.Second)
		if o.At.Before(least) {
			o.At = o.At.Add(time.Second)
		}
		o.Due = o.At.Add(Spread(a.Key, o.ID(), p.spread))
		return o, true
	default:
		return p.next(a, least.Add(-time.Nanosecond), sentCount)
	}
}

// next is Next without the spacing.
func (p *Plan) next(a Anchor, after time.Time, sentCount int) (Occurrence, bool) {
	var o Occurrence
	switch p.kind {
	case KindAt:
		if !p.at.After(after) {
			return Occurrence{}, false
		}
		o.At = p.at
	case KindBackoff:
		k := sentCount
		if p.immediately {
			k--
		}
		o.At, o.Seq = after.UTC().Add(p.Interval(k)).Truncate(time.Second), max(sentCount, 0)+1
		if !o.At.After(after) {
			o.At = o.At.Add(time.Second)
		}
	default:
		var ok bool
		if o, ok = p.nextWall(a, after); !ok {
			return Occurrence{}, false
		}
	}
	o.Due = o.At.Add(Spread(a.Key, o.ID(), p.spread))
	return o, true
}

// nextWall finds the first RRULE or cron occurrence strictly after the
// instant after: the earliest instant, after after, that any of the rule's
// wall times maps to in the zone. Mapping is not monotonic: a wall time in a
// spring-forward gap moves forward by the gap, past later wall times that
// exist (on Lord Howe, a 30-minute gap, BYMINUTE=15,40 at 02:xx gives 02:40
// and then 02:45, the shifted 02:15 — RFC 5545 keeps both, issue 30 item 6).
// So the walk starts before after's own wall clock by the largest gap
// nearby and, once it holds a candidate, goes on until the wall times pass
// the candidate's own wall clock, after which none can map earlier. Two
// wall times that map to one instant (New York's 02:30 in the gap and
// 03:30) fire once, since the answer is strictly after after.
func (p *Plan) nextWall(a Anchor, after time.Time) (Occurrence, bool) {
	var rule boundRule
	if p.rule != nil {
		p.rule.bind(floating(a.Start.In(p.loc)), &rule)
	}
	jump := forwardJump(after, p.loc)
	w := floating(after.In(p.loc)).Add(-jump - time.Second)
	var best Occurrence
	var bestWall time.Time // the wall clock best shows
	// Each wall time taken is later than the last, every one more than a
	// day past after's wall clock maps after it, and the walk ends at most
	// a gap past the first candidate, so it ends within a few days of wall
	// times (at most MaxTimesPerDay a day); the bound only guards against
	// inconsistent tz data.
	for range 4 * MaxTimesPerDay {
		var ok bool
		if p.rule != nil {
			w, ok = rule.next(w)
		} else {
			w, ok = cronNext(p.cron, w)
		}
		if !ok || !best.At.IsZero() && w.After(bestWall) {
			break
		}
		at, shifted := resolve(w, p.loc)
		if at.After(after) && (best.At.IsZero() || at.Before(best.At)) {
			best, bestWall = Occurrence{At: at, Wall: w, Shifted: shifted}, floating(at.In(p.loc))
			if jump == 0 {
				break // no gap nearby: wall times map in order
			}
		}
	}
	return best, !best.At.IsZero()
}

// Restore rebuilds the stored occurrence of a reminder from its row: its
// nominal instant, its due time (next_at) and sent_count.
func (p *Plan) Restore(at, due time.Time, sentCount int) Occurrence {
	o := Occurrence{At: at.UTC(), Due: due.UTC()}
	if p.kind == KindBackoff {
		o.Seq = max(sentCount, 0) + 1
	} else if p.kind != KindAt {
		o.Wall = floating(at.In(p.loc))
	}
	return o
}

// CheckFirst is First for the API: a schedule with no future occurrence is
// refused at registration (issue 19 item 9) with an error naming the field
// at fault, never accepted to silently never fire.
func (p *Plan) CheckFirst(a Anchor, sentCount int) (Occurrence, error) {
	o, ok := p.First(a, sentCount)
	if ok {
		return o, nil
	}
	switch p.kind {
	case KindAt:
		return o, heraldtype.FieldErrorf("schedule.at", "%s is not in the future", p.at.Format(time.RFC3339))
	case KindRRule:
		return o, heraldtype.FieldErrorf("schedule.rrule", "has no occurrence after %s within %d years (COUNT or UNTIL exhausted, or no date matches)", a.Start.UTC().Format(time.RFC3339), int(Horizon/(365*24*time.Hour)))
	default:
		return o, heraldtype.FieldErrorf("schedule.cron", "has no occurrence after %s within %d years", a.Start.UTC().Format(time.RFC3339), int(Horizon/(365*24*time.Hour)))
	}
}
