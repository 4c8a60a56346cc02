// Package cputime reports the CPU time a benchmark's operations cost, next
// to the wall time go test prints: on a machine whose cores are shared by
// Herald, PostgreSQL and the provider emulators (issue 6's targets), CPU
// per delivery is what bounds deliveries/s, and a parallel benchmark's
// ns/op hides it.
package cputime

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strconv"
	"strings"
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

// Processes is the user + system CPU time so far of the processes pids
// (for example the PostgreSQL backends serving a benchmark's
// connections), read from /proc/<pid>/stat (Linux). A process that is
// gone counts nothing.
func Processes(pids ...int) (time.Duration, error) {
	var total time.Duration
	for _, pid := range pids {
		b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return 0, err
		}
		// The fields after the command (in parentheses, which may hold
		// spaces): state is field 3, utime 14 and stime 15.
		rest := string(b[bytes.LastIndexByte(b, ')')+1:])
		f := strings.Fields(rest)
		if len(f) < 13 {
			return 0, fmt.Errorf("cputime: /proc/%d/stat: %d fields", pid, len(f))
		}
		for _, s := range f[11:13] {
			ticks, err := strconv.ParseInt(s, 10, 64)
			if err != nil {
				return 0, fmt.Errorf("cputime: /proc/%d/stat: %w", pid, err)
			}
			total += time.Duration(ticks) * time.Second / userHZ
		}
	}
	return total, nil
}

// userHZ is the unit of the times in /proc/<pid>/stat: USER_HZ, 100 on
// every architecture Linux exports it for (sysconf(_SC_CLK_TCK) needs cgo).
const userHZ = 100
