package postgres

import (
	"context"
	"maps"
	"slices"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
)

// wake is whom an enqueue wakes on every instance (S4.2): the dispatchers
// when a delivery is due now, and the inbox streams of users who got an
// inbox item.
type wake struct {
	deliveries bool
	inboxUsers []string
}

func (w wake) empty() bool { return !w.deliveries && len(w.inboxUsers) == 0 }

// notifyInTx queues w's notifications inside the transaction of q;
// PostgreSQL delivers them at its commit, and not at all on rollback.
func (s *Store) notifyInTx(ctx context.Context, q txQuerier, w wake) error {
	if w.deliveries {
		if err := q.exec(ctx, s.notifySQL()); err != nil {
			return formatError(err, "notify")
		}
	}
	if len(w.inboxUsers) > 0 {
		err := q.exec(ctx, `SELECT pg_notify($1, u) FROM unnest($2::text[]) AS u`, s.inboxChannel(), w.inboxUsers)
		return formatError(err, "notify")
	}
	return nil
}

// waker sends the notifications of committed enqueues from outside their
// transactions, coalesced: while one NOTIFY round trip is in flight, the
// wakes that arrive merge into the next, so a burst of enqueues costs a
// few NOTIFYs instead of one each. Every wake posted is followed by a
// NOTIFY that starts after it was posted, so a listener that wakes always
// sees the rows. A NOTIFY that fails is not retried: the dispatchers poll
// (PollInterval, S4.2) and the inbox streams resume from Last-Event-ID.
// A crash between a commit and its NOTIFY is covered the same way.
type waker struct {
	// send sends one coalesced wake (poolNotify; a fake in tests).
	send    func(ctx context.Context, w wake) error
	mu      sync.Mutex
	running bool
	closed  bool
	pending wake
	users   map[string]struct{}
	done    sync.WaitGroup
}

// notifyTimeout bounds one NOTIFY round trip of the waker.
const notifyTimeout = 5 * time.Second

func (w *waker) init(s *Store) {
	w.send = func(ctx context.Context, wk wake) error { return poolNotify(ctx, s, wk) }
}

// post schedules w's notifications.
func (w *waker) post(wk wake) {
	if wk.empty() {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	w.pending.deliveries = w.pending.deliveries || wk.deliveries
	for _, u := range wk.inboxUsers {
		if w.users == nil {
			w.users = make(map[string]struct{})
		}
		w.users[u] = struct{}{}
	}
	if w.running || w.closed {
		return
	}
	w.running = true
	w.done.Add(1)
	go w.run()
}

// run sends what is pending until nothing is.
func (w *waker) run() {
	defer w.done.Done()
	for {
		w.mu.Lock()
		next := wake{deliveries: w.pending.deliveries, inboxUsers: slices.Sorted(maps.Keys(w.users))}
		w.pending, w.users = wake{}, nil
		if next.empty() {
			w.running = false
			w.mu.Unlock()
			return
		}
		w.mu.Unlock()
		ctx, cancel := context.WithTimeout(context.Background(), notifyTimeout)
		_ = w.send(ctx, next)
		cancel()
	}
}

// poolNotify sends w's notifications in one round trip, as one implicit
// transaction of their own: it writes no rows, so its commit needs no WAL
// flush and holds the notify lock only briefly.
func poolNotify(ctx context.Context, s *Store, w wake) error {
	b := &pgx.Batch{}
	if w.deliveries {
		b.Queue(s.notifySQL())
	}
	if len(w.inboxUsers) > 0 {
		b.Queue(`SELECT pg_notify($1, u) FROM unnest($2::text[]) AS u`, s.inboxChannel(), w.inboxUsers)
	}
	return s.pool.SendBatch(ctx, b).Close()
}

// close waits for the NOTIFYs posted so far (each bounded by
// notifyTimeout); later posts are dropped.
func (w *waker) close() {
	w.mu.Lock()
	w.closed = true
	w.mu.Unlock()
	w.done.Wait()
}
