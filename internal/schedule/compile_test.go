package schedule

import (
	"encoding/json"
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/heraldhq/herald/heraldtype"
)

func backoff(first, max string, factor float64) *heraldtype.Backoff {
	f, _ := time.ParseDuration(first)
	m, _ := time.ParseDuration(max)
	return &heraldtype.Backoff{First: heraldtype.Duration(f), Max: heraldtype.Duration(m), Factor: factor}
}

// TestCompileRefusesBadInput is issue 19 item 9: every bad schedule is an
// invalid_argument error naming its field, never a panic or a silent
// default.
func TestCompileRefusesBadInput(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name  string
		s     heraldtype.Schedule
		zone  string
		field string
		msg   string
	}{
		{"nothing", heraldtype.Schedule{}, "", "schedule", "give one of"},
		{"two kinds", heraldtype.Schedule{Cron: "0 9 * * *", RRule: "FREQ=DAILY"}, "", "schedule", "only one"},
		{"unknown schedule zone", heraldtype.Schedule{Cron: "0 9 * * *", TimeZone: "Mars/Olympus"}, "", "schedule.time_zone", "IANA"},
		{"Local is not a zone", heraldtype.Schedule{Cron: "0 9 * * *", TimeZone: "Local"}, "", "schedule.time_zone", "IANA"},
		{"path in zone", heraldtype.Schedule{Cron: "0 9 * * *", TimeZone: "../../etc/passwd"}, "", "schedule.time_zone", "IANA"},
		{"unknown user zone", heraldtype.Schedule{Cron: "0 9 * * *"}, "Europe/Atlantis", "time_zone", "IANA"},
		{"bad cron", heraldtype.Schedule{Cron: "61 9 * * *"}, "", "schedule.cron", "five-field"},
		{"cron with seconds", heraldtype.Schedule{Cron: "0 0 9 * * *"}, "", "schedule.cron", "five-field"},
		{"cron zone prefix", heraldtype.Schedule{Cron: "CRON_TZ=UTC 0 9 * * *"}, "", "schedule.cron", "time_zone"},
		{"cron @every", heraldtype.Schedule{Cron: "@every 1h"}, "", "schedule.cron", "@every"},
		{"cron too long", heraldtype.Schedule{Cron: strings.Repeat("1,", 200) + "1 * * * *"}, "", "schedule.cron", "longer"},
		{"rrule garbage", heraldtype.Schedule{RRule: "every monday"}, "", "schedule.rrule", "NAME=VALUE"},
		{"rrule without FREQ", heraldtype.Schedule{RRule: "BYHOUR=9"}, "", "schedule.rrule", "FREQ is required"},
		{"rrule hourly", heraldtype.Schedule{RRule: "FREQ=HOURLY"}, "", "schedule.rrule", "use cron"},
		{"rrule bysetpos", heraldtype.Schedule{RRule: "FREQ=MONTHLY;BYDAY=MO,TU;BYSETPOS=1"}, "", "schedule.rrule", "BYSETPOS is not supported"},
		{"rrule byweekno", heraldtype.Schedule{RRule: "FREQ=YEARLY;BYWEEKNO=20"}, "", "schedule.rrule", "BYWEEKNO is not supported"},
		{"rrule dtstart", heraldtype.Schedule{RRule: "FREQ=DAILY;DTSTART=20260101T000000Z"}, "", "schedule.rrule", "registration"},
		{"rrule unknown part", heraldtype.Schedule{RRule: "FREQ=DAILY;BYFOO=1"}, "", "schedule.rrule", "not an RRULE part"},
		{"rrule bad hour", heraldtype.Schedule{RRule: "FREQ=DAILY;BYHOUR=24"}, "", "schedule.rrule", "BYHOUR"},
		{"rrule bad day", heraldtype.Schedule{RRule: "FREQ=WEEKLY;BYDAY=XX"}, "", "schedule.rrule", "BYDAY"},
		{"rrule ordinal weekly", heraldtype.Schedule{RRule: "FREQ=WEEKLY;BYDAY=-1FR"}, "", "schedule.rrule", "needs FREQ=MONTHLY"},
		{"rrule count and until", heraldtype.Schedule{RRule: "FREQ=DAILY;COUNT=2;UNTIL=20300101"}, "", "schedule.rrule", "COUNT and UNTIL"},
		{"rrule huge count", heraldtype.Schedule{RRule: "FREQ=DAILY;COUNT=100000"}, "", "schedule.rrule", "COUNT"},
		{"rrule zero interval", heraldtype.Schedule{RRule: "FREQ=DAILY;INTERVAL=0"}, "", "schedule.rrule", "INTERVAL"},
		{"rrule bad until", heraldtype.Schedule{RRule: "FREQ=DAILY;UNTIL=tomorrow"}, "", "schedule.rrule", "UNTIL"},
		{"rrule twice", heraldtype.Schedule{RRule: "FREQ=DAILY;FREQ=WEEKLY"}, "", "schedule.rrule", "twice"},
		{"rrule too many times a day", heraldtype.Schedule{RRule: "FREQ=DAILY;BYHOUR=" + intList(24) + ";BYMINUTE=" + intList(60) + ";BYSECOND=0,30"}, "", "schedule.rrule", "times a day"},
		{"backoff factor below 1", heraldtype.Schedule{Backoff: backoff("1h", "48h", 0.5)}, "", "schedule.backoff.factor", "at least 1"},
		{"backoff factor missing", heraldtype.Schedule{Backoff: backoff("1h", "48h", 0)}, "", "schedule.backoff.factor", "at least 1"},
		{"backoff factor absurd", heraldtype.Schedule{Backoff: backoff("1h", "48h", 1e9)}, "", "schedule.backoff.factor", "at most"},
		{"backoff max below first", heraldtype.Schedule{Backoff: backoff("2h", "1h", 2)}, "", "schedule.backoff.max", "below first"},
		{"backoff first zero", heraldtype.Schedule{Backoff: backoff("0s", "1h", 2)}, "", "schedule.backoff.first", "positive"},
		{"backoff first negative", heraldtype.Schedule{Backoff: backoff("-1h", "1h", 2)}, "", "schedule.backoff.first", "positive"},
		{"backoff first too short", heraldtype.Schedule{Backoff: backoff("1s", "1h", 2)}, "", "schedule.backoff.first", "from"},
		{"backoff max missing", heraldtype.Schedule{Backoff: backoff("1h", "0s", 2)}, "", "schedule.backoff.max", "positive"},
		{"backoff max absurd", heraldtype.Schedule{Backoff: backoff("1h", "100000h", 2)}, "", "schedule.backoff.max", "at most"},
		{"at out of range", heraldtype.Schedule{At: time.Date(1900, 1, 1, 0, 0, 0, 0, time.UTC)}, "", "schedule.at", "out of range"},
		{"unknown catch_up", heraldtype.Schedule{Cron: "0 9 * * *", CatchUp: "sometimes"}, "", "schedule.catch_up", "skip, once or all"},
		{"catch_up_window too long", heraldtype.Schedule{Cron: "0 9 * * *", CatchUpWindow: heraldtype.Duration(30 * 24 * time.Hour)}, "", "schedule.catch_up_window", "from"},
		{"catch_up_window negative", heraldtype.Schedule{Cron: "0 9 * * *", CatchUpWindow: heraldtype.Duration(-time.Hour)}, "", "schedule.catch_up_window", "from"},
		{"spread too long", heraldtype.Schedule{Cron: "0 9 * * *", Spread: heraldtype.Duration(48 * time.Hour)}, "", "schedule.spread", "from"},
		{"spread negative", heraldtype.Schedule{Cron: "0 9 * * *", Spread: heraldtype.Duration(-time.Minute)}, "", "schedule.spread", "from"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			_, err := Compile(c.s, c.zone)
			var he *heraldtype.Error
			if !errors.As(err, &he) {
				t.Fatalf("err = %v, want a *heraldtype.Error", err)
			}
			if he.Code != heraldtype.EINVALID || he.Field != c.field || !strings.Contains(he.Message, c.msg) {
				t.Errorf("got %s field %q: %q; want field %q containing %q", he.Code, he.Field, he.Message, c.field, c.msg)
			}
		})
	}
}

func intList(n int) string {
	var b strings.Builder
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(strconv.Itoa(i))
	}
	return b.String()
}

// TestCheckFirstRefusesSchedulesThatNeverFire: a schedule with no future
// occurrence is refused at registration, naming the field (issue 19 item 9).
func TestCheckFirstRefusesSchedulesThatNeverFire(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 11, 25, 3, 0, 0, 0, time.UTC)
	cases := []struct {
		name  string
		s     heraldtype.Schedule
		field string
	}{
		{"at in the past", heraldtype.Schedule{At: now.Add(-time.Hour)}, "schedule.at"},
		{"at now", heraldtype.Schedule{At: now}, "schedule.at"},
		{"until in the past", heraldtype.Schedule{RRule: "FREQ=DAILY;UNTIL=20250101T000000Z"}, "schedule.rrule"},
		{"never matches (february 30)", heraldtype.Schedule{RRule: "FREQ=YEARLY;BYMONTH=2;BYMONTHDAY=30"}, "schedule.rrule"},
		{"never matches daily (february 30)", heraldtype.Schedule{RRule: "FREQ=DAILY;BYMONTH=2;BYMONTHDAY=30"}, "schedule.rrule"},
		{"every 4 years from an odd year never leap", heraldtype.Schedule{RRule: "FREQ=YEARLY;INTERVAL=4;BYMONTH=2;BYMONTHDAY=29"}, "schedule.rrule"},
		{"cron february 30", heraldtype.Schedule{Cron: "0 9 30 2 *"}, "schedule.cron"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			p := mustCompile(t, c.s, "Asia/Seoul")
			_, err := p.CheckFirst(Anchor{Key: "k", Start: now}, 0)
			var he *heraldtype.Error
			if !errors.As(err, &he) || he.Code != heraldtype.EINVALID || he.Field != c.field {
				t.Fatalf("CheckFirst = %v, want invalid_argument on %s", err, c.field)
			}
		})
	}
	p := mustCompile(t, heraldtype.Schedule{At: now.Add(time.Hour)}, "")
	if o, err := p.CheckFirst(Anchor{Start: now}, 0); err != nil || !o.At.Equal(now.Add(time.Hour)) {
		t.Fatalf("future at: %v %v", o, err)
	}
}

// TestBackoff is S2.2/S2.3: interval k = min(first·factor^k, max), k the
// number already sent; on create or update the schedule restarts from now
// and sent_count is kept, so the first next_at is now + interval(sent_count).
func TestBackoff(t *testing.T) {
	t.Parallel()
	p := mustCompile(t, heraldtype.Schedule{Backoff: backoff("1h", "48h", 2)}, "")
	want := []time.Duration{1, 2, 4, 8, 16, 32, 48, 48}
	for k, w := range want {
		if got := p.Interval(k); got != w*time.Hour {
			t.Errorf("Interval(%d) = %s, want %dh", k, got, w)
		}
	}
	if got := p.Interval(1 << 20); got != 48*time.Hour {
		t.Errorf("Interval(huge) = %s, want the max", got)
	}
	now := time.Date(2026, 11, 25, 3, 0, 0, 0, time.UTC)
	o, ok := p.First(Anchor{Key: "cart-42", Start: now}, 3) // updated after three sends
	if !ok || !o.At.Equal(now.Add(8*time.Hour)) || o.Seq != 4 || o.ID() != "n4" {
		t.Fatalf("First after 3 sends = %+v %v, want now+8h, send 4", o, ok)
	}
	sent := o.At.Add(2 * time.Second)
	n, ok := p.Next(Anchor{Key: "cart-42", Start: now}, sent, 4)
	if !ok || !n.At.Equal(sent.Add(16*time.Hour).Truncate(time.Second)) || n.ID() != "n5" {
		t.Fatalf("Next = %+v, want 16h after the send, n5", n)
	}
	one := mustCompile(t, heraldtype.Schedule{Backoff: backoff("30m", "30m", 1)}, "")
	if one.Interval(0) != 30*time.Minute || one.Interval(9) != 30*time.Minute {
		t.Fatal("factor 1 must repeat at a fixed interval")
	}
}

func TestOneShot(t *testing.T) {
	t.Parallel()
	at := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	p := mustCompile(t, heraldtype.Schedule{At: at}, "")
	a := Anchor{Key: "k", Start: at.Add(-time.Hour)}
	o, ok := p.First(a, 0)
	if !ok || !o.At.Equal(at) || o.ID() != "20261201T090000Z" {
		t.Fatalf("First = %+v %v", o, ok)
	}
	if _, ok := p.Next(a, o.At, 1); ok {
		t.Fatal("a one-shot schedule fired twice")
	}
}

func TestDefaultZoneIsSeoul(t *testing.T) {
	t.Parallel()
	p := mustCompile(t, heraldtype.Schedule{Cron: "0 9 * * *"}, "")
	if p.Location().String() != "Asia/Seoul" {
		t.Fatalf("zone = %s", p.Location())
	}
	// The schedule's own zone wins over the user's.
	p = mustCompile(t, heraldtype.Schedule{Cron: "0 9 * * *", TimeZone: "Europe/London"}, "America/New_York")
	if p.Location().String() != "Europe/London" {
		t.Fatalf("zone = %s", p.Location())
	}
	if c, w := p.CatchUpPolicy(); c != heraldtype.CatchUpOnce || w != DefaultCatchUpWindow {
		t.Fatalf("defaults: %s %s", c, w)
	}
}

// TestScheduleJSON: the public value type round-trips, durations as Go
// duration strings.
func TestScheduleJSON(t *testing.T) {
	t.Parallel()
	for _, in := range []string{
		`{"at":"2026-12-01T09:00:00Z"}`,
		`{"backoff":{"first":"1h0m0s","factor":2,"max":"48h0m0s"}}`,
		`{"rrule":"FREQ=WEEKLY;BYDAY=MO;BYHOUR=9;BYMINUTE=0","time_zone":"America/New_York","catch_up":"all","catch_up_window":"6h0m0s"}`,
		`{"cron":"0 9 * * *","spread":"10m0s","catch_up":"skip"}`,
	} {
		var s heraldtype.Schedule
		if err := json.Unmarshal([]byte(in), &s); err != nil {
			t.Fatalf("%s: %v", in, err)
		}
		out, err := json.Marshal(s)
		if err != nil || string(out) != in {
			t.Errorf("round trip %s → %s (%v)", in, out, err)
		}
		if _, err := Compile(s, ""); err != nil {
			t.Errorf("%s: %v", in, err)
		}
	}
	var s heraldtype.Schedule
	if err := json.Unmarshal([]byte(`{"backoff":{"first":"1h","factor":2,"max":"48h"},"spread":"10m"}`), &s); err != nil ||
		s.Backoff.First.Std() != time.Hour || s.Backoff.Max.Std() != 48*time.Hour || s.Spread.Std() != 10*time.Minute {
		t.Fatalf("short durations: %+v %v", s, err)
	}
	if err := json.Unmarshal([]byte(`{"cron":"0 9 * * *","spread":null}`), &s); err != nil {
		t.Fatalf("null duration: %v", err)
	}
	for _, bad := range []string{`{"spread":600}`, `{"spread":"ten minutes"}`} {
		if err := json.Unmarshal([]byte(bad), &s); err == nil {
			t.Errorf("%s: accepted", bad)
		}
	}
}
