package poll

import (
	"context"
	"errors"
	"log/slog"
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

// A paced loop waits what its round asked for, Notify cuts that wait
// short, and Stop returns only after the exit hook (what the rounds
// started) has run.
func TestPacedNotifyAndExit(t *testing.T) {
	rounds := make(chan struct{}, 10)
	exited := make(chan struct{})
	l := NewPaced(func(ctx context.Context) time.Duration {
		rounds <- struct{}{}
		return time.Hour
	}, func() { close(exited) })
	l.Start(t.Context())
	<-rounds // the round at Start
	select {
	case <-rounds:
		t.Fatal("a second round ran before the hour's wait or a Notify")
	case <-time.After(20 * time.Millisecond):
	}
	l.Notify()
	select {
	case <-rounds:
	case <-time.After(10 * time.Second):
		t.Fatal("Notify did not wake the loop")
	}
	if err := l.Stop(context.Background()); err != nil {
		t.Fatal(err)
	}
	select {
	case <-exited:
	default:
		t.Fatal("Stop returned before the exit hook ran")
	}
}

// A Notify that comes while a round runs is not lost: the next round
// starts as soon as that one ends, not after the wait it asked for (a
// webhook send group that ends mid-claim wakes the dispatcher this way).
func TestNotifyDuringARound(t *testing.T) {
	rounds := make(chan struct{}, 10)
	inRound, release := make(chan struct{}), make(chan struct{})
	var n atomic.Int32
	l := NewPaced(func(ctx context.Context) time.Duration {
		if n.Add(1) == 1 {
			close(inRound)
			<-release
		}
		rounds <- struct{}{}
		return time.Hour
	}, nil)
	l.Start(t.Context())
	<-inRound
	l.Notify()
	close(release)
	for i := range 2 {
		select {
		case <-rounds:
		case <-time.After(10 * time.Second):
			t.Fatalf("round %d did not run: the Notify during the first was lost", i+1)
		}
	}
	if err := l.Stop(context.Background()); err != nil {
		t.Fatal(err)
	}
}

// ClaimRound is full only when runOnce took a whole batch without error,
// and logs a failed claim.
func TestClaimRound(t *testing.T) {
	var logged atomic.Int32
	logger := slog.New(slog.NewTextHandler(countWriter{&logged}, nil))
	for _, c := range []struct {
		n    int
		err  error
		full bool
		logs int32
	}{{3, nil, true, 0}, {2, nil, false, 0}, {3, errors.New("down"), false, 1}} {
		logged.Store(0)
		r := ClaimRound(3, func(context.Context) (int, error) { return c.n, c.err }, logger, "test")
		if got := r(t.Context()); got != c.full || logged.Load() != c.logs {
			t.Errorf("runOnce %d, %v: full %v with %d log lines, want %v with %d", c.n, c.err, got, logged.Load(), c.full, c.logs)
		}
	}
}

type countWriter struct{ n *atomic.Int32 }

func (w countWriter) Write(p []byte) (int, error) { w.n.Add(1); return len(p), nil }
