package poll

import (
	"context"
	"sync/atomic"
	"testing"
	"time"
)

// A full round is followed at once by the next; a round that was not
// full waits for the interval; Stop waits for the round in hand and a
// second Start or Stop does nothing.
func TestLoop(t *testing.T) {
	var rounds atomic.Int32
	release := make(chan struct{})
	l := New(time.Hour, func(ctx context.Context) bool {
		n := rounds.Add(1)
		if n == 3 {
			<-release // the round in hand when Stop comes
		}
		return n < 3 // two full rounds, then one that is not
	})
	l.Start(t.Context())
	l.Start(t.Context())
	deadline := time.Now().Add(10 * time.Second)
	for rounds.Load() < 3 && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	if n := rounds.Load(); n != 3 {
		t.Fatalf("%d rounds, want the two full ones followed at once by a third", n)
	}
	stopped := make(chan error, 1)
	go func() { stopped <- l.Stop(context.Background()) }()
	select {
	case err := <-stopped:
		t.Fatalf("Stop returned (%v) during a round", err)
	case <-time.After(20 * time.Millisecond):
	}
	close(release)
	if err := <-stopped; err != nil {
		t.Fatal(err)
	}
	if n := rounds.Load(); n != 3 {
		t.Fatalf("%d rounds after Stop; the hour's wait had not ended", n)
	}
	if err := l.Stop(context.Background()); err != nil {
		t.Fatalf("second Stop: %v", err)
	}
}

// Stop gives up when its context ends before the round does.
func TestStopHonoursItsContext(t *testing.T) {
	release := make(chan struct{})
	defer close(release)
	started := make(chan struct{})
	l := New(time.Hour, func(ctx context.Context) bool {
		close(started)
		<-release
		return false
	})
	l.Start(t.Context())
	<-started
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Millisecond)
	defer cancel()
	if err := l.Stop(ctx); err != context.DeadlineExceeded {
		t.Fatalf("Stop = %v, want the context's deadline", err)
	}
}
