package dispatch

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/heraldhq/herald/store"
)

// finalFlushTimeout bounds the last attempt to record outcomes when the
// worker is stopping and its context is already over. Outcomes still not
// recorded then are left to the lease reaper.
const finalFlushTimeout = 5 * time.Second

// completer buffers outcomes and records them in batches, one Complete call
// (one transaction) per FlushSize outcomes, at most FlushInterval after the
// first one arrived (River's batch completer). Batching is what lets the
// queue reach thousands of deliveries a second on a small database. An
// outcome is never dropped: a failed flush keeps it for the next one.
type completer struct {
	store    Store
	log      *slog.Logger
	interval time.Duration
	size     int
	// timeout bounds one Complete call (Config.StoreTimeout).
	timeout time.Duration

	// onInbox learns the users of the inbox items a flush wrote
	// (Config.InboxWritten); inboxUsers holds the user of each buffered
	// store.InboxSent outcome by delivery id.
	onInbox    func(userIDs []string)
	inboxUsers map[int64]string

	mu  sync.Mutex
	buf []store.Outcome
	// nonEmpty is signalled when the buffer gets its first outcome, full
	// when it reaches size, and flushed after a successful flush; all
	// coalesce.
	nonEmpty chan struct{}
	full     chan struct{}
	flushed  chan struct{}
}

func newCompleter(s Store, log *slog.Logger, interval time.Duration, size int, timeout time.Duration,
	onInbox func([]string)) *completer {
	return &completer{
		store: s, log: log, interval: interval, size: size, timeout: timeout, onInbox: onInbox,
		nonEmpty: make(chan struct{}, 1),
		full:     make(chan struct{}, 1),
		flushed:  make(chan struct{}, 1),
	}
}

func signal(c chan struct{}) {
	select {
	case c <- struct{}{}:
	default:
	}
}

// addInbox buffers a store.InboxSent outcome of userID's delivery, whose
// user learns of the item once it is recorded.
func (c *completer) addInbox(o store.Outcome, userID string) {
	c.mu.Lock()
	if c.inboxUsers == nil {
		c.inboxUsers = make(map[int64]string)
	}
	c.inboxUsers[o.DeliveryID] = userID
	c.mu.Unlock()
	c.add(o)
}

func (c *completer) add(o store.Outcome) {
	c.mu.Lock()
	c.buf = append(c.buf, o)
	n := len(c.buf)
	c.mu.Unlock()
	if n == 1 {
		signal(c.nonEmpty)
	}
	if n >= c.size {
		signal(c.full)
	}
}

func (c *completer) len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.buf)
}

// take removes up to n outcomes from the front of the buffer.
func (c *completer) take(n int) []store.Outcome {
	c.mu.Lock()
	defer c.mu.Unlock()
	n = min(n, len(c.buf))
	batch := make([]store.Outcome, n)
	copy(batch, c.buf)
	c.buf = c.buf[n:]
	if len(c.buf) == 0 {
		c.buf = nil // let the backing array go
	}
	return batch
}

// putBack returns a batch that could not be recorded to the front, keeping
// the order outcomes were decided in.
func (c *completer) putBack(batch []store.Outcome) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.buf = append(batch, c.buf...)
}

// flush records every buffered outcome, size at a time. On an error the
// unrecorded outcomes stay buffered.
func (c *completer) flush(ctx context.Context) error {
	for {
		batch := c.take(c.size)
		if len(batch) == 0 {
			return nil
		}
		cctx, cancel := context.WithTimeout(ctx, c.timeout)
		applied, err := c.store.Complete(cctx, batch)
		cancel()
		if err != nil {
			c.putBack(batch)
			return fmt.Errorf("dispatch: recording %d outcomes: %w", len(batch), err)
		}
		signal(c.flushed)
		c.inboxWritten(batch)
		if applied < len(batch) {
			c.reportLate(ctx, batch, applied)
		}
	}
}

// reportLate records what the outcomes the store's guards ignored say,
// when their lease was ended by the reaper (issue 24 item 3): an
// at_most_once delivery the reaper made unknown then shows whether this
// worker ever sent it, so an operator can replay it with confidence. The
// store picks those out of the batch (the rest were duplicates of
// recorded outcomes); their deliveries keep their state (S1.3, S4.4). A
// failure only loses the reports, which are not retried: the deliveries'
// states already say all the queue needs.
func (c *completer) reportLate(ctx context.Context, batch []store.Outcome, applied int) {
	cctx, cancel := context.WithTimeout(ctx, c.timeout)
	reported, err := c.store.ReportLate(cctx, batch)
	cancel()
	if err != nil {
		c.log.Warn("dispatch: stale outcomes ignored; recording them as late reports failed",
			"ignored", len(batch)-applied, "batch", len(batch), "err", err)
		return
	}
	c.log.Info("dispatch: stale outcomes ignored", "ignored", len(batch)-applied, "batch", len(batch),
		"late_reports", reported)
}

// inboxWritten tells onInbox the users of the recorded batch's
// store.InboxSent outcomes. Only batches with such an outcome touch the
// map.
func (c *completer) inboxWritten(batch []store.Outcome) {
	c.mu.Lock()
	if len(c.inboxUsers) == 0 {
		c.mu.Unlock()
		return
	}
	var users []string
	for i := range batch {
		if u, ok := c.inboxUsers[batch[i].DeliveryID]; ok && batch[i].Row().Inbox {
			delete(c.inboxUsers, batch[i].DeliveryID)
			users = append(users, u)
		}
	}
	c.mu.Unlock()
	if len(users) > 0 && c.onInbox != nil {
		c.onInbox(users)
	}
}

// run flushes until ctx ends, retrying failed flushes with backoff.
func (c *completer) run(ctx context.Context) {
	var backoff time.Duration
	for {
		if c.len() == 0 {
			select {
			case <-ctx.Done():
				return
			case <-c.nonEmpty:
			}
		}
		if c.len() < c.size {
			t := time.NewTimer(c.interval)
			select {
			case <-ctx.Done():
				t.Stop()
				return
			case <-c.full:
			case <-t.C:
			}
			t.Stop()
		}
		err := c.flush(ctx)
		if err == nil {
			backoff = 0
			continue
		}
		if ctx.Err() != nil {
			return
		}
		backoff = errorBackoff(backoff)
		c.log.Error("dispatch: flushing outcomes failed; retrying", "pending", c.len(), "retry_in", backoff, "err", err)
		if !sleepCtx(ctx, backoff) {
			return
		}
	}
}

// drain records everything buffered before the worker stops, retrying
// until ctx ends; then it makes one last bounded attempt.
func (c *completer) drain(ctx context.Context) error {
	var backoff time.Duration
	for ctx.Err() == nil {
		err := c.flush(ctx)
		if err == nil {
			return nil
		}
		backoff = errorBackoff(backoff)
		c.log.Error("dispatch: flushing outcomes on stop failed; retrying", "pending", c.len(), "retry_in", backoff, "err", err)
		if !sleepCtx(ctx, backoff) {
			break
		}
	}
	last, cancel := context.WithTimeout(context.WithoutCancel(ctx), finalFlushTimeout)
	defer cancel()
	if err := c.flush(last); err != nil {
		return fmt.Errorf("%w (%d outcomes left to the lease reaper)", err, c.len())
	}
	return nil
}

// sleepCtx waits for d or until ctx ends, and reports whether d passed.
func sleepCtx(ctx context.Context, d time.Duration) bool {
	if d <= 0 {
		return ctx.Err() == nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}
