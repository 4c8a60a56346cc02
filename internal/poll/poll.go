// Package poll is the loop of a worker that claims work from the
// database in rounds (the digest and escalation workers): one round at
// Start, the next after an interval, or at once when a round was full and
// more is probably due; Stop ends it after the round in hand.
package poll

import (
	"context"
	"sync"
	"time"
)

// Round claims and handles one batch; full reports that it took as much
// as a batch may hold, so the next round runs at once. It logs its own
// errors.
type Round func(ctx context.Context) (full bool)

// Loop runs a Round until stopped. The zero value is not usable: New.
type Loop struct {
	interval time.Duration
	round    Round

	mu     sync.Mutex
	cancel context.CancelFunc
	done   chan struct{}
}

// New makes a loop running round every interval.
func New(interval time.Duration, round Round) *Loop {
	return &Loop{interval: interval, round: round}
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

// Stop ends the loop after the round in hand, or when ctx ends.
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

func (l *Loop) run(ctx context.Context, done chan struct{}) {
	defer close(done)
	t := time.NewTimer(0)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		wait := l.interval
		if l.round(ctx) {
			wait = 0
		}
		t.Reset(wait)
	}
}
