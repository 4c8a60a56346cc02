package schedule

import (
	"strings"
	"testing"
	"time"

	"github.com/heraldhq/herald/heraldtype"
)

const stamp = "2006-01-02 15:04 -0700"

func mustCompile(t testing.TB, s heraldtype.Schedule, zone string) *Plan {
	t.Helper()
	p, err := Compile(s, zone)
	if err != nil {
		t.Fatalf("Compile(%+v, %q): %v", s, zone, err)
	}
	return p
}

func mustLoad(t testing.TB, zone string) *time.Location {
	t.Helper()
	loc, err := time.LoadLocation(zone)
	if err != nil {
		t.Fatal(err)
	}
	return loc
}

// local parses "2006-01-02 15:04" in zone (an unambiguous wall time).
func local(t testing.TB, zone, s string) time.Time {
	t.Helper()
	v, err := time.ParseInLocation("2006-01-02 15:04", s, mustLoad(t, zone))
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// occurrences steps First then Next n times and formats each firing in the
// plan's zone; "end" marks an exhausted schedule.
func occurrences(t testing.TB, p *Plan, a Anchor, n int) []string {
	t.Helper()
	var out []string
	o, ok := p.First(a, 0)
	for i := 0; i < n; i++ {
		if !ok {
			return append(out, "end")
		}
		out = append(out, o.At.In(p.Location()).Format(stamp))
		o, ok = p.Next(a, o.At, i+1)
	}
	return out
}

// TestWallClockSchedules is issue 19 item 2's table: RRULE and cron on the
// user's wall clock in Asia/Seoul (no DST), America/New_York,
// Europe/London and Australia/Lord_Howe (a 30-minute DST): a wall time in a
// spring-forward gap fires once at the shifted time, one in an autumn
// overlap fires once (its first instant), and nothing fires twice.
func TestWallClockSchedules(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, zone, rrule, cron, start string
		want                           []string
	}{
		{name: "seoul weekly monday 09:00 (the issue's example)", zone: "Asia/Seoul",
			rrule: "FREQ=WEEKLY;BYDAY=MO;BYHOUR=9;BYMINUTE=0", start: "2026-11-25 10:00",
			want: []string{"2026-11-30 09:00 +0900", "2026-12-07 09:00 +0900", "2026-12-14 09:00 +0900"}},
		{name: "seoul cron daily 09:00", zone: "Asia/Seoul", cron: "0 9 * * *", start: "2026-11-25 09:00",
			want: []string{"2026-11-26 09:00 +0900", "2026-11-27 09:00 +0900"}},
		{name: "new york daily 02:30 across spring-forward (rrule)", zone: "America/New_York",
			rrule: "FREQ=DAILY;BYHOUR=2;BYMINUTE=30", start: "2026-03-06 12:00",
			want: []string{"2026-03-07 02:30 -0500", "2026-03-08 03:30 -0400", "2026-03-09 02:30 -0400"}},
		{name: "new york cron 30 2 * * * across spring-forward", zone: "America/New_York",
			cron: "30 2 * * *", start: "2026-03-06 12:00",
			want: []string{"2026-03-07 02:30 -0500", "2026-03-08 03:30 -0400", "2026-03-09 02:30 -0400"}},
		{name: "new york daily 01:30 across fall-back fires once", zone: "America/New_York",
			rrule: "FREQ=DAILY;BYHOUR=1;BYMINUTE=30", start: "2026-10-30 12:00",
			want: []string{"2026-10-31 01:30 -0400", "2026-11-01 01:30 -0400", "2026-11-02 01:30 -0500"}},
		{name: "new york cron 30 1 * * * across fall-back fires once", zone: "America/New_York",
			cron: "30 1 * * *", start: "2026-10-30 12:00",
			want: []string{"2026-10-31 01:30 -0400", "2026-11-01 01:30 -0400", "2026-11-02 01:30 -0500"}},
		{name: "new york */30 across spring-forward", zone: "America/New_York",
			cron: "*/30 * * * *", start: "2026-03-08 00:50",
			want: []string{"2026-03-08 01:00 -0500", "2026-03-08 01:30 -0500", "2026-03-08 03:00 -0400",
				"2026-03-08 03:30 -0400", "2026-03-08 04:00 -0400"}},
		{name: "new york */30 across fall-back", zone: "America/New_York",
			cron: "*/30 * * * *", start: "2026-11-01 00:10",
			want: []string{"2026-11-01 00:30 -0400", "2026-11-01 01:00 -0400", "2026-11-01 01:30 -0400",
				"2026-11-01 02:00 -0500", "2026-11-01 02:30 -0500"}},
		{name: "london daily 01:30 across spring-forward", zone: "Europe/London",
			rrule: "FREQ=DAILY;BYHOUR=1;BYMINUTE=30", start: "2026-03-27 12:00",
			want: []string{"2026-03-28 01:30 +0000", "2026-03-29 02:30 +0100", "2026-03-30 01:30 +0100"}},
		{name: "london cron 30 1 * * * across fall-back", zone: "Europe/London",
			cron: "30 1 * * *", start: "2026-10-24 12:00",
			want: []string{"2026-10-25 01:30 +0100", "2026-10-26 01:30 +0000"}},
		{name: "lord howe daily 02:15 in the 30-minute gap", zone: "Australia/Lord_Howe",
			rrule: "FREQ=DAILY;BYHOUR=2;BYMINUTE=15", start: "2026-10-02 12:00",
			want: []string{"2026-10-03 02:15 +1030", "2026-10-04 02:45 +1100", "2026-10-05 02:15 +1100"}},
		{name: "lord howe daily 01:45 in the 30-minute overlap", zone: "Australia/Lord_Howe",
			cron: "45 1 * * *", start: "2026-04-04 12:00",
			want: []string{"2026-04-05 01:45 +1100", "2026-04-06 01:45 +1030"}},
		{name: "lord howe */30 across spring-forward", zone: "Australia/Lord_Howe",
			cron: "*/30 * * * *", start: "2026-10-04 01:10",
			want: []string{"2026-10-04 01:30 +1030", "2026-10-04 02:30 +1100", "2026-10-04 03:00 +1100"}},
		{name: "lord howe */30 across fall-back", zone: "Australia/Lord_Howe",
			cron: "*/30 * * * *", start: "2026-04-05 01:10",
			want: []string{"2026-04-05 01:30 +1100", "2026-04-05 02:00 +1030", "2026-04-05 02:30 +1030"}},
		// Issue 30 item 6: a sub-hour gap moves 02:15 to 02:45, past 02:40,
		// which exists; RFC 5545 keeps both, fired in the order of their
		// instants.
		{name: "lord howe 02:15 and 02:40 across the 30-minute gap", zone: "Australia/Lord_Howe",
			rrule: "FREQ=DAILY;BYHOUR=2;BYMINUTE=15,40", start: "2026-10-03 12:00",
			want: []string{"2026-10-04 02:40 +1100", "2026-10-04 02:45 +1100", "2026-10-05 02:15 +1100", "2026-10-05 02:40 +1100"}},
		{name: "lord howe cron 15,40 2 across the 30-minute gap", zone: "Australia/Lord_Howe",
			cron: "15,40 2 * * *", start: "2026-10-03 12:00",
			want: []string{"2026-10-04 02:40 +1100", "2026-10-04 02:45 +1100", "2026-10-05 02:15 +1100"}},
		{name: "lord howe every quarter hour of 02 across the gap: 02:30 and 02:45 once each", zone: "Australia/Lord_Howe",
			rrule: "FREQ=DAILY;BYHOUR=2;BYMINUTE=0,15,30,45", start: "2026-10-04 00:00",
			want: []string{"2026-10-04 02:30 +1100", "2026-10-04 02:45 +1100", "2026-10-05 02:00 +1100"}},
		{name: "lord howe 01:15 and 01:40 across the 30-minute overlap", zone: "Australia/Lord_Howe",
			rrule: "FREQ=DAILY;BYHOUR=1,2;BYMINUTE=15,40", start: "2026-04-04 12:00",
			want: []string{"2026-04-05 01:15 +1100", "2026-04-05 01:40 +1100", "2026-04-05 02:15 +1030",
				"2026-04-05 02:40 +1030", "2026-04-06 01:15 +1030"}},
		{name: "new york 02:15 and 03:15 across spring-forward: one instant, fired once", zone: "America/New_York",
			rrule: "FREQ=DAILY;BYHOUR=2,3;BYMINUTE=15", start: "2026-03-07 12:00",
			want: []string{"2026-03-08 03:15 -0400", "2026-03-09 02:15 -0400"}},
		{name: "chatham across its 02:45 spring-forward: 03:30 shifted past 03:50", zone: "Pacific/Chatham",
			rrule: "FREQ=DAILY;BYHOUR=2,3;BYMINUTE=30,50", start: "2026-09-26 12:00",
			want: []string{"2026-09-27 02:30 +1245", "2026-09-27 03:50 +1345", "2026-09-27 04:30 +1345", "2026-09-28 02:30 +1345"}},
		{name: "monthly last friday 18:00 across spring-forward", zone: "America/New_York",
			rrule: "FREQ=MONTHLY;BYDAY=-1FR;BYHOUR=18;BYMINUTE=0", start: "2026-01-01 00:00",
			want: []string{"2026-01-30 18:00 -0500", "2026-02-27 18:00 -0500", "2026-03-27 18:00 -0400", "2026-04-24 18:00 -0400"}},
		{name: "yearly february 29", zone: "Asia/Seoul",
			rrule: "FREQ=YEARLY;BYMONTH=2;BYMONTHDAY=29;BYHOUR=9;BYMINUTE=0", start: "2026-01-01 00:00",
			want: []string{"2028-02-29 09:00 +0900", "2032-02-29 09:00 +0900", "2036-02-29 09:00 +0900"}},
		{name: "yearly february 29 across 2100 (eight years)", zone: "Europe/London",
			rrule: "FREQ=YEARLY;BYMONTH=2;BYMONTHDAY=29;BYHOUR=9;BYMINUTE=0", start: "2097-01-01 00:00",
			want: []string{"2104-02-29 09:00 +0000", "2108-02-29 09:00 +0000"}},
		{name: "cron february 29 across 2100 (beyond the library's five years)", zone: "Asia/Seoul",
			cron: "0 9 29 2 *", start: "2097-01-01 00:00",
			want: []string{"2104-02-29 09:00 +0900"}},
		{name: "count exhausted", zone: "Europe/London",
			rrule: "FREQ=DAILY;COUNT=2;BYHOUR=9;BYMINUTE=0", start: "2026-06-01 08:00",
			want: []string{"2026-06-01 09:00 +0100", "2026-06-02 09:00 +0100", "end"}},
		{name: "until exhausted (UTC)", zone: "America/New_York",
			rrule: "FREQ=WEEKLY;BYDAY=TU,TH;BYHOUR=9;BYMINUTE=0;UNTIL=20261210T140000Z", start: "2026-12-01 12:00",
			want: []string{"2026-12-03 09:00 -0500", "2026-12-08 09:00 -0500", "2026-12-10 09:00 -0500", "end"}},
		{name: "apia skipped 30 december 2011: fires once, shifted a day", zone: "Pacific/Apia",
			rrule: "FREQ=DAILY;BYHOUR=9;BYMINUTE=0", start: "2011-12-28 12:00",
			want: []string{"2011-12-29 09:00 -1000", "2011-12-31 09:00 +1400", "2012-01-01 09:00 +1400"}},
		{name: "monthly every friday and the second-last monday", zone: "Asia/Seoul",
			rrule: "FREQ=MONTHLY;BYDAY=FR,-2MO;BYHOUR=9;BYMINUTE=0", start: "2026-12-01 10:00",
			want: []string{"2026-12-04 09:00 +0900", "2026-12-11 09:00 +0900", "2026-12-18 09:00 +0900", "2026-12-21 09:00 +0900", "2026-12-25 09:00 +0900"}},
		{name: "defaults from DTSTART: daily at the registration minute", zone: "Asia/Seoul",
			rrule: "FREQ=DAILY", start: "2026-11-25 10:17",
			want: []string{"2026-11-26 10:17 +0900", "2026-11-27 10:17 +0900"}},
		{name: "every second week on tuesday and friday", zone: "Asia/Seoul",
			rrule: "FREQ=WEEKLY;INTERVAL=2;BYDAY=TU,FR;BYHOUR=8;BYMINUTE=0", start: "2026-11-23 00:00",
			want: []string{"2026-11-24 08:00 +0900", "2026-11-27 08:00 +0900", "2026-12-08 08:00 +0900", "2026-12-11 08:00 +0900"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			p := mustCompile(t, heraldtype.Schedule{RRule: c.rrule, Cron: c.cron}, c.zone)
			got := occurrences(t, p, Anchor{Key: "r1", Start: local(t, c.zone, c.start)}, len(c.want))
			if strings.Join(got, " | ") != strings.Join(c.want, " | ") {
				t.Errorf("got  %s\nwant %s", strings.Join(got, " | "), strings.Join(c.want, " | "))
			}
		})
	}
}
