package emulator

import "sync"

// Recorder keeps the most recent messages an emulator accepted, up to a
// bound, in a ring: a load test sending millions of messages must not grow
// the emulator without limit, while a functional test sees every message.
// It is safe for concurrent use; an emulator may call it while holding its
// own lock (the emulator's lock is then always taken first).
type Recorder[T any] struct {
	max int

	mu   sync.Mutex
	ring []T // oldest at head once full
	head int
}

// NewRecorder returns a Recorder keeping at most max messages (the oldest
// are dropped); max must be positive.
func NewRecorder[T any](max int) *Recorder[T] {
	if max <= 0 {
		panic("emulator: NewRecorder needs a positive bound")
	}
	return &Recorder[T]{max: max}
}

// Record stores m, dropping the oldest message when full.
func (r *Recorder[T]) Record(m T) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.ring) < r.max {
		r.ring = append(r.ring, m)
		return
	}
	r.ring[r.head] = m
	r.head = (r.head + 1) % len(r.ring)
}

// All returns the kept messages, oldest first, in a new slice.
func (r *Recorder[T]) All() []T {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make([]T, 0, len(r.ring))
	out = append(out, r.ring[r.head:]...)
	return append(out, r.ring[:r.head]...)
}

// Where returns the kept messages for which match is true, oldest first;
// nil if none.
func (r *Recorder[T]) Where(match func(T) bool) []T {
	var out []T
	for _, m := range r.All() {
		if match(m) {
			out = append(out, m)
		}
	}
	return out
}

// Update calls change on each kept message until it returns true, letting
// an emulator amend a message after recording it (a delivery status
// arriving later). It reports whether change returned true.
func (r *Recorder[T]) Update(change func(*T) bool) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	for i := range r.ring {
		if change(&r.ring[i]) {
			return true
		}
	}
	return false
}

// Reset forgets every message.
func (r *Recorder[T]) Reset() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.ring = nil
	r.head = 0
}
