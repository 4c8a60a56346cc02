package postgres

import (
	"context"
	"maps"

	"github.com/heraldhq/herald/heraldtype"
	"github.com/heraldhq/herald/store"
)

// Group commit of Enqueue (groupcommit.go): concurrent triggers beyond
// Options.EnqueueConcurrency are written together. Under load it removes
// most of a single-recipient trigger's per-transaction cost
// (docs/PERFORMANCE.md, session 5). This is the "batch inserts" of
// DESIGN.md "The queue" applied to concurrent API calls. Every call still
// returns only once its own trigger is committed, WAL flush included: an
// accepted trigger is durable (S4.1). A trigger rejected inside a batch
// (an unknown user, an idempotency key already taken, a deadlock) rolls
// the batch back, and each of its triggers runs again alone.

// enqueueBatcher is the Enqueue calls' group commit.
type enqueueBatcher = groupCommit[store.EnqueueParams, store.EnqueueResult]

// enqueueCall is one waiting Enqueue.
type enqueueCall = groupCall[store.EnqueueParams, store.EnqueueResult]

// enqueueBatched runs a checked trigger through the batcher.
func (s *Store) enqueueBatched(ctx context.Context, p store.EnqueueParams) (store.EnqueueResult, error) {
	return s.batcher.run(ctx, p, groupWork[store.EnqueueParams, store.EnqueueResult]{
		what: "enqueue",
		fits: func(ps []store.EnqueueParams, p store.EnqueueParams) bool {
			n := len(p.Notifications)
			for _, q := range ps {
				n += len(q.Notifications)
			}
			return n <= maxBatchNotifications
		},
		alone: s.enqueueAlone,
		many: func(ctx context.Context, ps []store.EnqueueParams) ([]store.EnqueueResult, error, bool) {
			results, wakes, err, rolledBack := s.enqueueMany(ctx, ps)
			if err == nil {
				for _, w := range wakes {
					s.waker.post(w)
				}
			}
			return results, err, rolledBack
		},
	})
}

// enqueueMany writes several checked triggers in one pipelined
// transaction. rolledBack reports, on an error, that PostgreSQL certainly
// did not commit it (so each trigger may run again alone).
//
// Triggers that can share statements (mergeCalls) are written by one
// statement per table for the whole batch, as one trigger with all their
// notifications would be; the others by their own statements in the same
// transaction.
func (s *Store) enqueueMany(ctx context.Context, ps []store.EnqueueParams) (_ []store.EnqueueResult, _ []wake, err error, rolledBack bool) {
	steps := []step{{sql: "BEGIN", what: "transaction"}, enqueuePlans}
	for _, p := range ps {
		if p.IdempotencyKey != "" {
			// A key already taken fails the batch; alone, the call
			// replays the trigger that took it.
			steps = append(steps, s.triggerStep(p, nil))
		}
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
	for _, p := range ps {
		if p.Digest != nil {
			// A join reads before it writes: it cannot be a pipelined
			// step. Callers route digest triggers to enqueueDigest.
			return nil, nil, heraldtype.Errorf(heraldtype.EINVALID, "enqueue: a digest trigger cannot be written in a set-based batch")
		}
	}
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
			!maps.Equal(p.ChannelProviders, m.ChannelProviders) || len(p.Escalate) > 0 {
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
