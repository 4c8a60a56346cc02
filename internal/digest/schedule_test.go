package digest

import (
	"errors"
	"testing"
	"time"

	"github.com/heraldhq/herald/heraldtype"
)

// The expected instants were computed with Python's zoneinfo (issue 36
// item 2: a user's digest schedule on the reminders' wall-clock
// evaluator, DST-proof).
func TestNextScheduled(t *testing.T) {
	t.Parallel()
	utc := func(s string) time.Time {
		at, err := time.Parse(time.RFC3339, s)
		if err != nil {
			t.Fatal(err)
		}
		return at
	}
	daily := func(at string) heraldtype.DigestSchedule {
		return heraldtype.DigestSchedule{Every: heraldtype.DigestEveryDay, At: at}
	}
	for _, tc := range []struct {
		name      string
		s         heraldtype.DigestSchedule
		zone, now string
		want      string
	}{
		{"daily 18:00 the day before spring-forward", daily("18:00"), "America/New_York", "2026-03-07T12:00:00Z", "2026-03-07T23:00:00Z"},
		{"daily 18:00 across spring-forward (a 23 h day)", daily("18:00"), "America/New_York", "2026-03-07T23:00:00Z", "2026-03-08T22:00:00Z"},
		{"in the spring-forward gap: moved forward by the gap", daily("02:30"), "America/New_York", "2026-03-08T05:00:00Z", "2026-03-08T07:30:00Z"},
		{"the day after the gap", daily("02:30"), "America/New_York", "2026-03-08T07:30:00Z", "2026-03-09T06:30:00Z"},
		{"in the fall-back overlap: its first instant", daily("01:30"), "America/New_York", "2026-11-01T04:00:00Z", "2026-11-01T05:30:00Z"},
		{"the overlap's second 01:30 is not a second time", daily("01:30"), "America/New_York", "2026-11-01T05:30:00Z", "2026-11-02T06:30:00Z"},
		{"weekly on Monday 09:00 in Seoul", heraldtype.DigestSchedule{Every: "week", At: "09:00", On: "monday"}, "Asia/Seoul", "2026-11-28T12:00:00Z", "2026-11-30T00:00:00Z"},
		{"weekly on Monday 09:00, at that instant: the next week", heraldtype.DigestSchedule{Every: "week", At: "09:00", On: "Monday"}, "Asia/Seoul", "2026-11-30T00:00:00Z", "2026-12-07T00:00:00Z"},
		{"no zone: the default (Seoul)", daily("18:00"), "", "2026-11-28T00:00:00Z", "2026-11-28T09:00:00Z"},
	} {
		got, err := NextScheduled(tc.s, tc.zone, utc(tc.now))
		if err != nil || !got.Equal(utc(tc.want)) {
			t.Errorf("%s: NextScheduled = %v, %v; want %s", tc.name, got, err, tc.want)
		}
	}
}

func TestCheckScheduleNamesTheField(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		s     heraldtype.DigestSchedule
		field string
	}{
		{heraldtype.DigestSchedule{Every: "hour", At: "18:00"}, "types.c.digest.every"},
		{heraldtype.DigestSchedule{Every: "", At: "18:00"}, "types.c.digest.every"},
		{heraldtype.DigestSchedule{Every: "day", At: "24:00"}, "types.c.digest.at"},
		{heraldtype.DigestSchedule{Every: "day", At: "6pm"}, "types.c.digest.at"},
		{heraldtype.DigestSchedule{Every: "day", At: "8:00"}, "types.c.digest.at"},
		{heraldtype.DigestSchedule{Every: "day", At: "18:00", On: "monday"}, "types.c.digest.on"},
		{heraldtype.DigestSchedule{Every: "week", At: "18:00"}, "types.c.digest.on"},
		{heraldtype.DigestSchedule{Every: "week", At: "18:00", On: "mon"}, "types.c.digest.on"},
	} {
		err := CheckSchedule("types.c.digest", tc.s)
		var he *heraldtype.Error
		if !errors.As(err, &he) || he.Code != heraldtype.EINVALID || he.Field != tc.field {
			t.Errorf("CheckSchedule(%+v) = %v; want invalid_argument on %s", tc.s, err, tc.field)
		}
	}
	if err := CheckSchedule("d", heraldtype.DigestSchedule{Every: "week", At: "09:00", On: "sunday"}); err != nil {
		t.Errorf("weekly on sunday: %v", err)
	}
}

func TestDefaultMessage(t *testing.T) {
	t.Parallel()
	one := View{Count: 1, Title: "Ann commented", Body: "Nice", Items: []Item{{Title: "Ann commented", Body: "Nice"}}}
	if title, body := DefaultMessage(one, 100, 100); title != "Ann commented" || body != "Nice" {
		t.Errorf("one item = %q, %q", title, body)
	}
	three := View{Count: 3, Title: "Ann commented", Items: []Item{{Title: "Ann commented"}, {Body: "Bo liked it"}, {Title: "Cy commented"}}}
	if title, body := DefaultMessage(three, 100, 100); title != "Ann commented (+2 more)" || body != "Ann commented\nBo liked it\nCy commented" {
		t.Errorf("three items = %q, %q", title, body)
	}
	if _, body := DefaultMessage(three, 100, 30); body != "Ann commented\n… and 2 more" || len(body) > 30 {
		t.Errorf("three items in 30 bytes: body %q", body)
	}
}
