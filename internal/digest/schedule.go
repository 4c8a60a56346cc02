package digest

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/heraldhq/herald/heraldtype"
	"github.com/heraldhq/herald/internal/schedule"
)

// weekdays are the names DigestSchedule.On takes, in cron's numbering
// (Sunday 0).
var weekdays = []string{"sunday", "monday", "tuesday", "wednesday", "thursday", "friday", "saturday"}

// CheckSchedule validates a user's digest rhythm for a type (issue 36
// item 2); field is where it sits in the request (types.<type>.digest),
// and each refusal is invalid_argument naming the part that is wrong.
func CheckSchedule(field string, s heraldtype.DigestSchedule) error {
	_, err := scheduleCron(field, s)
	return err
}

// scheduleCron is s as the five-field cron expression the reminders'
// evaluator runs: "MM HH * * *" daily, "MM HH * * D" weekly.
func scheduleCron(field string, s heraldtype.DigestSchedule) (string, error) {
	h, m, ok := clock(s.At)
	if !ok {
		return "", heraldtype.FieldErrorf(field+".at", "%q is not a local time HH:MM", s.At)
	}
	switch s.Every {
	case heraldtype.DigestEveryDay:
		if s.On != "" {
			return "", heraldtype.FieldErrorf(field+".on", "names a weekday, which only a weekly digest takes")
		}
		return fmt.Sprintf("%d %d * * *", m, h), nil
	case heraldtype.DigestEveryWeek:
		for d, name := range weekdays {
			if strings.EqualFold(s.On, name) {
				return fmt.Sprintf("%d %d * * %d", m, h, d), nil
			}
		}
		return "", heraldtype.FieldErrorf(field+".on", "%q is not a weekday (monday … sunday)", s.On)
	}
	return "", heraldtype.FieldErrorf(field+".every", "%q must be day or week", s.Every)
}

// clock parses "HH:MM" (24-hour).
func clock(s string) (h, m int, ok bool) {
	hh, mm, found := strings.Cut(s, ":")
	if !found || len(hh) != 2 || len(mm) != 2 {
		return 0, 0, false
	}
	h, err1 := strconv.Atoi(hh)
	m, err2 := strconv.Atoi(mm)
	if err1 != nil || err2 != nil || h < 0 || h > 23 || m < 0 || m > 59 {
		return 0, 0, false
	}
	return h, m, true
}

// NextScheduled is when a digest a user's schedule s opens at now closes:
// the first scheduled time strictly after now on the wall clock of zone
// (the user's; "" is the default zone), on the reminders' evaluator —
// so a time in a spring-forward gap is moved forward by the gap, and
// one in an autumn overlap is its first instant.
func NextScheduled(s heraldtype.DigestSchedule, zone string, now time.Time) (time.Time, error) {
	expr, err := scheduleCron("digest", s)
	if err != nil {
		return time.Time{}, err
	}
	plan, err := schedule.Compile(heraldtype.Schedule{Cron: expr}, zone)
	if err != nil {
		return time.Time{}, err
	}
	o, ok := plan.Next(schedule.Anchor{Start: now}, now, 0)
	if !ok {
		return time.Time{}, fmt.Errorf("digest schedule %q has no next time", expr)
	}
	return o.At, nil
}
