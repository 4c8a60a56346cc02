package postgres

import (
	"context"
	"maps"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/heraldhq/herald/heraldtype"
	"github.com/heraldhq/herald/store"
)

// Group commit of Enqueue. At most `max` enqueue transactions run at once;
// calls that arrive while they are all busy wait, and the next free one
// writes every waiting trigger in one pipelined transaction: one round
// trip, one BEGIN and one COMMIT (one WAL flush) for all of them instead
// of one each. A lone call runs at once, as before, so batching adds no
// latency when there is nothing to batch; under load it removes most of
// a single-recipient trigger's per-transaction cost (docs/PERFORMANCE.md,
// session 5). This is the "batch inserts" of DESIGN.md "The queue" applied
// to concurrent API calls. Every call still returns only once its own
// trigger is committed, WAL flush included: an accepted trigger is
// durable (S4.1).
//
// A batch is all or nothing. If PostgreSQL rejects any statement of it
// (an unknown user, an idempotency key already taken, a deadlock), the
// transaction is rolled back — certainly not committed — and every call
// of the batch runs again alone, so each gets its own answer, exactly as
// without batching. A batch whose outcome is unknown (the connection
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

// enqueueBatcher queues Enqueue calls and elects, among the callers, the
// ones that run the batches (no goroutine of its own: nothing to stop).
type enqueueBatcher struct {
	max int // transactions at once; 0 disables batching

	mu      sync.Mutex
	queue   []*enqueueCall
	running int // leaders, at most max

	// batches and batched count transactions of more than one call and
	// the calls in them (tests and docs).
	batches, batched atomic.Int64
}

// enqueueCall is one waiting Enqueue.
type enqueueCall struct {
	ctx context.Context
	p   store.EnqueueParams
	// ready is signalled once the call is promoted to leader, or its
	// batch is over (done or alone set). Set under the batcher's mu.
	ready chan struct{}
	lead  bool
	done  bool // res and err are its answer
	alone bool // its batch was rolled back: run it alone
	res   store.EnqueueResult
	err   error
}

// enqueueBatched runs a checked trigger through the batcher.
func (s *Store) enqueueBatched(ctx context.Context, p store.EnqueueParams) (store.EnqueueResult, error) {
	b := &s.batcher
	c := &enqueueCall{ctx: ctx, p: p, ready: make(chan struct{}, 1)}
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
		if err := b.wait(c); err != nil {
			return store.EnqueueResult{}, err
		}
		// Received from ready: what was set before the signal is seen.
		lead = c.lead
	}
	if lead {
		b.mu.Lock()
		batch := b.take(c)
		b.mu.Unlock()
		s.runBatch(batch)
		b.mu.Lock()
		b.handOn()
		b.mu.Unlock()
	}
	if c.alone {
		return s.enqueueAlone(ctx, p)
	}
	return c.res, c.err
}

// handOn passes a finished leader's slot to the call queued longest, or
// frees it. The caller holds mu.
func (b *enqueueBatcher) handOn() {
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
func (b *enqueueBatcher) wait(c *enqueueCall) error {
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
		return formatError(c.ctx.Err(), "enqueue")
	}
	if i := slices.Index(b.queue, c); i >= 0 {
		b.queue = slices.Delete(b.queue, i, i+1)
		b.mu.Unlock()
		return formatError(c.ctx.Err(), "enqueue")
	}
	// Taken into a running batch: its answer is coming.
	b.mu.Unlock()
	<-c.ready
	return nil
}

// take makes a batch of the leader c and the calls queued longest, up to
// the batch bounds, and removes them from the queue.
func (b *enqueueBatcher) take(c *enqueueCall) []*enqueueCall {
	batch := []*enqueueCall{c}
	total := len(c.p.Notifications)
	rest := make([]*enqueueCall, 0, len(b.queue))
	for _, x := range b.queue {
		switch {
		case len(batch) < maxBatchCalls && total+len(x.p.Notifications) <= maxBatchNotifications:
			batch = append(batch, x)
			total += len(x.p.Notifications)
		default:
			rest = append(rest, x)
		}
	}
	b.queue = rest
	return batch
}

// runBatch writes the calls of a batch and answers each: done with its
// result or error, or alone when the batch was rolled back. The first
// call is the leader's own and is not signalled.
func (s *Store) runBatch(batch []*enqueueCall) {
	if len(batch) == 1 {
		c := batch[0]
		c.res, c.err = s.enqueueAlone(c.ctx, c.p)
		c.done = true
		return
	}
	ctx, cancel := context.WithDeadline(context.WithoutCancel(batch[0].ctx), batchDeadline(batch, time.Now()))
	defer cancel()
	results, wakes, err, rolledBack := s.enqueueMany(ctx, batch)
	s.batcher.batches.Add(1)
	s.batcher.batched.Add(int64(len(batch)))
	if err == nil {
		for _, w := range wakes {
			s.waker.post(w)
		}
	}
	s.batcher.mu.Lock()
	defer s.batcher.mu.Unlock()
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
func batchDeadline(batch []*enqueueCall, now time.Time) time.Time {
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

// enqueueMany writes several checked triggers in one pipelined
// transaction. rolledBack reports, on an error, that PostgreSQL certainly
// did not commit it (so each trigger may run again alone).
//
// Triggers that can share statements (mergeCalls) are written by one
// statement per table for the whole batch, as one trigger with all their
// notifications would be; the others by their own statements in the same
// transaction.
func (s *Store) enqueueMany(ctx context.Context, batch []*enqueueCall) (_ []store.EnqueueResult, _ []wake, err error, rolledBack bool) {
	steps := []step{{sql: "BEGIN", what: "transaction"}, enqueuePlans}
	for _, c := range batch {
		if c.p.IdempotencyKey != "" {
			// A key already taken fails the batch; alone, the call
			// replays the trigger that took it.
			steps = append(steps, s.triggerStep(c.p, nil))
		}
	}
	ps := make([]store.EnqueueParams, len(batch))
	for i, c := range batch {
		ps[i] = c.p
	}
	writes, done, err := s.writeBatch(ps)
	if err != nil {
		// Bad input of one call, found before anything was sent: alone,
		// it gets the error and the others are written.
		return nil, nil, err, true
	}
	steps = append(steps, writes...)
	steps = append(steps, step{sql: "COMMIT", what: "transaction"})
	conn, err := s.pool.Acquire(ctx)
	if err != nil {
		return nil, nil, formatError(err, "connection"), false
	}
	defer conn.Release()
	cn := conn.Conn()
	if err := runPipeline(ctx, cn, steps); err != nil {
		if cn.IsClosed() {
			return nil, nil, err, false
		}
		switch cn.PgConn().TxStatus() {
		case 'E', 'T':
			// Still inside the failed transaction: nothing is
			// committed. Roll back and hand the connection back idle.
			if _, rerr := cn.Exec(ctx, "ROLLBACK"); rerr != nil {
				return nil, nil, err, false
			}
			return nil, nil, err, true
		default:
			return nil, nil, err, false
		}
	}
	results, wakes := done()
	return results, wakes, nil, false
}

// writeBatch returns the statements that write several checked triggers
// whose idempotency keys (if any) are taken, in one transaction, and
// done, which gives each trigger's result and whom to wake once those
// statements ran. Triggers that can share statements (mergeCalls) are
// written by one statement per table, as one trigger of all their
// notifications; the others by their own statements, one after another.
// Group commit (enqueueMany) and a batch of reminder fires
// (FireReminders) write their triggers with it.
func (s *Store) writeBatch(ps []store.EnqueueParams) (_ []step, done func() ([]store.EnqueueResult, []wake), _ error) {
	if merged, ok := mergeCalls(ps); ok {
		var shared enqueueState
		steps, err := s.writeSteps(merged, &shared)
		if err != nil {
			return nil, nil, err
		}
		return steps, func() ([]store.EnqueueResult, []wake) {
			results := make([]store.EnqueueResult, len(ps))
			items := inboxByNotification(shared.inbox)
			for i, p := range ps {
				results[i] = shared.result(p)
				results[i].Inbox = inboxOf(items, p)
			}
			return results, []wake{shared.wake()}
		}, nil
	}
	var steps []step
	states := make([]enqueueState, len(ps))
	for i, p := range ps {
		writes, err := s.writeSteps(p, &states[i])
		if err != nil {
			return nil, nil, err
		}
		steps = append(steps, writes...)
	}
	return steps, func() ([]store.EnqueueResult, []wake) {
		results, wakes := make([]store.EnqueueResult, len(ps)), make([]wake, len(ps))
		for i, p := range ps {
			results[i], wakes[i] = states[i].result(p), states[i].wake()
		}
		return results, wakes
	}, nil
}

// mergeCalls returns the triggers of a batch as one trigger of all their
// notifications, when they route and bound their deliveries alike (calls
// of one Client always do). Each notification keeps its trigger's
// idempotency key. The merged trigger's time is the latest of the calls'
// (their own differ by how long they waited): an immediate delivery of an
// earlier call is due, and stamped, a few milliseconds later than its
// call's time, never earlier.
func mergeCalls(batch []store.EnqueueParams) (store.EnqueueParams, bool) {
	first := batch[0]
	m := store.EnqueueParams{MaxAttempts: first.MaxAttempts, PushProviders: first.PushProviders,
		ChannelProviders: first.ChannelProviders, Now: first.Now}
	n := 0
	for _, p := range batch {
		if p.MaxAttempts != m.MaxAttempts || !maps.Equal(p.PushProviders, m.PushProviders) ||
			!maps.Equal(p.ChannelProviders, m.ChannelProviders) {
			return store.EnqueueParams{}, false
		}
		if p.Now.After(m.Now) {
			m.Now = p.Now
		}
		n += len(p.Notifications)
	}
	m.Notifications = make([]heraldtype.Notification, 0, n)
	for _, p := range batch {
		for _, no := range p.Notifications {
			if no.IdempotencyKey == "" {
				no.IdempotencyKey = p.IdempotencyKey
			}
			m.Notifications = append(m.Notifications, no)
		}
	}
	return m, true
}

// inboxByNotification indexes inbox items by their notification.
func inboxByNotification(items []heraldtype.InboxItem) map[string][]heraldtype.InboxItem {
	if len(items) == 0 {
		return nil
	}
	m := make(map[string][]heraldtype.InboxItem, len(items))
	for _, it := range items {
		m[it.NotificationID] = append(m[it.NotificationID], it)
	}
	return m
}

// inboxOf are the items of the notifications of p, in the order of its
// notifications: a batch of many triggers looks each one's up instead of
// scanning every item of the batch per trigger.
func inboxOf(items map[string][]heraldtype.InboxItem, p store.EnqueueParams) []heraldtype.InboxItem {
	if len(items) == 0 {
		return nil
	}
	var out []heraldtype.InboxItem
	for _, n := range p.Notifications {
		out = append(out, items[n.ID]...)
	}
	return out
}
