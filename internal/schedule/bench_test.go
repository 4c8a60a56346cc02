package schedule

import (
	"testing"
	"time"

	"github.com/heraldhq/herald/heraldtype"
)

// BenchmarkNext measures one next-occurrence computation, what the reminder
// scheduler does per fired occurrence (issue 19 item 10 asks for 5,000
// occurrences/s; this is a small part of each).
func BenchmarkNext(b *testing.B) {
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for _, c := range []struct {
		name string
		s    heraldtype.Schedule
		zone string
	}{
		{"cron_daily_seoul", heraldtype.Schedule{Cron: "0 9 * * *"}, "Asia/Seoul"},
		{"cron_halfhourly_new_york", heraldtype.Schedule{Cron: "*/30 * * * *"}, "America/New_York"},
		{"rrule_weekly_new_york", heraldtype.Schedule{RRule: "FREQ=WEEKLY;BYDAY=MO;BYHOUR=9;BYMINUTE=0"}, "America/New_York"},
		{"rrule_monthly_last_friday_london", heraldtype.Schedule{RRule: "FREQ=MONTHLY;BYDAY=-1FR;BYHOUR=18;BYMINUTE=0"}, "Europe/London"},
		{"rrule_count_daily_seoul", heraldtype.Schedule{RRule: "FREQ=DAILY;COUNT=1000;BYHOUR=9;BYMINUTE=0"}, "Asia/Seoul"},
		{"backoff", heraldtype.Schedule{Backoff: &heraldtype.Backoff{First: heraldtype.Duration(time.Hour), Factor: 2, Max: heraldtype.Duration(48 * time.Hour)}}, "Asia/Seoul"},
	} {
		b.Run(c.name, func(b *testing.B) {
			p, err := Compile(c.s, c.zone)
			if err != nil {
				b.Fatal(err)
			}
			a := Anchor{Key: "reminder-42", Start: start}
			after := start
			n := 0
			b.ReportAllocs()
			for b.Loop() {
				o, ok := p.Next(a, after, n)
				if !ok {
					after, n = start, 0
					continue
				}
				after, n = o.At, n+1
				if n > 900 {
					after, n = start, 0
				}
			}
		})
	}
}

// BenchmarkCompile measures validating a schedule, done per reminder
// evaluation unless the caller keeps plans.
func BenchmarkCompile(b *testing.B) {
	s := heraldtype.Schedule{RRule: "FREQ=WEEKLY;BYDAY=MO;BYHOUR=9;BYMINUTE=0"}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Compile(s, "America/New_York"); err != nil {
			b.Fatal(err)
		}
	}
}
