package schedule

import (
	"testing"
	"time"
)

// A local-time campaign at 09:00 runs when UTC+14 reaches 09:00 and each
// user's 09:00 is that wall time in the user's zone, DST rules included.
func TestLocalInstant(t *testing.T) {
	early, err := LoadZone("zone", EarliestZone)
	if err != nil {
		t.Fatal(err)
	}
	occurrence := time.Date(2026, 3, 7, 19, 0, 0, 0, time.UTC) // 09:00 on 8 March in UTC+14
	wall := WallClock(occurrence, early)
	if want := time.Date(2026, 3, 8, 9, 0, 0, 0, time.UTC); !wall.Equal(want) {
		t.Fatalf("wall = %v, want %v", wall, want)
	}
	for _, c := range []struct {
		zone string
		want time.Time
	}{
		{"Asia/Seoul", time.Date(2026, 3, 8, 0, 0, 0, 0, time.UTC)},
		{"Europe/London", time.Date(2026, 3, 8, 9, 0, 0, 0, time.UTC)},
		{"America/New_York", time.Date(2026, 3, 8, 13, 0, 0, 0, time.UTC)}, // EDT from 02:00 that day
		{"Pacific/Kiritimati", occurrence},
		{"Pacific/Pago_Pago", time.Date(2026, 3, 8, 20, 0, 0, 0, time.UTC)},
	} {
		loc, err := LoadZone("zone", c.zone)
		if err != nil {
			t.Fatal(err)
		}
		got := LocalInstant(wall, loc)
		if !got.Equal(c.want) {
			t.Errorf("%s: %v, want %v", c.zone, got, c.want)
		}
		if got.Before(occurrence) {
			t.Errorf("%s: %v is before the run's start %v", c.zone, got, occurrence)
		}
	}
	// 02:30 does not exist in New York on 8 March 2026: moved forward by the gap.
	ny, _ := LoadZone("zone", "America/New_York")
	if got, want := LocalInstant(time.Date(2026, 3, 8, 2, 30, 0, 0, time.UTC), ny), time.Date(2026, 3, 8, 7, 30, 0, 0, time.UTC); !got.Equal(want) {
		t.Errorf("gap: %v, want %v", got, want)
	}
}
