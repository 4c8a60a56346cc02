package schedule

import (
	"fmt"
	"strings"
	"time"

	"github.com/heraldhq/herald/heraldtype"
	"github.com/robfig/cron/v3"
)

// MaxCronLength bounds a cron expression's text.
const MaxCronLength = 256

// parseCron parses a standard five-field cron expression (minute, hour,
// day of month, month, day of week; names such as MON and JAN; both day
// fields restricted means either matches, as in Vixie cron) or one of the
// descriptors @yearly, @annually, @monthly, @weekly, @daily, @midnight,
// @hourly. github.com/robfig/cron/v3 (v3.0.1) parses it and computes the
// next matching wall time; Herald runs it on floating (UTC) times, where no
// transition happens, and maps each wall time into the zone itself
// (resolve), because cron libraries have had DST bugs. Refused: a
// CRON_TZ=/TZ= prefix (the zone is the schedule's time_zone), @every (an
// interval, not a wall-clock time: use backoff or an RRULE), six fields.
func parseCron(text string) (cron.Schedule, error) {
	const field = "schedule.cron"
	s := strings.TrimSpace(text)
	switch {
	case len(s) > MaxCronLength:
		return nil, heraldtype.FieldErrorf(field, "longer than %d characters", MaxCronLength)
	case s == "":
		return nil, heraldtype.FieldErrorf(field, "empty; for example \"0 9 * * *\"")
	case strings.HasPrefix(s, "TZ=") || strings.HasPrefix(s, "CRON_TZ="):
		return nil, heraldtype.FieldErrorf(field, "a time zone prefix is not allowed: the schedule's time_zone sets the zone")
	case strings.HasPrefix(s, "@every"):
		return nil, heraldtype.FieldErrorf(field, "@every is not supported: use a backoff or an RRULE for intervals")
	}
	sched, err := parseStandard(s)
	if err != nil {
		return nil, heraldtype.FieldErrorf(field, "%q is not a five-field cron expression (minute hour day-of-month month day-of-week, e.g. \"0 9 * * *\"): %s", s, err.Error())
	}
	if _, ok := sched.(*cron.SpecSchedule); !ok {
		return nil, heraldtype.FieldErrorf(field, "%q is not a wall-clock schedule", s)
	}
	return sched, nil
}

// parseStandard is cron.ParseStandard that turns a parser panic into an
// error, so no input can crash a request.
func parseStandard(s string) (sched cron.Schedule, err error) {
	defer func() {
		if p := recover(); p != nil {
			sched, err = nil, fmt.Errorf("unparsable: %v", p)
		}
	}()
	return cron.ParseStandard(s)
}

// cronNext returns the first wall time (floating) strictly after the
// floating time after that the expression matches, within Horizon. The
// library gives up after five years (a February 29 expression can wait
// eight: 2096 to 2104), so a second search starts where the first stopped.
func cronNext(c cron.Schedule, after time.Time) (time.Time, bool) {
	limit := after.Add(Horizon)
	from := after
	for range 3 {
		w := c.Next(from)
		if !w.IsZero() {
			return w, !w.After(limit)
		}
		// robfig/cron searches to the end of year from.Year()+5.
		from = time.Date(from.Year()+6, time.January, 1, 0, 0, 0, 0, time.UTC).Add(-time.Second)
		if from.After(limit) {
			break
		}
	}
	return time.Time{}, false
}
