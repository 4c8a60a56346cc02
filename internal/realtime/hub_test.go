package realtime

import (
	"sync"
	"testing"
)

func TestPublishSignalsOnlyTheUser(t *testing.T) {
	t.Parallel()
	h := NewHub()
	a1, a2, b := h.Subscribe("a"), h.Subscribe("a"), h.Subscribe("b")
	h.Publish("a")
	h.Publish("a") // coalesced, never blocks
	for _, s := range []*Subscription{a1, a2} {
		select {
		case <-s.C:
		default:
			t.Fatal("a subscription of a was not signalled")
		}
	}
	select {
	case <-b.C:
		t.Fatal("b was signalled for a's item")
	default:
	}
	h.Unsubscribe(a1)
	h.Unsubscribe(a2)
	h.Unsubscribe(b)
	if n := h.Subscribers(); n != 0 {
		t.Fatalf("%d subscriptions left", n)
	}
}

func TestConcurrentUse(t *testing.T) {
	t.Parallel()
	h := NewHub()
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for range 200 {
				s := h.Subscribe("u")
				h.Publish("u")
				h.Unsubscribe(s)
			}
		})
	}
	wg.Wait()
	if n := h.Subscribers(); n != 0 {
		t.Fatalf("%d subscriptions left", n)
	}
}

func TestPublishAll(t *testing.T) {
	t.Parallel()
	h := NewHub()
	a, b := h.Subscribe("a"), h.Subscribe("b")
	h.PublishAll()
	for _, s := range []*Subscription{a, b} {
		select {
		case <-s.C:
		default:
			t.Fatal("PublishAll missed a subscription")
		}
	}
}
