package schedule

import (
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/heraldhq/herald/heraldtype"
)

func ids(os []Occurrence) string {
	var s []string
	for _, o := range os {
		s = append(s, o.ID())
	}
	return strings.Join(s, ",")
}

// TestCatchUp is issue 19 item 7: after a downtime each schedule fires per
// its catch_up (skip, once — the default — or all) within its window.
func TestCatchUp(t *testing.T) {
	t.Parallel()
	seoul := mustLoad(t, "Asia/Seoul")
	kst := func(d, h, m int) time.Time { return time.Date(2026, 11, d, h, m, 0, 0, seoul) }
	// Stored: the occurrence of 20 November 09:00; Herald was down until
	// the 23rd at 15:00.
	daily := func(c heraldtype.CatchUp, window time.Duration) *Plan {
		return mustCompile(t, heraldtype.Schedule{Cron: "0 9 * * *", CatchUp: c, CatchUpWindow: heraldtype.Duration(window)}, "Asia/Seoul")
	}
	a := Anchor{Key: "digest-u1", Start: kst(1, 0, 0)}
	cases := []struct {
		name     string
		p        *Plan
		now      time.Time
		fire     string
		next     string
		missed   int
		stopping bool
	}{
		{"once (default) fires the latest within the window", daily("", 0), kst(23, 15, 0),
			"20261123T000000Z", "20261124T000000Z", 3, false},
		{"all fires every one within the window, oldest first", daily(heraldtype.CatchUpAll, 72*time.Hour), kst(23, 15, 0),
			"20261121T000000Z,20261122T000000Z,20261123T000000Z", "20261124T000000Z", 1, false},
		{"skip fires none that is late", daily(heraldtype.CatchUpSkip, 0), kst(23, 15, 0),
			"", "20261124T000000Z", 4, false},
		{"once with nothing in the window fires none", daily(heraldtype.CatchUpOnce, time.Hour), kst(23, 15, 0),
			"", "20261124T000000Z", 4, false},
		{"skip still fires an occurrence that is on time", daily(heraldtype.CatchUpSkip, 0), kst(20, 9, 0).Add(40 * time.Second),
			"20261120T000000Z", "20261121T000000Z", 0, false},
		{"all on time fires just the due one", daily(heraldtype.CatchUpAll, 0), kst(20, 9, 0).Add(time.Second),
			"20261120T000000Z", "20261121T000000Z", 0, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			due, _ := c.p.Next(a, kst(20, 8, 0), 0)
			d := c.p.CatchUp(a, due, 0, c.now)
			if ids(d.Fire) != c.fire || d.Next.ID() != c.next || d.Missed != c.missed || d.Done != c.stopping {
				t.Errorf("fire %q next %s missed %d done %v; want fire %q next %s missed %d done %v",
					ids(d.Fire), d.Next.ID(), d.Missed, d.Done, c.fire, c.next, c.missed, c.stopping)
			}
		})
	}

	t.Run("not yet due: nothing", func(t *testing.T) {
		p := daily("", 0)
		due, _ := p.Next(a, kst(20, 8, 0), 0)
		d := p.CatchUp(a, due, 0, kst(20, 8, 59))
		if len(d.Fire) != 0 || d.Next != due || d.Done {
			t.Fatalf("%+v", d)
		}
	})
	t.Run("one-shot: fired within the window, then done", func(t *testing.T) {
		at := kst(20, 9, 0)
		p := mustCompile(t, heraldtype.Schedule{At: at}, "")
		due, _ := p.First(Anchor{Key: "k", Start: at.Add(-time.Hour)}, 0)
		d := p.CatchUp(a, due, 0, at.Add(3*time.Hour))
		if ids(d.Fire) != "20261120T000000Z" || !d.Done {
			t.Fatalf("%+v", d)
		}
		d = p.CatchUp(a, due, 0, at.Add(25*time.Hour))
		if len(d.Fire) != 0 || !d.Done || d.Missed != 1 {
			t.Fatalf("beyond the window: %+v", d)
		}
	})
	t.Run("backoff: one outstanding occurrence", func(t *testing.T) {
		for _, c := range []struct {
			policy heraldtype.CatchUp
			fire   string
			next   string
			wait   time.Duration
		}{
			{heraldtype.CatchUpOnce, "n3", "n4", 8 * time.Hour},
			{heraldtype.CatchUpAll, "n3", "n4", 8 * time.Hour},
			{heraldtype.CatchUpSkip, "", "n3", 4 * time.Hour},
		} {
			p := mustCompile(t, heraldtype.Schedule{Backoff: backoff("1h", "48h", 2), CatchUp: c.policy}, "")
			start := kst(20, 9, 0)
			due, _ := p.First(Anchor{Key: "cart-42", Start: start}, 2) // two sent
			now := due.Due.Add(5 * time.Hour)
			d := p.CatchUp(Anchor{Key: "cart-42", Start: start}, due, 2, now)
			if ids(d.Fire) != c.fire || d.Next.ID() != c.next || !d.Next.At.Equal(now.Add(c.wait)) || d.Done {
				t.Errorf("%s: fire %q next %s at %s; want fire %q next %s at now+%s", c.policy, ids(d.Fire), d.Next.ID(), d.Next.At, c.fire, c.next, c.wait)
			}
		}
	})
	t.Run("all is capped at MaxCatchUp, the latest, oldest first", func(t *testing.T) {
		p := mustCompile(t, heraldtype.Schedule{Cron: "* * * * *", CatchUp: heraldtype.CatchUpAll}, "UTC")
		start := time.Date(2026, 11, 20, 0, 0, 0, 0, time.UTC)
		due, _ := p.First(Anchor{Start: start}, 0)
		now := start.Add(3 * time.Hour).Add(30 * time.Second)
		d := p.CatchUp(Anchor{Start: start}, due, 0, now)
		if len(d.Fire) != MaxCatchUp || !d.Fire[len(d.Fire)-1].At.Equal(now.Truncate(time.Minute)) ||
			!d.Fire[0].At.Equal(now.Truncate(time.Minute).Add(-(MaxCatchUp-1)*time.Minute)) || d.Missed != 180-MaxCatchUp {
			t.Fatalf("fired %d (%s … %s), missed %d", len(d.Fire), d.Fire[0].At, d.Fire[len(d.Fire)-1].At, d.Missed)
		}
	})
	t.Run("a year down with a minutely schedule is bounded work", func(t *testing.T) {
		p := mustCompile(t, heraldtype.Schedule{Cron: "* * * * *"}, "UTC")
		start := time.Date(2025, 11, 20, 0, 0, 0, 0, time.UTC)
		due, _ := p.First(Anchor{Start: start}, 0)
		now := start.AddDate(1, 0, 0).Add(30 * time.Second)
		d := p.CatchUp(Anchor{Start: start}, due, 0, now)
		if ids(d.Fire) != now.Truncate(time.Minute).Format("20060102T150405Z") || d.Missed < MaxCatchUp*4 {
			t.Fatalf("%s missed %d", ids(d.Fire), d.Missed)
		}
	})
}

// TestCatchUpNeverFiresTwice drives CatchUp like a scheduler that runs at
// random moments — on time, a little late, after long downtimes — across
// DST transitions with spreading, and checks that every occurrence fires at
// most once, in order, never before it is due, and that on-time occurrences
// always fire.
func TestCatchUpNeverFiresTwice(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(19, 11))
	for _, s := range []heraldtype.Schedule{
		{Cron: "*/30 * * * *", Spread: heraldtype.Duration(10 * time.Minute)},
		{Cron: "30 1,2 * * *", CatchUp: heraldtype.CatchUpAll, CatchUpWindow: heraldtype.Duration(6 * time.Hour)},
		{RRule: "FREQ=DAILY;BYHOUR=2;BYMINUTE=30", CatchUp: heraldtype.CatchUpSkip},
		{Backoff: backoff("1h", "48h", 2), Spread: heraldtype.Duration(time.Minute)},
	} {
		p := mustCompile(t, s, "America/New_York")
		a := Anchor{Key: "u1-r1", Start: time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)}
		due, ok := p.First(a, 0)
		sent := 0
		seen := map[string]bool{}
		var last time.Time
		now := a.Start
		for ok && now.Before(a.Start.AddDate(1, 0, 0)) {
			// Wake when due, plus a lag that is usually small.
			lag := time.Duration(rng.IntN(30)) * time.Second
			if rng.IntN(20) == 0 {
				lag = time.Duration(rng.IntN(72)) * time.Hour
			}
			now = due.Due.Add(lag)
			d := p.CatchUp(a, due, sent, now)
			if lag <= OnTime && len(d.Fire) == 0 {
				t.Fatalf("%+v: on-time occurrence %s not fired", s, due.ID())
			}
			for _, f := range d.Fire {
				if seen[f.ID()] {
					t.Fatalf("%+v: %s fired twice", s, f.ID())
				}
				if f.Due.After(now) || !f.At.After(last) {
					t.Fatalf("%+v: %s fired early or out of order", s, f.ID())
				}
				seen[f.ID()], last = true, f.At
			}
			sent += len(d.Fire)
			due, ok = d.Next, !d.Done
			if ok && !due.Due.After(now) && s.Backoff == nil {
				t.Fatalf("%+v: next %s is already due", s, due.ID())
			}
		}
		if len(seen) < 100 {
			t.Fatalf("%+v: only %d firings in a year", s, len(seen))
		}
	}
}
