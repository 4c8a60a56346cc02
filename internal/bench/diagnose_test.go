package bench

import (
	"strings"
	"sync"
	"testing"
	"time"
)

// TestSummarizeGoroutines groups a real dump: ten goroutines parked on the
// same channel receive are one group of ten.
func TestSummarizeGoroutines(t *testing.T) {
	block := make(chan struct{})
	var done sync.WaitGroup
	for range 10 {
		done.Go(func() { parkedForSummary(block) })
	}
	defer done.Wait()
	defer close(block)

	// A goroutine may not have parked yet when the stacks are taken:
	// take them again until all ten have.
	deadline := time.Now().Add(10 * time.Second)
	for {
		lines := append([]string{"SIGQUIT: quit", "PC=0x0 m=0 sigcode=0", ""}, strings.Split(allStacks(), "\n")...)
		got := summarizeGoroutines(lines)
		if !strings.HasPrefix(got, "SIGQUIT: quit\n") {
			t.Fatalf("the signal header is lost:\n%s", got)
		}
		if strings.Contains(got, "+0x") {
			t.Fatalf("offsets were kept:\n%s", got)
		}
		header := ""
		if i := strings.Index(got, "parkedForSummary"); i >= 0 {
			header = got[strings.LastIndex(got[:i], "\n\n")+2:]
			header = header[:strings.Index(header, "\n")]
		}
		if header == "10 × [chan receive]" {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the parked goroutines' group is %q, want 10 × [chan receive]:\n%s", header, got)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

//go:noinline
func parkedForSummary(c chan struct{}) { <-c }
