package emulator

import (
	"testing"
	"time"
)

func TestDefaults(t *testing.T) {
	t.Parallel()
	if n, now := Defaults(0, 100, nil); n != 100 || now == nil {
		t.Errorf("Defaults(0, 100, nil) = %d, clock set %v; want 100 and time.Now", n, now != nil)
	}
	if n, _ := Defaults(-1, 100, nil); n != 100 {
		t.Errorf("Defaults(-1, ...) = %d, want 100", n)
	}
	fixed := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	n, now := Defaults(7, 100, func() time.Time { return fixed })
	if n != 7 || !now().Equal(fixed) {
		t.Errorf("Defaults kept %d, %v; want 7 and the given clock", n, now())
	}
}
