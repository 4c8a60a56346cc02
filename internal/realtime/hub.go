// Package realtime fans "something new for user X" signals out to the
// open real-time streams of that user on this instance. It carries no
// data: a signalled stream reads what it missed from the store, so a lost
// or coalesced signal can delay an item but never lose it, and a stream
// resumes from the last id it sent (S3.6, S4.5).
package realtime

import "sync"

// Hub holds the subscriptions of one instance.
type Hub struct {
	mu   sync.Mutex
	subs map[string]map[*Subscription]struct{}
}

// Subscription is one open stream. C receives a value, coalesced, when the
// user may have new items.
type Subscription struct {
	C      <-chan struct{}
	c      chan struct{}
	userID string
}

// NewHub returns an empty hub.
func NewHub() *Hub {
	return &Hub{subs: map[string]map[*Subscription]struct{}{}}
}

// Subscribe opens a subscription for userID; Unsubscribe must close it.
func (h *Hub) Subscribe(userID string) *Subscription {
	c := make(chan struct{}, 1)
	s := &Subscription{C: c, c: c, userID: userID}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.subs[userID] == nil {
		h.subs[userID] = map[*Subscription]struct{}{}
	}
	h.subs[userID][s] = struct{}{}
	return s
}

// Unsubscribe closes s.
func (h *Hub) Unsubscribe(s *Subscription) {
	h.mu.Lock()
	defer h.mu.Unlock()
	delete(h.subs[s.userID], s)
	if len(h.subs[s.userID]) == 0 {
		delete(h.subs, s.userID)
	}
}

// Publish signals every subscription of userID without blocking: a
// subscription that has not consumed its previous signal keeps just one.
func (h *Hub) Publish(userID string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for s := range h.subs[userID] {
		select {
		case s.c <- struct{}{}:
		default:
		}
	}
}

// PublishAll signals every subscription: any user may have new items
// (the store's listener reconnected, or its event queue overflowed).
func (h *Hub) PublishAll() {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, m := range h.subs {
		for s := range m {
			select {
			case s.c <- struct{}{}:
			default:
			}
		}
	}
}

// Subscribers counts the open subscriptions (for metrics and tests).
func (h *Hub) Subscribers() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	n := 0
	for _, m := range h.subs {
		n += len(m)
	}
	return n
}
