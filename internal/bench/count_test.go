package bench

import "testing"

// Issue 22 item 9: the tool's counts are pluralised right.
func TestCount(t *testing.T) {
	for n, want := range map[int]string{0: "0 goroutines", 1: "1 goroutine", 7: "7 goroutines"} {
		if got := count(n, "goroutine", "goroutines"); got != want {
			t.Errorf("count(%d) = %q, want %q", n, got, want)
		}
	}
}
