// Package poll is the loop of a worker that claims work from the
// database in rounds (the digest and escalation workers, the webhook
// dispatcher and its pending count): one round at Start, the next after
// the wait the round asks for — at once when a round was full and more is
// probably due — or sooner when Notify wakes it; Stop ends it after the
// round in hand.
package poll

import (
	"context"
	"log/slog"
	"sync"
	"time"
)

// Round claims and handles one batch; full reports that it took as much
// as a batch may hold, so the next round runs at once. It logs its own
// errors.
type Round func(ctx context.Context) (full bool)

// Paced is a Round that says how long to wait before the next one.
type Paced func(ctx context.Context) (wait time.Duration)

// Loop runs a Round until stopped. The zero value is not usable: New or
// NewPaced.
type Loop struct {
	round Paced
	exit  func()
	wake  chan struct{}

	mu     sync.Mutex
	cancel context.CancelFunc
	done   chan struct{}
}

// New makes a loop running round every interval, or at once after a full
// round.
func New(interval time.Duration, round Round) *Loop {
	return NewPaced(func(ctx context.Context) time.Duration {
		if round(ctx) {
			return 0
		}
		return interval
	}, nil)
}

// NewPaced makes a loop running round after the wait its previous call
// returned. exit, if not nil, runs when the loop ends, before Stop
// returns: what the rounds started and must finish (sends in flight).
func NewPaced(round Paced, exit func()) *Loop {
	return &Loop{round: round, exit: exit, wake: make(chan struct{}, 1)}
}

// ClaimRound is the Round of a worker whose runOnce claims and handles at
// most batch items: full when it took a whole batch without error; a
// failed claim is logged (unless the loop is stopping) with what as its
// prefix, and the next round waits for the interval.
func ClaimRound(batch int, runOnce func(context.Context) (int, error), logger *slog.Logger, what string) Round {
	return func(ctx context.Context) bool {
		n, err := runOnce(ctx)
		if err != nil && ctx.Err() == nil {
			logger.Error(what+": a claim failed", "err", err)
		}
		return n == batch && err == nil
	}
}

// Start runs the loop until Stop; a second Start does nothing.
func (l *Loop) Start(ctx context.Context) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.cancel != nil {
		return
	}
	ctx, l.cancel = context.WithCancel(ctx)
	l.done = make(chan struct{})
	go l.run(ctx, l.done)
}

// Stop ends the loop after the round in hand (and its exit), or when ctx
// ends.
func (l *Loop) Stop(ctx context.Context) error {
	l.mu.Lock()
	cancel, done := l.cancel, l.done
	l.cancel = nil
	l.mu.Unlock()
	if cancel == nil {
		return nil
	}
	cancel()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Notify wakes an idle loop for its next round now; a wake that comes
// during a round makes the next one run at once.
func (l *Loop) Notify() {
	select {
	case l.wake <- struct{}{}:
	default:
	}
}

func (l *Loop) run(ctx context.Context, done chan struct{}) {
	defer close(done)
	if l.exit != nil {
		defer l.exit()
	}
	t := time.NewTimer(0)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		case <-l.wake:
		}
		// Reset on a timer still running is safe: since Go 1.23 no value
		// sent before the Reset is received after it.
		t.Reset(l.round(ctx))
	}
}
