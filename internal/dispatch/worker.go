// Package dispatch is Herald's delivery worker: it claims due deliveries
// from the queue in batches under a lease, sends each through its provider,
// decides from the provider's classified answer whether the delivery is
// sent, retried later or dead, and records the outcomes in batches (S4.2–
// S4.4, DESIGN.md "The queue"). Only this package decides retries; providers
// classify (S0.3).
//
// Guarantees: a delivery is sent only under a lease this worker holds with
// at least SendTimeout + OutcomeMargin left, by the clock read when the send
// is decided; leases of in-flight sends are extended past
// half-life; an outcome is recorded only if the lease is still ours (the
// store checks owner and attempt), so a late worker changes nothing. If the
// process dies between a send and the flush of its outcome, the lease
// expires and the reaper resends an at_least_once delivery or marks an
// at_most_once one unknown (S1.3) — the only duplicate window, absorbed by
// the app's data.messageId check (S0.5).
package dispatch

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"
)

// Worker claims, sends and completes deliveries. Create it with New; run it
// with Start and Stop, or drive it step by step with RunOnce.
type Worker struct {
	cfg       Config
	log       *slog.Logger
	completer *completer
	flights   *flights
	// rollup counts outcomes for the delivery rollup (rollup.go).
	rollup    *rollup
	throttles map[string]*throttle // per provider (scope ""); fixed at New
	scoped    scopedThrottles      // per (provider, scope) of a ThrottleScoper

	// slots holds one token per send in flight (Concurrency).
	slots chan struct{}
	// slotFreed and wake coalesce: a freed send slot, and new work
	// (Notify).
	slotFreed chan struct{}
	wake      chan struct{}
	// maxBacklog bounds outcomes waiting for a flush: while the store
	// cannot keep up, the worker stops claiming instead of buffering
	// without end.
	maxBacklog int
	// sleep waits for a throttle; tests replace it to run without
	// waiting.
	sleep func(ctx context.Context, d time.Duration) bool

	sends sync.WaitGroup // sends started by the claim loop
	// stop counts what the stop did with the sends in flight.
	stop stopCounts

	mu      sync.Mutex
	session *session // set by Start
	stopped bool
	running bool // RunOnce in progress
	missing map[string]bool
}

// session is one Start…Stop run.
type session struct {
	cancelRun, cancelSends, cancelTail context.CancelFunc
	loops, tail                        sync.WaitGroup

	stopOnce sync.Once
	stopReq  chan struct{}
	stopCtx  context.Context // written before stopReq is closed
	done     chan struct{}
	err      error // written before done is closed
}

// New validates cfg, applies its defaults and returns a worker.
func New(cfg Config) (*Worker, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	w := &Worker{
		cfg:        cfg,
		log:        cfg.Logger,
		completer:  newCompleter(cfg.Store, cfg.Logger, cfg.FlushInterval, cfg.FlushSize, cfg.StoreTimeout, cfg.InboxWritten),
		flights:    newFlights(),
		rollup:     newRollup(),
		throttles:  make(map[string]*throttle, len(cfg.Senders)),
		slots:      make(chan struct{}, cfg.Concurrency),
		slotFreed:  make(chan struct{}, 1),
		wake:       make(chan struct{}, 1),
		maxBacklog: 4*cfg.FlushSize + cfg.Concurrency,
		sleep:      sleepCtx,
		missing:    make(map[string]bool),
		scoped:     scopedThrottles{m: make(map[throttleKey]*throttle)},
	}
	for name, s := range cfg.Senders {
		w.throttles[name] = newThrottle()
		cfg.Metrics.DeclareProviders(name)
		if cl, ok := s.(CodeLister); ok {
			cfg.Metrics.DeclareCodes(cl.Codes()...)
		}
	}
	cfg.Metrics.DeclareCodes(heraldCodes...)
	return w, nil
}

// Owner returns the lease owner id of this worker.
func (w *Worker) Owner() string { return w.cfg.Owner }

// Start launches the worker's loops: the claim loop, the outcome flusher,
// the lease heartbeat and the queue depth gauge refresher. It returns at
// once. Expired leases are reclaimed by the elected leader
// (internal/maintenance), not by the worker.
//
// ctx bounds the worker's life. Cancelling it is an abort, not a graceful
// stop: claiming stops, in-flight sends are cancelled and their outcomes
// left to the lease reaper, and buffered outcomes get one last bounded
// flush. Use Stop to stop gracefully.
func (w *Worker) Start(ctx context.Context) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	switch {
	case w.stopped:
		return errors.New("dispatch: worker was stopped; create a new one")
	case w.session != nil:
		return errors.New("dispatch: worker already started")
	case w.running:
		return errors.New("dispatch: RunOnce is in progress")
	}
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("dispatch: start: %w", err)
	}
	s := &session{stopReq: make(chan struct{}), done: make(chan struct{})}
	runCtx, cancelRun := context.WithCancel(ctx)
	sendCtx, cancelSends := context.WithCancel(ctx)
	tailCtx, cancelTail := context.WithCancel(ctx)
	s.cancelRun, s.cancelSends, s.cancelTail = cancelRun, cancelSends, cancelTail

	s.loops.Go(func() { w.claimLoop(runCtx, sendCtx) })
	if w.cfg.QueueStatsInterval > 0 {
		s.loops.Go(func() { w.queueDepthLoop(runCtx) })
	}
	s.tail.Go(func() { w.heartbeatLoop(tailCtx) })
	s.tail.Go(func() { w.completer.run(tailCtx) })
	if w.cfg.RollupInterval > 0 {
		s.tail.Go(func() { w.rollupLoop(tailCtx) })
	}
	w.session = s
	go w.supervise(ctx, s)
	return nil
}

// Stop stops the worker gracefully: it stops claiming, waits for in-flight
// sends until ctx ends (then cancels them, leaving their deliveries to the
// reaper), and records every buffered outcome before returning. It returns
// an error only if some outcomes could not be recorded. Stop is idempotent
// and safe to call concurrently; a worker never started stops at once.
func (w *Worker) Stop(ctx context.Context) error {
	w.mu.Lock()
	s := w.session
	w.stopped = true
	w.mu.Unlock()
	if s == nil {
		return nil
	}
	s.stopOnce.Do(func() {
		s.stopCtx = ctx
		close(s.stopReq)
	})
	<-s.done
	return s.err
}

// supervise waits for a stop request or the end of the Start context, then
// shuts the worker down in order: no new claims, then no sends, then no
// heartbeats, then the last flush.
func (w *Worker) supervise(ctx context.Context, s *session) {
	stopCtx := ctx
	select {
	case <-ctx.Done():
	case <-s.stopReq:
		stopCtx = s.stopCtx
	}
	// From here on every send that ends is counted (stopCounts): the
	// stop says what it did with them (issue 22 item 7).
	w.stop.draining.Store(true)
	w.log.Info("dispatch: stopping: no new claims; waiting for the sends in flight", "in_flight", len(w.slots))
	s.cancelRun()
	s.loops.Wait()

	sendsDone := make(chan struct{})
	go func() {
		w.sends.Wait()
		close(sendsDone)
	}()
	select {
	case <-sendsDone:
	case <-stopCtx.Done():
		s.cancelSends()
		<-sendsDone
	}
	s.cancelSends()
	s.cancelTail()
	s.tail.Wait()
	s.err = w.completer.drain(stopCtx)
	w.finalRollup(stopCtx)
	w.stop.log(w.log, s.err)
	close(s.done)
}

// Notify wakes the claim loop at once, e.g. after an in-process enqueue. It
// never blocks; several notifications before the loop wakes count as one.
func (w *Worker) Notify() { signal(w.wake) }

// RunOnce runs one synchronous cycle: claim one batch, send it, and record
// the outcomes.
// It returns how many deliveries it claimed. It is for tests and tools and
// fails while the worker is started. Outcomes that could not be recorded
// stay buffered for the next RunOnce or Stop.
func (w *Worker) RunOnce(ctx context.Context) (int, error) {
	w.mu.Lock()
	switch {
	case w.session != nil:
		w.mu.Unlock()
		return 0, errors.New("dispatch: RunOnce while the worker is started")
	case w.running:
		w.mu.Unlock()
		return 0, errors.New("dispatch: RunOnce is already in progress")
	}
	w.running = true
	w.mu.Unlock()
	defer func() {
		w.mu.Lock()
		w.running = false
		w.mu.Unlock()
	}()

	var sends sync.WaitGroup
	n, _, _, _, err := w.claimBatch(ctx, ctx, w.freeSlots(), false, &sends) // RunOnce never sleeps on the next run_at
	sends.Wait()
	if err != nil {
		return 0, err
	}
	return n, w.completer.flush(ctx)
}

// storeCtx bounds one store call by StoreTimeout.
func (w *Worker) storeCtx(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(ctx, w.cfg.StoreTimeout)
}

func (w *Worker) freeSlots() int { return cap(w.slots) - len(w.slots) }

// releaseSlot frees a send slot and wakes a claim loop waiting for one.
func (w *Worker) releaseSlot() {
	<-w.slots
	signal(w.slotFreed)
}
