package postgres

import (
	"context"
	"slices"
	"sync"
	"sync/atomic"
	"time"
)

// Group commit, shared by Enqueue (enqueuebatch.go) and RecordEvent
// (eventbatch.go). At most `max` transactions of one kind run at once;
// calls that arrive while they are all busy wait, and the next free one
// writes every waiting call that fits in one pipelined transaction: one
// round trip, one BEGIN and one COMMIT (one WAL flush) for all of them
// instead of one each. A lone call runs at once, as before, so batching
// adds no latency when there is nothing to batch. Every call still returns
// only once its own write is committed, WAL flush included.
//
// A batch is all or nothing. If PostgreSQL rejects any statement of it,
// the transaction is rolled back — certainly not committed — and every
// call of the batch runs again alone, so each gets its own answer, exactly
// as without batching. A batch whose outcome is unknown (the connection
// dropped before the COMMIT's answer) is not re-run: each call gets the
// error, as a lone call would.

// Bounds of one batch: enough to amortise a transaction, small enough
// that one batch never holds its locks or its connection for long.
const (
	maxBatchCalls         = 64
	maxBatchNotifications = 2000
	// batchTimeout bounds a batch's transaction. A batch does not end
	// with the context of the call that leads it: the other calls of the
	// batch are not that caller's to cancel. It ends at the latest
	// deadline of its calls, though, when all have one (batchDeadline).
	batchTimeout = 30 * time.Second
)

// groupCommit queues calls of one kind (P in, R out) and elects, among
// the callers, the ones that run the batches (no goroutine of its own:
// nothing to stop).
type groupCommit[P, R any] struct {
	max int // transactions at once; 0 disables batching

	mu      sync.Mutex
	queue   []*groupCall[P, R]
	running int // leaders, at most max

	// batches and batched count transactions of more than one call and
	// the calls in them (tests and docs).
	batches, batched atomic.Int64
}

// groupCall is one waiting call.
type groupCall[P, R any] struct {
	ctx context.Context
	p   P
	// ready is signalled once the call is promoted to leader, or its
	// batch is over (done or alone set). Set under the batcher's mu.
	ready chan struct{}
	lead  bool
	done  bool // res and err are its answer
	alone bool // its batch was rolled back: run it alone
	res   R
	err   error
}

// groupWork is how a batcher's calls are written.
type groupWork[P, R any] struct {
	// what names the calls in a context's error.
	what string
	// fits says whether p may join the batch of ps (at most
	// maxBatchCalls calls are taken in any case).
	fits func(ps []P, p P) bool
	// alone writes one call in a transaction of its own.
	alone func(ctx context.Context, p P) (R, error)
	// many writes several calls in one transaction; rolledBack reports,
	// on an error, that PostgreSQL certainly did not commit it (so each
	// call may run again alone).
	many func(ctx context.Context, ps []P) (_ []R, _ error, rolledBack bool)
}

// run writes p through the batcher: alone, or in a batch led by this
// call or another.
func (b *groupCommit[P, R]) run(ctx context.Context, p P, w groupWork[P, R]) (R, error) {
	c := &groupCall[P, R]{ctx: ctx, p: p, ready: make(chan struct{}, 1)}
	b.mu.Lock()
	lead := b.running < b.max
	if lead {
		b.running++
		c.lead = true
	} else {
		b.queue = append(b.queue, c)
	}
	b.mu.Unlock()
	if !lead {
		if err := b.wait(c, w.what); err != nil {
			var zero R
			return zero, err
		}
		// Received from ready: what was set before the signal is seen.
		lead = c.lead
	}
	if lead {
		b.mu.Lock()
		batch := b.take(c, w.fits)
		b.mu.Unlock()
		b.runBatch(batch, w)
		b.mu.Lock()
		b.handOn()
		b.mu.Unlock()
	}
	if c.alone {
		return w.alone(ctx, p)
	}
	return c.res, c.err
}

// handOn passes a finished leader's slot to the call queued longest, or
// frees it. The caller holds mu.
func (b *groupCommit[P, R]) handOn() {
	if len(b.queue) == 0 {
		b.running--
		return
	}
	next := b.queue[0]
	b.queue = slices.Delete(b.queue, 0, 1)
	next.lead = true
	signal(next.ready)
}

// wait waits until c is made a leader or its batch is over. A call whose
// context ends first leaves the queue (handing on a leadership it was
// just given) and returns the context's error; once it is in a batch,
// the batch decides.
func (b *groupCommit[P, R]) wait(c *groupCall[P, R], what string) error {
	select {
	case <-c.ready:
		return nil
	case <-c.ctx.Done():
	}
	b.mu.Lock()
	if c.lead {
		b.handOn()
		c.lead = false
		b.mu.Unlock()
		return formatError(c.ctx.Err(), what)
	}
	if i := slices.Index(b.queue, c); i >= 0 {
		b.queue = slices.Delete(b.queue, i, i+1)
		b.mu.Unlock()
		return formatError(c.ctx.Err(), what)
	}
	// Taken into a running batch: its answer is coming.
	b.mu.Unlock()
	<-c.ready
	return nil
}

// take makes a batch of the leader c and the calls queued longest that
// fit, up to maxBatchCalls, and removes them from the queue. The caller
// holds mu.
func (b *groupCommit[P, R]) take(c *groupCall[P, R], fits func(ps []P, p P) bool) []*groupCall[P, R] {
	batch := []*groupCall[P, R]{c}
	ps := []P{c.p}
	rest := make([]*groupCall[P, R], 0, len(b.queue))
	for _, x := range b.queue {
		if len(batch) < maxBatchCalls && fits(ps, x.p) {
			batch, ps = append(batch, x), append(ps, x.p)
			continue
		}
		rest = append(rest, x)
	}
	b.queue = rest
	return batch
}

// runBatch writes the calls of a batch and answers each: done with its
// result or error, or alone when the batch was rolled back. The first
// call is the leader's own and is not signalled.
func (b *groupCommit[P, R]) runBatch(batch []*groupCall[P, R], w groupWork[P, R]) {
	if len(batch) == 1 {
		c := batch[0]
		c.res, c.err = w.alone(c.ctx, c.p)
		c.done = true
		return
	}
	ctx, cancel := context.WithDeadline(context.WithoutCancel(batch[0].ctx), batchDeadline(batch, time.Now()))
	defer cancel()
	ps := make([]P, len(batch))
	for i, c := range batch {
		ps[i] = c.p
	}
	results, err, rolledBack := w.many(ctx, ps)
	b.batches.Add(1)
	b.batched.Add(int64(len(batch)))
	b.mu.Lock()
	defer b.mu.Unlock()
	for i, c := range batch {
		switch {
		case err == nil:
			c.res, c.done = results[i], true
		case rolledBack:
			c.alone = true
		default:
			c.err, c.done = err, true
		}
		if i > 0 {
			signal(c.ready)
		}
	}
}

// batchDeadline is when a batch's transaction gives up: batchTimeout
// from now, or the latest deadline of its calls when every call has one
// and it is sooner — no call's work is cut before its own deadline, and
// none waits on a database gone silent long after every caller has
// stopped waiting (an API request's store timeout, issue 24 item 1).
func batchDeadline[P, R any](batch []*groupCall[P, R], now time.Time) time.Time {
	limit := now.Add(batchTimeout)
	var latest time.Time
	for _, c := range batch {
		d, ok := c.ctx.Deadline()
		if !ok {
			return limit
		}
		if d.After(latest) {
			latest = d
		}
	}
	if latest.Before(limit) {
		return latest
	}
	return limit
}
