package cputime

import (
	"testing"
	"time"
)

// TestProcessAdvances: CPU time grows while this process computes.
func TestProcessAdvances(t *testing.T) {
	a, err := Process()
	if err != nil {
		t.Fatal(err)
	}
	x := 0
	for start := time.Now(); time.Since(start) < 50*time.Millisecond; {
		x++
	}
	b, err := Process()
	if err != nil || b <= a {
		t.Fatalf("CPU time went from %v to %v (%v) after busy work (%d)", a, b, err, x)
	}
}

func BenchmarkReport(b *testing.B) {
	defer Report(b)()
	x := 0
	for b.Loop() {
		x++
	}
	_ = x
}
