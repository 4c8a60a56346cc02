package cputime

import (
	"os"
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

// TestProcessesSelf: this process's CPU time read from /proc grows while
// it computes, and a process that does not exist counts nothing.
func TestProcessesSelf(t *testing.T) {
	a, err := Processes(os.Getpid(), 1<<30)
	if err != nil {
		t.Fatal(err)
	}
	x := 0
	for start := time.Now(); time.Since(start) < 100*time.Millisecond; {
		x++
	}
	b, err := Processes(os.Getpid())
	if err != nil || b <= a {
		t.Fatalf("CPU time went from %v to %v (%v) after busy work (%d)", a, b, err, x)
	}
}
