package postgres

import (
	"context"
	"fmt"
	"slices"
	"testing"
)

// TestInboxSubCoalesces: ids pushed while the consumer is not reading are
// kept once each, in arrival order, and past maxPendingUsers they become
// one "" — a consumer never blocks the listener, and loses nothing it
// could not recover by checking every user.
func TestInboxSubCoalesces(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	sub := &inboxSub{out: make(chan string), wake: make(chan struct{}, 1)}
	for _, u := range []string{"a", "b", "a", "c", "b"} {
		sub.push(u)
	}
	go sub.pump(ctx)
	var got []string
	for range 3 {
		got = append(got, <-sub.out)
	}
	if !slices.Equal(got, []string{"a", "b", "c"}) {
		t.Fatalf("events = %v, want a b c", got)
	}
	select {
	case u := <-sub.out:
		t.Fatalf("extra event %q", u)
	default:
	}

	// A consumer that stopped reading: past maxPendingUsers the ids
	// become one "", which covers the later ones too.
	stalled := &inboxSub{out: make(chan string), wake: make(chan struct{}, 1)}
	for i := range maxPendingUsers + 1 {
		stalled.push(fmt.Sprint("u", i))
	}
	stalled.push("late")
	go stalled.pump(ctx)
	if u := <-stalled.out; u != "" {
		t.Fatalf("first event after the overflow = %q, want \"\"", u)
	}
	stalled.push("after")
	if u := <-stalled.out; u != "after" {
		t.Fatalf("event after the \"\" = %q, want the next id", u)
	}
	cancel()
	for _, ch := range []chan string{sub.out, stalled.out} {
		if _, ok := <-ch; ok {
			t.Fatal("channel not closed when ctx ended")
		}
	}
}
