package schedule

import (
	"strings"
	"testing"
	"time"

	"github.com/heraldhq/herald/heraldtype"
)

// TestImmediately is issue 30 item 6 (S2.3's next = now): with
// immediately, the first occurrence is the registration itself, due at
// once whatever the spread, and the schedule goes on from there; a
// backoff's wait after it is its first interval (the immediate send does
// not grow it).
func TestImmediately(t *testing.T) {
	t.Parallel()
	start := local(t, "Asia/Seoul", "2026-11-25 10:00").Add(1500 * time.Millisecond)
	backoff := &heraldtype.Backoff{First: heraldtype.Duration(time.Hour), Factor: 2, Max: heraldtype.Duration(48 * time.Hour)}
	cases := []struct {
		name string
		s    heraldtype.Schedule
		want []string
	}{
		{"rrule", heraldtype.Schedule{Immediately: true, RRule: "FREQ=DAILY;BYHOUR=9;BYMINUTE=0", Spread: heraldtype.Duration(time.Hour)},
			[]string{"2026-11-25 10:00 +0900", "2026-11-26 09:", "2026-11-27 09:"}},
		{"cron", heraldtype.Schedule{Immediately: true, Cron: "0 9 * * *"},
			[]string{"2026-11-25 10:00 +0900", "2026-11-26 09:00 +0900", "2026-11-27 09:00 +0900"}},
		{"at", heraldtype.Schedule{Immediately: true, At: start.Add(24 * time.Hour)},
			[]string{"2026-11-25 10:00 +0900", "2026-11-26 10:00 +0900", "end"}},
		{"backoff", heraldtype.Schedule{Immediately: true, Backoff: backoff},
			[]string{"2026-11-25 10:00 +0900", "2026-11-25 11:00 +0900", "2026-11-25 13:00 +0900", "2026-11-25 17:00 +0900"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			p := mustCompile(t, c.s, "Asia/Seoul")
			a := Anchor{Key: "r1", Start: start}
			first, ok := p.First(a, 0)
			if !ok || !first.Due.Equal(start.Truncate(time.Second)) || !first.At.Equal(first.Due) {
				t.Fatalf("first = %+v, %v; want due at %s", first, ok, start)
			}
			got := occurrences(t, p, a, len(c.want))
			for i, w := range c.want {
				if !strings.HasPrefix(got[i], w) {
					t.Fatalf("got %v, want %v", got, c.want)
				}
			}
		})
	}
	// An update keeps sent_count: the immediate send is the next one, and
	// the wait after it is the interval the update would have waited.
	p := mustCompile(t, heraldtype.Schedule{Immediately: true, Backoff: backoff}, "")
	a := Anchor{Key: "r1", Start: start}
	o, _ := p.First(a, 3)
	if o.Seq != 4 || !o.At.Equal(start.Truncate(time.Second)) {
		t.Fatalf("first after 3 sends = %+v", o)
	}
	if n, _ := p.Next(a, o.At, 4); n.At.Sub(o.At) != 8*time.Hour || n.Seq != 5 {
		t.Fatalf("next after the immediate 4th send = %+v, want 8h later (first·2³), send 5", n)
	}
	// Without immediately nothing changes.
	q := mustCompile(t, heraldtype.Schedule{Backoff: backoff}, "")
	if f, _ := q.First(a, 0); f.At.Sub(start.Truncate(time.Second)) != time.Hour {
		t.Fatalf("backoff first without immediately = %v", f.At)
	}
}

// TestSpacing is issue 31 item 6: a plan with spacing passes over every
// occurrence nearer than it to the previous one — BYSECOND=0..59 fires
// once a minute, not every second — in Next and in a catch-up.
func TestSpacing(t *testing.T) {
	t.Parallel()
	every := "0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20,21,22,23,24,25,26,27,28,29," +
		"30,31,32,33,34,35,36,37,38,39,40,41,42,43,44,45,46,47,48,49,50,51,52,53,54,55,56,57,58,59"
	s := heraldtype.Schedule{RRule: "FREQ=DAILY;BYHOUR=9;BYMINUTE=0,1,2;BYSECOND=" + every}
	plain := mustCompile(t, s, "UTC")
	p := plain.WithSpacing(time.Minute)
	if plain.MinSpacing() != time.Second || p.MinSpacing() != time.Second {
		t.Fatalf("MinSpacing = %s", plain.MinSpacing())
	}
	a := Anchor{Key: "r1", Start: time.Date(2026, 11, 25, 8, 0, 0, 0, time.UTC)}
	o, _ := p.First(a, 0)
	var got []string
	for range 4 {
		got = append(got, o.At.Format("15:04:05"))
		o, _ = p.Next(a, o.At, 0)
	}
	if want := "09:00:00 09:01:00 09:02:00 09:00:00"; strings.Join(got, " ") != want {
		t.Fatalf("spaced firings %v, want %s", got, want)
	}
	if n, _ := plain.Next(a, a.Start.Add(time.Hour), 0); n.At.Sub(a.Start) != time.Hour+time.Second {
		t.Fatalf("without spacing the next is a second later: %v", n.At)
	}
	// A catch-up under "all" after ten minutes' downtime fires the three
	// occurrences a minute apart, not 180.
	all := mustCompile(t, heraldtype.Schedule{RRule: s.RRule, CatchUp: heraldtype.CatchUpAll}, "UTC").WithSpacing(time.Minute)
	due, _ := all.First(a, 0)
	d := all.CatchUp(a, due, 0, a.Start.Add(70*time.Minute))
	if len(d.Fire) != 3 {
		t.Fatalf("catch-up fired %d: %v", len(d.Fire), ids(d.Fire))
	}
	// A backoff waits out the spacing, keeping its send number.
	b := mustCompile(t, heraldtype.Schedule{Backoff: &heraldtype.Backoff{First: heraldtype.Duration(time.Minute), Factor: 1,
		Max: heraldtype.Duration(time.Minute)}}, "UTC").WithSpacing(5 * time.Minute)
	if n, _ := b.Next(a, a.Start, 1); n.At.Sub(a.Start) != 5*time.Minute || n.Seq != 2 {
		t.Fatalf("spaced backoff next = %+v", n)
	}
}

// TestMinSpacing checks the static spacing save-time checks compare with
// the reminders' gap.
func TestMinSpacing(t *testing.T) {
	t.Parallel()
	backoff := &heraldtype.Backoff{First: heraldtype.Duration(2 * time.Minute), Factor: 2, Max: heraldtype.Duration(time.Hour)}
	for _, c := range []struct {
		s    heraldtype.Schedule
		want time.Duration
	}{
		{heraldtype.Schedule{RRule: "FREQ=DAILY;BYHOUR=9;BYMINUTE=0"}, 0},
		{heraldtype.Schedule{RRule: "FREQ=DAILY;BYHOUR=9,21"}, 12 * time.Hour},
		{heraldtype.Schedule{RRule: "FREQ=DAILY;BYMINUTE=15,40"}, 25 * time.Minute},
		{heraldtype.Schedule{RRule: "FREQ=DAILY;BYHOUR=9;BYMINUTE=0;BYSECOND=0,30"}, 30 * time.Second},
		{heraldtype.Schedule{Cron: "* * * * *"}, time.Minute},
		{heraldtype.Schedule{Cron: "*/15 9-17 * * MON-FRI"}, 15 * time.Minute},
		{heraldtype.Schedule{Cron: "@daily"}, 0},
		{heraldtype.Schedule{Backoff: backoff}, 2 * time.Minute},
		{heraldtype.Schedule{At: time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)}, 0},
	} {
		if got := mustCompile(t, c.s, "UTC").MinSpacing(); got != c.want {
			t.Errorf("%+v: MinSpacing %s, want %s", c.s, got, c.want)
		}
	}
}
