package fault

import (
	"testing"
	"time"
)

func TestNotBefore(t *testing.T) {
	t.Parallel()
	now := time.Date(2025, 1, 2, 3, 4, 5, 600_000_000, time.UTC)
	var n NotBefore // the zero value is ready
	if n.Early("a", now) {
		t.Fatal("Early with nothing noted")
	}
	n.Note("a", now, 0, false) // no Retry-After: nothing to honour
	if n.Early("a", now) {
		t.Fatal("Early after a Note without Retry-After")
	}
	n.Note("a", now, 10, false)
	if !n.Early("a", now.Add(9*time.Second)) || n.Early("a", now.Add(10*time.Second)) {
		t.Fatal("deadline is not now+10s")
	}
	n.Note("a", now, 2, false) // a shorter wait does not shorten the deadline
	if !n.Early("a", now.Add(9*time.Second)) {
		t.Fatal("a shorter Retry-After shortened the deadline")
	}
	if n.Early("b", now) {
		t.Fatal("deadlines leak between keys")
	}
	// An HTTP-date says whole seconds: a sender waiting until the date it
	// was told is not early.
	n.Note("d", now, 1, true)
	if n.Early("d", now.Add(400*time.Millisecond)) {
		t.Fatal("HTTP-date deadline not truncated to the second")
	}
	n.Reset()
	if n.Early("a", now) {
		t.Fatal("Early after Reset")
	}
}
