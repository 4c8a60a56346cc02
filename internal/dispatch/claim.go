package dispatch

import (
	"context"
	"sort"
	"sync"
	"time"

	"github.com/heraldhq/herald/heraldtype"
	"github.com/heraldhq/herald/store"
)

// claimLoop claims while there is work and capacity, and otherwise sleeps
// until Notify, the next due run_at or PollInterval, whichever comes first
// (S4.2). Store errors back off instead of spinning.
func (w *Worker) claimLoop(ctx, sendCtx context.Context) {
	// Claiming a handful at a time when almost every slot is busy would
	// cost one transaction per delivery; wait until a quarter of a batch
	// is free instead.
	lowWater := max(1, min(w.cfg.BatchSize, w.cfg.Concurrency)/4)
	var errDelay time.Duration
	// After a full batch the next claim is probably full too, and the
	// worker will not sleep: it claims without asking for the next
	// run_at, which costs PostgreSQL a walk over the index entries the
	// claim just left behind (≈ 1 ms a call under load,
	// docs/PERFORMANCE.md). If that claim comes back short after all,
	// idle reads it with NextRunAt.
	full := false
	for ctx.Err() == nil {
		if w.capacity() < lowWater {
			select {
			case <-ctx.Done():
				return
			case <-w.slotFreed:
			case <-w.completer.flushed:
			}
			continue
		}
		n, limit, claimNow, next, err := w.claimBatch(ctx, sendCtx, w.capacity(), !full, &w.sends)
		full = err == nil && n == limit
		if err != nil {
			if ctx.Err() != nil {
				return
			}
			errDelay = errorBackoff(errDelay)
			w.log.Error("dispatch: claiming deliveries failed", "retry_in", errDelay, "err", err)
			sleepCtx(ctx, errDelay)
			continue
		}
		errDelay = 0
		if full {
			continue // a full batch: there is probably more
		}
		w.idle(ctx, claimNow, next)
	}
}

// capacity is how many deliveries may be claimed now: free send slots,
// bounded by the room left in the outcome buffer.
func (w *Worker) capacity() int {
	return min(w.freeSlots(), w.maxBacklog-w.completer.len())
}

// nextRun is the earliest pending run_at after a claim, when the store
// reported it with the claim (store.NextClaimer).
type nextRun struct {
	at        time.Time
	ok, known bool
}

// claimBatch claims up to min(BatchSize, capacity) deliveries and starts a
// send for each, tracked by sends. It returns how many it claimed, the limit
// it asked for, the time it claimed at and, when withNext and the store is
// a store.NextClaimer, the next pending run_at.
func (w *Worker) claimBatch(ctx, sendCtx context.Context, capacity int, withNext bool, sends *sync.WaitGroup) (n, limit int, claimNow time.Time, next nextRun, err error) {
	limit = min(w.cfg.BatchSize, capacity)
	if limit <= 0 {
		return 0, 0, time.Time{}, next, nil
	}
	claimNow = w.cfg.Now()
	leaseUntil := claimNow.Add(w.cfg.LeaseDuration)
	p := store.ClaimParams{
		Owner:            w.cfg.Owner,
		Now:              claimNow,
		LeaseUntil:       leaseUntil,
		Limit:            limit,
		ExcludeProviders: w.throttledProviders(claimNow),
	}
	var jobs []heraldtype.Job
	var claimStart time.Time
	if w.cfg.Tracer != nil {
		claimStart = time.Now()
	}
	cctx, cancel := w.storeCtx(ctx)
	if nc, ok := w.cfg.Store.(store.NextClaimer); ok && withNext {
		jobs, next.at, next.ok, err = nc.ClaimNext(cctx, p)
		next.known = err == nil
	} else {
		jobs, err = w.cfg.Store.Claim(cctx, p)
	}
	cancel()
	if err != nil {
		return 0, limit, claimNow, nextRun{}, err
	}
	cw := w.claimWindow(claimStart)
	pre := w.prefetch(ctx, jobs)
	for _, job := range jobs {
		w.slots <- struct{}{} // never blocks: only this goroutine takes slots
		w.flights.add(job.Delivery.ID, leaseUntil)
		if cw == nil {
			// Tracing off: the closure stays the size it was before
			// tracing, one allocation of the same size class a send.
			sends.Go(func() { w.run(sendCtx, ctx, job, pre, nil) })
		} else {
			sends.Go(func() { w.run(sendCtx, ctx, job, pre, cw) })
		}
	}
	return len(jobs), limit, claimNow, next, nil
}

// throttledProviders are the providers so slowed down that a delivery
// claimed now could not start its send within its lease: claiming them
// would only release them again. Only provider-wide throttles count: a
// slowed scope (one Web Push host, ThrottleScoper) must not hold back the
// provider's other scopes, so its deliveries are claimed and released.
func (w *Worker) throttledProviders(now time.Time) []string {
	margin := w.cfg.LeaseDuration - w.cfg.SendTimeout - w.cfg.OutcomeMargin
	var names []string
	for name, th := range w.throttles {
		if th.backlog(now) > margin {
			names = append(names, name)
		}
	}
	sort.Strings(names)
	return names
}

// idle sleeps until Notify, the earliest pending run_at after the claim, or
// PollInterval. A run_at at or before the claim time was either claimed or
// is not claimable (excluded, or another worker's), so it does not wake the
// loop, which would otherwise spin. The run_at is next when the claim
// reported it, and read with NextRunAt otherwise.
func (w *Worker) idle(ctx context.Context, claimNow time.Time, next nextRun) {
	d := w.cfg.PollInterval
	if !next.known {
		var err error
		nctx, cancel := w.storeCtx(ctx)
		next.at, next.ok, err = w.cfg.Store.NextRunAt(nctx)
		cancel()
		if err != nil {
			next.ok = false
			if ctx.Err() == nil {
				w.log.Warn("dispatch: reading the next run_at failed; polling", "err", err)
			}
		}
	}
	if next.ok && next.at.After(claimNow) {
		d = min(d, max(next.at.Sub(w.cfg.Now()), 0))
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-w.wake:
	case <-t.C:
	}
}

// queueDepthLoop refreshes the queue depth gauge now and then every
// QueueStatsInterval — or, when counting took long (a deep backlog makes
// the count proportional to it), after queueDepthIdle times as long as it
// took, so the gauge never costs the database more than a small share of
// one connection however deep the queue grows.
func (w *Worker) queueDepthLoop(ctx context.Context) {
	for {
		start := time.Now()
		w.refreshQueueDepth(ctx)
		wait := max(w.cfg.QueueStatsInterval, queueDepthIdle*time.Since(start))
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-t.C:
		}
	}
}

// queueDepthIdle is how many times as long as the last count the queue
// depth loop waits, at least, before counting again.
const queueDepthIdle = 20

// refreshQueueDepth sets the queue depth gauge from the store. It runs on a
// timer rather than per scrape, so scrapes never load the database.
func (w *Worker) refreshQueueDepth(ctx context.Context) {
	sctx, cancel := w.storeCtx(ctx)
	defer cancel()
	stats, err := w.cfg.Store.QueueStats(sctx)
	if err != nil {
		if ctx.Err() == nil {
			w.log.Warn("dispatch: reading queue stats failed", "err", err)
		}
		return
	}
	// Every counted state is set, so a state that empties shows 0 instead
	// of its last value.
	for _, s := range store.QueueDepthStates {
		w.cfg.Metrics.QueueDepth.WithLabelValues(string(s)).Set(float64(stats[s]))
	}
}
