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
	// The heap child passes 64 MiB within milliseconds on a quiet machine,
	// but under load its collector, held to half the bound, can slow it
	// past 2 s: it gets time enough that only the heap bound ends it.
	heap := Bounds{MaxHeap: b.MaxHeap, Timeout: 60 * time.Second}
	for name, c := range map[string]struct {
		b    Bounds
		want string
	}{
		"TestHostileHeap": {heap, "past its bound of 64 MiB"},
		"TestHostileSpin": {b, "did not end within"},
	} {
		out, err := Child(t.Context(), name, c.b)
		if err == nil || !strings.Contains(err.Error()+string(out), c.want) {
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
