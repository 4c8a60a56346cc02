package postgres

import (
	"context"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/heraldhq/herald/store"
)

var _ store.InboxNotifier = (*Store)(nil)

// Reconnect backoff of the listener: quick at first (a restarted
// database is usually back within a second), capped so a long outage
// costs one attempt every few seconds.
const (
	listenBackoffMin = 100 * time.Millisecond
	listenBackoffMax = 5 * time.Second
)

// maxPendingUsers bounds the user ids kept for an inbox consumer that is
// not reading; past it they are replaced by one "" (every user).
const maxPendingUsers = 10_000

// listener is the Store's one dedicated connection that LISTENs (not one
// of the pool's: LISTEN is a session state, and a pooled connection would
// carry it to other work). It listens on the deliveries channel and the
// inbox channel at once and fans each notification out to the consumers
// of Notifications and InboxEvents; it runs while there is a consumer.
// No consumer can block it or another consumer: delivery wake-ups are
// coalesced into one pending signal per consumer, and inbox user ids into
// one pending set per consumer.
//
// Through a connection pooler, LISTEN needs session pooling: in
// transaction pooling the listening session is not kept.
type listener struct {
	mu     sync.Mutex
	wakes  map[chan struct{}]struct{}
	inbox  map[*inboxSub]struct{}
	stop   context.CancelFunc // of the running loop; nil when none runs
	gen    int                // which loop is current
	listen bool               // the current loop's LISTEN is in effect
}

// inboxChannel is the NOTIFY channel of new inbox items of this schema;
// the payload is the user id.
func (s *Store) inboxChannel() string { return s.schema + "_inbox" }

// Notifications implements store.Notifier (S4.2): a signal, coalesced,
// when a notification arrives on the deliveries channel, and one after
// every (re)connect of the listener — work may have arrived while nobody
// listened — or at once if it is already listening. When the connection
// drops it reconnects with backoff. The channel is closed when ctx ends.
func (s *Store) Notifications(ctx context.Context) <-chan struct{} {
	ch := make(chan struct{}, 1)
	l := &s.listener
	l.mu.Lock()
	if l.wakes == nil {
		l.wakes = make(map[chan struct{}]struct{})
	}
	l.wakes[ch] = struct{}{}
	if l.listen {
		signal(ch)
	}
	s.startListenerLocked(ctx)
	l.mu.Unlock()
	go func() {
		<-ctx.Done()
		l.mu.Lock()
		delete(l.wakes, ch)
		close(ch)
		s.stopListenerIfIdleLocked()
		l.mu.Unlock()
	}()
	return ch
}

// InboxEvents implements store.InboxNotifier (S3.6): the id of each user
// who got new inbox items on any instance. A consumer that reads slowly
// gets each user once however many notifications arrived meanwhile.
//
// An empty user id means "any user may have new items": it is sent once
// the listener listens (at first and after every reconnect, since items
// may have arrived while nobody listened; at once if it already listens),
// and when more than maxPendingUsers users piled up unread. The consumer
// then checks every stream it holds. The channel is closed when ctx ends.
func (s *Store) InboxEvents(ctx context.Context) <-chan string {
	sub := &inboxSub{out: make(chan string), wake: make(chan struct{}, 1)}
	l := &s.listener
	l.mu.Lock()
	if l.inbox == nil {
		l.inbox = make(map[*inboxSub]struct{})
	}
	l.inbox[sub] = struct{}{}
	if l.listen {
		sub.push("")
	}
	s.startListenerLocked(ctx)
	l.mu.Unlock()
	go sub.pump(ctx)
	go func() {
		<-ctx.Done()
		l.mu.Lock()
		delete(l.inbox, sub)
		s.stopListenerIfIdleLocked()
		l.mu.Unlock()
	}()
	return sub.out
}

// startListenerLocked starts the listening loop unless it runs. The loop
// outlives the ctx of the consumer that started it (it serves them all)
// but keeps its values.
func (s *Store) startListenerLocked(ctx context.Context) {
	l := &s.listener
	if l.stop != nil || ctx.Err() != nil {
		return
	}
	lctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	l.gen++
	l.stop = cancel
	go s.runListener(lctx, l.gen)
}

// stopListenerIfIdleLocked stops the loop when its last consumer left.
// A loop started later is a new generation, so the old one's last words
// (connected or not) are ignored.
func (s *Store) stopListenerIfIdleLocked() {
	l := &s.listener
	if l.stop == nil || len(l.wakes) > 0 || len(l.inbox) > 0 {
		return
	}
	l.stop()
	l.stop = nil
	l.listen = false
	l.gen++
}

// runListener listens until ctx ends, reconnecting with backoff.
func (s *Store) runListener(ctx context.Context, gen int) {
	backoff := listenBackoffMin
	for ctx.Err() == nil {
		listened, _ := s.listen(ctx, gen)
		if listened {
			backoff = listenBackoffMin
		}
		t := time.NewTimer(backoff)
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-t.C:
		}
		backoff = min(2*backoff, listenBackoffMax)
	}
}

// listen connects, listens on both channels and dispatches notifications
// until the connection fails or ctx ends. listened reports whether LISTEN
// succeeded (so the backoff starts over).
func (s *Store) listen(ctx context.Context, gen int) (listened bool, err error) {
	cfg := s.connConfig.Copy()
	// Named so that operators (and the tests) can find it in
	// pg_stat_activity.
	cfg.RuntimeParams["application_name"] = ListenerApplicationName(s.schema)
	conn, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		return false, err
	}
	defer conn.Close(context.WithoutCancel(ctx))
	for _, ch := range []string{s.channel, s.inboxChannel()} {
		if _, err := conn.Exec(ctx, `LISTEN `+pgx.Identifier{ch}.Sanitize()); err != nil {
			return false, err
		}
	}
	s.setListening(gen, true)
	defer s.setListening(gen, false)
	for {
		n, err := conn.WaitForNotification(ctx)
		if err != nil {
			return true, err
		}
		s.dispatch(n)
	}
}

// setListening records whether generation gen's LISTEN is in effect; on
// becoming so it tells every consumer to look (see Notifications and
// InboxEvents).
func (s *Store) setListening(gen int, on bool) {
	l := &s.listener
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.gen != gen {
		return
	}
	l.listen = on
	if !on {
		return
	}
	for ch := range l.wakes {
		signal(ch)
	}
	for sub := range l.inbox {
		sub.push("")
	}
}

// dispatch hands one notification to the consumers of its channel.
func (s *Store) dispatch(n *pgconn.Notification) {
	l := &s.listener
	l.mu.Lock()
	defer l.mu.Unlock()
	switch n.Channel {
	case s.channel:
		for ch := range l.wakes {
			signal(ch)
		}
	case s.inboxChannel():
		if n.Payload == "" {
			return
		}
		for sub := range l.inbox {
			sub.push(n.Payload)
		}
	}
}

// signal sends on ch unless a signal is already waiting.
func signal(ch chan<- struct{}) {
	select {
	case ch <- struct{}{}:
	default:
	}
}

// inboxSub is one InboxEvents consumer: the user ids not yet sent, in
// arrival order without repeats, and the goroutine that sends them.
type inboxSub struct {
	out  chan string
	wake chan struct{}

	mu      sync.Mutex
	pending map[string]struct{}
	order   []string
	// all replaces the pending ids by one "": every user.
	all bool
}

// push queues a user id ("" for every user) and wakes the pump; it never
// blocks on the consumer.
func (b *inboxSub) push(user string) {
	b.mu.Lock()
	switch {
	case b.all:
	case user == "" || len(b.order) >= maxPendingUsers:
		b.all, b.pending, b.order = true, nil, nil
	default:
		if b.pending == nil {
			b.pending = make(map[string]struct{})
		}
		if _, dup := b.pending[user]; !dup {
			b.pending[user] = struct{}{}
			b.order = append(b.order, user)
		}
	}
	b.mu.Unlock()
	signal(b.wake)
}

// take returns the queued ids and empties the queue.
func (b *inboxSub) take() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.all {
		b.all = false
		return []string{""}
	}
	batch := b.order
	b.pending, b.order = nil, nil
	return batch
}

// pump sends the queued ids to the consumer until ctx ends, then closes
// the channel.
func (b *inboxSub) pump(ctx context.Context) {
	defer close(b.out)
	for {
		select {
		case <-ctx.Done():
			return
		case <-b.wake:
		}
		for batch := b.take(); len(batch) > 0; batch = b.take() {
			for _, u := range batch {
				select {
				case b.out <- u:
				case <-ctx.Done():
					return
				}
			}
		}
	}
}

// ListenerApplicationName is the application_name of the listener
// connection of the given schema.
func ListenerApplicationName(schema string) string { return "herald listener " + schema }
