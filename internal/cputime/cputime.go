// Package cputime reports the CPU time a benchmark's operations cost, next
// to the wall time go test prints: on a machine whose cores are shared by
// Herald, PostgreSQL and the provider emulators (issue 6's targets), CPU
// per delivery is what bounds deliveries/s, and a parallel benchmark's
// ns/op hides it.
package cputime

import (
	"syscall"
	"testing"
	"time"
)

// Process is this process's user + system CPU time so far (getrusage).
func Process() (time.Duration, error) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0, err
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()), nil
}

// Report starts measuring; the function it returns reports the process's
// CPU time per operation since then as the metric "cpu-µs/op". Call it
// (deferred) after the benchmark's loop.
func Report(b *testing.B) func() {
	start, err := Process()
	if err != nil {
		b.Fatal(err)
	}
	return func() {
		end, err := Process()
		if err != nil {
			b.Fatal(err)
		}
		if b.N > 0 {
			b.ReportMetric(float64((end-start).Nanoseconds())/1e3/float64(b.N), "cpu-µs/op")
		}
	}
}
