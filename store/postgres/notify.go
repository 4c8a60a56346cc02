package postgres

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5"
)

// Reconnect backoff of the listener: quick at first (a restarted
// database is usually back within a second), capped so a long outage
// costs one attempt every few seconds.
const (
	listenBackoffMin = 100 * time.Millisecond
	listenBackoffMax = 5 * time.Second
)

// Notifications implements store.Notifier (S4.2). It keeps a dedicated
// connection (not one of the pool's: LISTEN is a session state, and a
// pooled connection would carry it to other work) listening on the
// schema's channel, and sends on the returned channel, coalesced, when a
// notification arrives. When the connection drops it reconnects with
// backoff, and after every (re)connect it sends one signal: work may have
// arrived while nobody listened. The channel is closed when ctx ends.
//
// Through a connection pooler, LISTEN needs session pooling: in
// transaction pooling the listening session is not kept.
func (s *Store) Notifications(ctx context.Context) <-chan struct{} {
	ch := make(chan struct{}, 1)
	go func() {
		defer close(ch)
		backoff := listenBackoffMin
		for ctx.Err() == nil {
			listened, _ := s.listen(ctx, ch)
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
	}()
	return ch
}

// listen connects, listens and forwards notifications until the
// connection fails or ctx ends. listened reports whether LISTEN
// succeeded (so the backoff starts over).
func (s *Store) listen(ctx context.Context, ch chan<- struct{}) (listened bool, err error) {
	cfg := s.connConfig.Copy()
	// Named so that operators (and the tests) can find it in
	// pg_stat_activity.
	cfg.RuntimeParams["application_name"] = ListenerApplicationName(s.schema)
	conn, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		return false, err
	}
	defer conn.Close(context.WithoutCancel(ctx))
	if _, err := conn.Exec(ctx, `LISTEN `+pgx.Identifier{s.channel}.Sanitize()); err != nil {
		return false, err
	}
	signal(ch)
	for {
		if _, err := conn.WaitForNotification(ctx); err != nil {
			return true, err
		}
		signal(ch)
	}
}

// signal sends on ch unless a signal is already waiting.
func signal(ch chan<- struct{}) {
	select {
	case ch <- struct{}{}:
	default:
	}
}

// ListenerApplicationName is the application_name of the listener
// connection of the given schema.
func ListenerApplicationName(schema string) string { return "herald listener " + schema }
