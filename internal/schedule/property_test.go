package schedule

import (
	"archive/zip"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/heraldhq/herald/heraldtype"
)

// propertyRules are evaluated around DST transitions in every zone: the
// half-hours and hours that gaps and overlaps hit, midnight (zones that
// change at midnight), and the Sunday 02:00 most transitions fall on.
var propertyRules = []heraldtype.Schedule{
	{Cron: "*/30 * * * *"},
	{Cron: "30 2 * * *"},
	{Cron: "0 0 * * *"},
	{Cron: "15,45 0-3 * * *"},
	{RRule: "FREQ=DAILY;BYHOUR=0,1,2,3;BYMINUTE=0,30"},
	{RRule: "FREQ=WEEKLY;BYDAY=SU;BYHOUR=2;BYMINUTE=0"},
	{RRule: "FREQ=MONTHLY;BYDAY=-1SU;BYHOUR=1,2;BYMINUTE=30"},
}

// TestEveryZoneAroundTransitions is issue 19 item 2's property test: in
// every zone of Go's tz database, around seeded samples of its transitions
// from 1970 to 2037, stepping Next through each rule never fails, fires in
// strictly increasing order, never fires one occurrence twice, shows each
// firing's nominal wall time (or, in a gap, the wall time moved forward by
// the gap) and loses no wall time: each one's instant fired. HERALD_SCHEDULE_FULL=1 checks every transition instead of
// a sample (about 60,000 of them; minutes, not seconds).
func TestEveryZoneAroundTransitions(t *testing.T) {
	t.Parallel()
	zones := tzNames(t)
	if len(zones) < 300 {
		t.Fatalf("only %d zones found in the tz database", len(zones))
	}
	full := os.Getenv("HERALD_SCHEDULE_FULL") != ""
	perZone := 2
	if testing.Short() {
		perZone = 1
	}
	rng := rand.New(rand.NewPCG(19, 7))
	from := time.Date(1970, 1, 1, 0, 0, 0, 0, time.UTC)
	to := time.Date(2037, 12, 31, 0, 0, 0, 0, time.UTC)
	checked, transitions := 0, 0
	for _, zone := range zones {
		loc, err := time.LoadLocation(zone)
		if err != nil {
			continue
		}
		ts := transitionsOf(loc, from, to)
		transitions += len(ts)
		if !full && len(ts) > perZone {
			rng.Shuffle(len(ts), func(i, j int) { ts[i], ts[j] = ts[j], ts[i] })
			ts = ts[:perZone]
		}
		if len(ts) == 0 {
			ts = []time.Time{from.AddDate(rng.IntN(68), 0, rng.IntN(365))}
		}
		for _, tr := range ts {
			for _, s := range propertyRules {
				p := mustCompile(t, s, zone)
				a := Anchor{Key: "prop", Start: tr.Add(-30 * time.Hour)}
				checkSteps(t, p, a, tr.Add(30*time.Hour))
			}
			checked++
		}
	}
	t.Logf("%d zones, %d transitions 1970–2037, %d checked × %d rules (HERALD_SCHEDULE_FULL=1 for all)",
		len(zones), transitions, checked, len(propertyRules))
}

// TestDecadesOfFirings steps schedules from 1970 to 2037 in zones with
// unusual rules: 30-minute DST (Lord Howe), 45-minute offsets (Chatham),
// midnight transitions (São Paulo), a skipped day (Apia), and the four
// zones of the tables — weekly on Sunday, the day most transitions fall
// on, at midnight (RRULE) and 02:30 (cron), and daily in two zones.
func TestDecadesOfFirings(t *testing.T) {
	t.Parallel()
	weekly := []heraldtype.Schedule{{RRule: "FREQ=WEEKLY;BYDAY=SU;BYHOUR=0;BYMINUTE=0"}, {Cron: "30 2 * * 0"}}
	daily := []heraldtype.Schedule{{RRule: "FREQ=DAILY;BYHOUR=2;BYMINUTE=30"}}
	cases := map[string][]heraldtype.Schedule{
		"Asia/Seoul": weekly, "Europe/London": weekly, "Pacific/Chatham": weekly,
		"America/Sao_Paulo": weekly, "Pacific/Apia": weekly,
		"America/New_York":    append(daily, weekly...),
		"Australia/Lord_Howe": append(daily, weekly...),
	}
	from := time.Date(1970, 1, 1, 0, 0, 0, 0, time.UTC)
	to := time.Date(2037, 12, 31, 0, 0, 0, 0, time.UTC)
	for zone, rules := range cases {
		for _, s := range rules {
			p := mustCompile(t, s, zone)
			min := 3500 // 68 years of weeks
			if s.RRule != "" && strings.Contains(s.RRule, "DAILY") {
				min = 24800
			}
			if n := checkSteps(t, p, Anchor{Key: "decades", Start: from}, to); n < min {
				t.Errorf("%s %+v: only %d firings in 68 years", zone, s, n)
			}
		}
	}
}

// checkSteps steps p from a.Start to until and checks every firing; it
// returns how many there were.
func checkSteps(t *testing.T, p *Plan, a Anchor, until time.Time) int {
	t.Helper()
	loc := p.Location()
	var fired []Occurrence
	ids := map[string]bool{}
	o, ok := p.First(a, 0)
	for ok && !o.At.After(until) {
		if n := len(fired); n > 0 && !o.At.After(fired[n-1].At) {
			t.Fatalf("%s %+v: %s fired after %s", loc, p.kind, o.At, fired[n-1].At)
		}
		if ids[o.ID()] {
			t.Fatalf("%s: occurrence %s fired twice", loc, o.ID())
		}
		ids[o.ID()] = true
		shown := floating(o.At.In(loc))
		if !o.Shifted && !shown.Equal(o.Wall) {
			t.Fatalf("%s: fired at %s (wall %s), nominal wall %s", loc, o.At, shown, o.Wall)
		}
		if o.Shifted {
			// The wall time no instant shows, moved forward by the gap:
			// the offset after the transition minus the one before.
			start, _ := o.At.In(loc).ZoneBounds()
			_, before := start.Add(-time.Second).In(loc).Zone()
			_, after := o.At.In(loc).Zone()
			if gap := time.Duration(after-before) * time.Second; gap <= 0 || !shown.Equal(o.Wall.Add(gap)) {
				t.Fatalf("%s: gap firing at %s shows %s for nominal %s (gap %s)", loc, o.At, shown, o.Wall, gap)
			}
			for d := -48 * time.Hour; d <= 48*time.Hour; d += 15 * time.Minute {
				if _, off := o.At.Add(d).In(loc).Zone(); floating(o.Wall.Add(-time.Duration(off) * time.Second).In(loc)).Equal(o.Wall) {
					t.Fatalf("%s: %s marked as in a gap but it is shown", loc, o.Wall)
				}
			}
		}
		fired = append(fired, o)
		o, ok = p.Next(a, o.At, len(fired))
	}
	if !ok {
		t.Fatalf("%s %+v: schedule ended", loc, p.kind)
	}
	if len(fired) == 0 {
		return 0
	}
	// Completeness (RFC 5545, issue 30 item 6): every nominal wall time in
	// the span maps onto an instant that fired — its own firing, or, for a
	// gap's shifted wall time that meets a real one, the one they share.
	firstWall := fired[0].Wall
	lastWall := fired[len(fired)-1].Wall
	var rule boundRule
	if p.rule != nil {
		p.rule.bind(floating(a.Start.In(loc)), &rule)
	}
	firedAt := map[time.Time]bool{}
	for _, f := range fired {
		firedAt[f.At] = true
	}
	for w := firstWall.Add(-time.Second); ; {
		var more bool
		if p.rule != nil {
			w, more = rule.next(w)
		} else {
			w, more = cronNext(p.cron, w)
		}
		if !more || w.After(lastWall) {
			break
		}
		if at, _ := resolve(w, loc); !firedAt[at] && !at.After(fired[len(fired)-1].At) {
			t.Fatalf("%s: nominal wall time %s (%s) never fired", loc, w, at)
		}
	}
	return len(fired)
}

// transitionsOf returns loc's transitions between from and to.
func transitionsOf(loc *time.Location, from, to time.Time) []time.Time {
	var out []time.Time
	t := from.In(loc)
	for {
		_, end := t.ZoneBounds()
		if end.IsZero() || end.After(to) {
			return out
		}
		out = append(out, end)
		t = end
	}
}

// tzNames lists the zones of Go's own tz database (GOROOT's
// lib/time/zoneinfo.zip), the names Herald can be given.
func tzNames(t *testing.T) []string {
	t.Helper()
	goroot := runtime.GOROOT()
	if out, err := exec.Command("go", "env", "GOROOT").Output(); err == nil {
		goroot = strings.TrimSpace(string(out))
	}
	z, err := zip.OpenReader(filepath.Join(goroot, "lib", "time", "zoneinfo.zip"))
	if err != nil {
		t.Fatal(err)
	}
	defer z.Close()
	var names []string
	for _, f := range z.File {
		if !strings.HasSuffix(f.Name, "/") {
			names = append(names, f.Name)
		}
	}
	slices.Sort(names)
	return names
}
