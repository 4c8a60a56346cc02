package schedule

import (
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/heraldhq/herald/heraldtype"
)

// TestSpread: a fleet-wide due time is spread uniformly and
// deterministically over the window (issue 19 item 5).
func TestSpread(t *testing.T) {
	t.Parallel()
	const window = 10 * time.Minute
	buckets := make([]int, 10)
	for i := range 20000 {
		key := "reminder-" + strings.Repeat("x", i%3) + string(rune('a'+i%26)) + time.Duration(i).String()
		off := Spread(key, "20261201T000000Z", window)
		if off < 0 || off >= window || off%time.Second != 0 {
			t.Fatalf("offset %s out of [0, %s) or not whole seconds", off, window)
		}
		if off != Spread(key, "20261201T000000Z", window) {
			t.Fatal("spread is not deterministic")
		}
		buckets[off/time.Minute]++
	}
	for i, n := range buckets {
		if n < 1600 || n > 2400 {
			t.Errorf("minute %d holds %d of 20000 (want about 2000): %v", i, n, buckets)
		}
	}
	differs := 0
	for d := range 50 {
		occ := time.Date(2026, 12, 1+d, 0, 0, 0, 0, time.UTC).Format("20060102T150405Z")
		if Spread("r1", occ, window) != Spread("r1", "20261201T000000Z", window) {
			differs++
		}
	}
	if differs < 40 {
		t.Errorf("a key's offset should vary by occurrence; differs on %d of 50 days", differs)
	}
	if Spread("r1", "x", 0) != 0 || Spread("r1", "x", -time.Second) != 0 {
		t.Error("no window, no offset")
	}
	p := mustCompile(t, heraldtype.Schedule{Cron: "0 9 * * *", Spread: heraldtype.Duration(window)}, "Asia/Seoul")
	o, _ := p.First(Anchor{Key: "r1", Start: time.Date(2026, 11, 30, 0, 0, 0, 0, time.UTC)}, 0)
	if o.Due.Sub(o.At) != Spread("r1", o.ID(), window) {
		t.Fatalf("Due %s At %s", o.Due, o.At)
	}
}

// TestJitterAndAvoid: a colliding occurrence of one user moves by a
// deterministic, bounded jitter (S2.5), no random retry loop.
func TestJitterAndAvoid(t *testing.T) {
	t.Parallel()
	const gap = time.Minute
	for i := range 1000 {
		occ := time.Duration(i).String()
		j := Jitter("u1", occ, gap)
		if j < 0 || j >= gap || j != Jitter("u1", occ, gap) {
			t.Fatalf("jitter %s", j)
		}
	}
	if Jitter("u1", "o", 0) != 0 {
		t.Fatal("no gap, no jitter")
	}
	base := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	rng := rand.New(rand.NewPCG(19, 5))
	for range 2000 {
		var taken []time.Time
		for range rng.IntN(8) {
			taken = append(taken, base.Add(time.Duration(rng.IntN(600))*time.Second))
		}
		due := base.Add(time.Duration(rng.IntN(600)) * time.Second)
		got := Avoid(due, taken, gap, "u1", "occ")
		if got.Before(due) || got.After(due.Add(3*gap*time.Duration(len(taken)))) {
			t.Fatalf("Avoid(%s, %v) = %s: out of bounds", due, taken, got)
		}
		for _, x := range taken {
			if d := got.Sub(x); d > -gap && d < gap {
				t.Fatalf("Avoid(%s, %v) = %s collides with %s", due, taken, got, x)
			}
		}
		if !got.Equal(Avoid(due, taken, gap, "u1", "occ")) {
			t.Fatal("Avoid is not deterministic")
		}
	}
	if got := Avoid(base, []time.Time{base.Add(5 * time.Minute)}, gap, "u1", "o"); !got.Equal(base) {
		t.Fatalf("no collision, no move: %s", got)
	}
}
