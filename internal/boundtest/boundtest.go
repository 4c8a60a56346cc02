// Package boundtest runs a test's body in a child process whose heap and
// time are bounded, so a test of hostile input that the code under test
// fails to bound — a template that doubles a string 34 times, a range
// over 9e18 — fails cleanly with a message instead of taking the machine's
// memory or hanging the test binary (issue 31 item 1). The child is the
// test binary itself, re-run for that one test.
package boundtest

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"runtime/debug"
	"runtime/metrics"
	"strings"
	"testing"
	"time"
)

// envVar names, in a child, the test it runs.
const envVar = "HERALD_BOUNDTEST"

// Bounds are a child's: the heap it may reach, and how long it may run.
type Bounds struct {
	// MaxHeap is the most heap the child may hold (bytes of live and not
	// yet collected objects); past it the child exits, failing.
	MaxHeap uint64
	// Timeout is how long the child may run; past it the test binary's
	// own timeout dumps its goroutines, and the child is then killed.
	Timeout time.Duration
}

// Run runs body in a child process under b, and fails t with the child's
// output if the child fails, passes b.MaxHeap or outlives b.Timeout. In
// the child, Run runs body in the same test under a heap watchdog.
func Run(t *testing.T, b Bounds, body func(t *testing.T)) {
	t.Helper()
	if InChild(t) {
		defer Watch(b.MaxHeap)()
		body(t)
		return
	}
	out, err := Child(t.Context(), t.Name(), b)
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
}

// InChild reports whether this process is the child running t.
func InChild(t *testing.T) bool { return os.Getenv(envVar) == t.Name() }

// Child re-runs this test binary for the test named name alone, bounded
// by b, and returns its output and what went wrong.
func Child(ctx context.Context, name string, b Bounds) ([]byte, error) {
	segs := strings.Split(name, "/")
	for i, s := range segs {
		segs[i] = "^" + regexp.QuoteMeta(s) + "$"
	}
	ctx, cancel := context.WithTimeout(ctx, b.Timeout+10*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, os.Args[0], "-test.run="+strings.Join(segs, "/"), "-test.count=1",
		"-test.v", "-test.timeout="+b.Timeout.String())
	cmd.Env = append(os.Environ(), envVar+"="+name)
	out, err := cmd.CombinedOutput()
	switch {
	case ctx.Err() != nil || strings.Contains(string(out), "panic: test timed out"):
		return out, fmt.Errorf("boundtest: %s did not end within %v", name, b.Timeout)
	case err != nil:
		return out, fmt.Errorf("boundtest: %s failed in its child process: %w", name, err)
	case !strings.Contains(string(out), "--- PASS: "+name):
		return out, fmt.Errorf("boundtest: %s did not run in its child process", name)
	}
	return out, nil
}

// Watch exits the process, failing, once its heap passes max; the
// returned func stops watching. The garbage collector is asked to keep
// the heap under half of max (debug.SetMemoryLimit), so only what is
// really held trips it.
func Watch(max uint64) (stop func()) {
	old := debug.SetMemoryLimit(int64(max / 2))
	done := make(chan struct{})
	go func() {
		sample := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
		tick := time.NewTicker(time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-done:
				return
			case <-tick.C:
			}
			metrics.Read(sample)
			if heap := sample[0].Value.Uint64(); heap > max {
				fmt.Fprintf(os.Stderr, "boundtest: the heap reached %d MiB, past its bound of %d MiB\n", heap>>20, max>>20)
				os.Exit(3)
			}
		}
	}()
	return func() {
		close(done)
		debug.SetMemoryLimit(old)
	}
}
