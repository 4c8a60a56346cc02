package bench

import (
	"runtime"
	"strings"
	"sync"
	"testing"
)

// TestSummarizeGoroutines groups a real dump: ten goroutines parked on the
// same channel receive are one group of ten.
func TestSummarizeGoroutines(t *testing.T) {
	block := make(chan struct{})
	var started, done sync.WaitGroup
	for range 10 {
		started.Add(1)
		done.Add(1)
		go func() {
			defer done.Done()
			started.Done()
			parkedForSummary(block)
		}()
	}
	started.Wait()
	buf := make([]byte, 1<<20)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) {
			buf = buf[:n]
			break
		}
		buf = make([]byte, 2*len(buf))
	}
	close(block)
	done.Wait()

	lines := append([]string{"SIGQUIT: quit", "PC=0x0 m=0 sigcode=0", ""}, strings.Split(string(buf), "\n")...)
	got := summarizeGoroutines(lines)
	if !strings.HasPrefix(got, "SIGQUIT: quit\n") {
		t.Errorf("the signal header is lost:\n%s", got)
	}
	i := strings.Index(got, "parkedForSummary")
	if i < 0 {
		t.Fatalf("no parked group:\n%s", got)
	}
	header := got[strings.LastIndex(got[:i], "\n\n")+2:]
	header = header[:strings.Index(header, "\n")]
	if header != "10 × [chan receive]" {
		t.Errorf("the parked goroutines' group is %q, want 10 × [chan receive]:\n%s", header, got)
	}
	if strings.Contains(got, "+0x") {
		t.Errorf("offsets were kept:\n%s", got)
	}
}

//go:noinline
func parkedForSummary(c chan struct{}) { <-c }
