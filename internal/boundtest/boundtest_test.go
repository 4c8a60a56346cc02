package boundtest

import (
	"strings"
	"testing"
	"time"
)

// TestBoundsHold: a child that takes memory without end, or never ends,
// fails with a message — the test binary that runs it lives on.
func TestBoundsHold(t *testing.T) {
	t.Parallel()
	b := Bounds{MaxHeap: 64 << 20, Timeout: 2 * time.Second}
	for name, want := range map[string]string{
		"TestHostileHeap": "past its bound of 64 MiB",
		"TestHostileSpin": "did not end within",
	} {
		out, err := Child(t.Context(), name, b)
		if err == nil || !strings.Contains(err.Error()+string(out), want) {
			t.Errorf("%s: %v\n%s", name, err, out)
		}
	}
	if out, err := Child(t.Context(), "TestHostileNone", b); err != nil {
		t.Errorf("a child within its bounds: %v\n%s", err, out)
	}
}

var sink []byte

func TestHostileHeap(t *testing.T) {
	if !InChild(t) {
		t.Skip("run by TestBoundsHold in a child process")
	}
	defer Watch(64 << 20)()
	for x := []byte("0123456789abcdef"); ; x = append(x, x...) {
		sink = x
	}
}

func TestHostileSpin(t *testing.T) {
	if !InChild(t) {
		t.Skip("run by TestBoundsHold in a child process")
	}
	for {
		time.Sleep(time.Millisecond)
	}
}

func TestHostileNone(t *testing.T) {
	if !InChild(t) {
		t.Skip("run by TestBoundsHold in a child process")
	}
	Run(t, Bounds{MaxHeap: 64 << 20, Timeout: time.Second}, func(t *testing.T) { sink = make([]byte, 1<<20) })
}
