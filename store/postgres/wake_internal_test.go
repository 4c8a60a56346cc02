package postgres

import (
	"context"
	"slices"
	"sync"
	"testing"
)

// The waker coalesces wakes posted while a NOTIFY is in flight into one
// next NOTIFY that starts after them, and Close waits for it.
func TestWakerCoalesces(t *testing.T) {
	var mu sync.Mutex
	var sent []wake
	release := make(chan struct{})
	started := make(chan struct{}, 10)
	w := &waker{send: func(_ context.Context, wk wake) error {
		started <- struct{}{}
		<-release
		mu.Lock()
		sent = append(sent, wk)
		mu.Unlock()
		return nil
	}}
	w.post(wake{})                          // nothing to say: no NOTIFY
	w.post(wake{inboxUsers: []string{"a"}}) // starts the first
	<-started                               // in flight
	w.post(wake{deliveries: true})          // these three merge
	w.post(wake{inboxUsers: []string{"c", "b"}})
	w.post(wake{inboxUsers: []string{"b"}})
	close(release)
	w.close()
	w.post(wake{deliveries: true}) // after close: dropped
	w.done.Wait()
	if len(sent) != 2 {
		t.Fatalf("sent %d NOTIFYs (%+v), want 2", len(sent), sent)
	}
	if sent[0].deliveries || !slices.Equal(sent[0].inboxUsers, []string{"a"}) {
		t.Fatalf("first NOTIFY = %+v", sent[0])
	}
	if !sent[1].deliveries || !slices.Equal(sent[1].inboxUsers, []string{"b", "c"}) {
		t.Fatalf("coalesced NOTIFY = %+v, want deliveries and users b, c", sent[1])
	}
}
