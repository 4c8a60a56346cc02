package webhook_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/heraldhq/herald/heraldtype"
	"github.com/heraldhq/herald/internal/webhook"
	"github.com/heraldhq/herald/store"
)

// slowReceiver holds every request until release is closed and counts
// how many it holds at once.
type slowReceiver struct {
	srv     *httptest.Server
	release chan struct{}
	mu      sync.Mutex
	now     int
	most    int
	total   int
}

func newSlowReceiver(t *testing.T) *slowReceiver {
	r := &slowReceiver{release: make(chan struct{})}
	r.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		r.mu.Lock()
		r.now++
		r.total++
		r.most = max(r.most, r.now)
		r.mu.Unlock()
		<-r.release
		r.mu.Lock()
		r.now--
		r.mu.Unlock()
		w.WriteHeader(http.StatusNoContent)
	}))
	t.Cleanup(func() {
		select {
		case <-r.release:
		default:
			close(r.release)
		}
		r.srv.Close()
	})
	return r
}

func (r *slowReceiver) counts() (now, most, total int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.now, r.most, r.total
}

// waitFor polls cond until it holds or the deadline passes.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within 10 s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// Issue 35 item 4: a slow endpoint never has more than
// MaxInFlightPerEndpoint sends in flight, and another endpoint's messages
// go out while it holds them.
func TestDispatcherCapsSendsInFlightPerEndpoint(t *testing.T) {
	const limit = 3
	h := newHarness(t, func(c *webhook.Config) {
		c.MaxInFlightPerEndpoint, c.Timeout, c.PollInterval = limit, 30*time.Second, 10*time.Millisecond
	})
	slow := newSlowReceiver(t)
	now := h.clock.Now()
	if err := h.store.CreateWebhookEndpoint(h.ctx, store.WebhookEndpoint{WebhookEndpoint: heraldtype.WebhookEndpoint{ID: "slow",
		URL: slow.srv.URL + "/hooks/slow", Enabled: true, CreatedAt: now, UpdatedAt: now}, Secret: testSecret}); err != nil {
		t.Fatal(err)
	}
	// Ten events of ten notifications: nothing but the cap keeps them
	// from going out at once.
	var events []store.WebhookEvent
	for i := range 10 {
		id := string(rune('a' + i))
		events = append(events, store.WebhookEvent{EventID: "evt_slow_" + id, Type: heraldtype.WebhookDeliveryFinished,
			OrderingKey: "n_" + id, Data: []byte(`{}`), At: now, EndpointID: "slow"})
	}
	if _, err := h.store.AddWebhookEvents(h.ctx, events); err != nil {
		t.Fatal(err)
	}
	h.d.Start(h.ctx)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := h.d.Stop(ctx); err != nil {
			t.Errorf("stop: %v", err)
		}
	})
	waitFor(t, "the slow endpoint holding its cap", func() bool { n, _, _ := slow.counts(); return n == limit })

	// Another endpoint, registered now, gets its messages while the slow
	// one still holds its sends.
	h.endpoint("fast")
	for i := range 5 {
		id := string(rune('a' + i))
		if _, err := h.store.AddWebhookEvents(h.ctx, []store.WebhookEvent{{EventID: "evt_fast_" + id, Type: heraldtype.WebhookDeliveryFinished,
			OrderingKey: "m_" + id, Data: []byte(`{}`), At: now, EndpointID: "fast"}}); err != nil {
			t.Fatal(err)
		}
	}
	h.d.Notify()
	waitFor(t, "the fast endpoint's five messages", func() bool { return len(h.received()) == 5 })
	if n, most, total := slow.counts(); n != limit || most != limit || total != limit {
		t.Fatalf("while the fast endpoint was served, the slow one had %d in flight (most %d, %d requests), want %d", n, most, total, limit)
	}

	close(slow.release)
	waitFor(t, "every slow message sent", func() bool {
		for _, m := range h.messages("slow") {
			if m.State != heraldtype.WebhookSent {
				return false
			}
		}
		return true
	})
	if _, most, total := slow.counts(); most > limit || total != 10 {
		t.Fatalf("the slow endpoint saw %d at once at most and %d requests; want at most %d and 10", most, total, limit)
	}
}

// A cap outside 1 to 1000 is refused.
func TestDispatcherRefusesABadCap(t *testing.T) {
	t.Parallel()
	for _, n := range []int{-1, 1001} {
		_, err := webhook.New(webhook.Config{Store: hangingStore{}, Client: http.DefaultClient, Owner: "x", MaxInFlightPerEndpoint: n})
		if err == nil {
			t.Errorf("MaxInFlightPerEndpoint %d was accepted", n)
		}
	}
}

// The pending gauge's hook is told how many messages wait, held ones
// included (issue 35 item 4).
func TestDispatcherReportsPending(t *testing.T) {
	counts := make(chan int, 16)
	h := newHarness(t, func(c *webhook.Config) {
		c.PendingInterval = 10 * time.Millisecond
		c.Pending = func(n int) {
			select {
			case counts <- n:
			default:
			}
		}
	})
	h.endpoint("crm")
	off := false
	if _, err := h.store.UpdateWebhookEndpoint(h.ctx, "crm", store.WebhookEndpointUpdate{Enabled: &off}, h.clock.Now()); err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"a", "b", "c"} {
		if _, err := h.store.AddWebhookEvents(h.ctx, []store.WebhookEvent{{EventID: "evt_" + id, Type: heraldtype.WebhookDeliveryFinished,
			OrderingKey: "n_" + id, Data: []byte(`{}`), At: h.clock.Now(), EndpointID: "crm"}}); err != nil {
			t.Fatal(err)
		}
	}
	h.d.Start(h.ctx)
	defer func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := h.d.Stop(ctx); err != nil {
			t.Errorf("stop: %v", err)
		}
	}()
	deadline := time.After(10 * time.Second)
	for {
		select {
		case n := <-counts:
			if n == 3 {
				return
			}
			if n > 3 {
				t.Fatalf("pending %d, want 3", n)
			}
		case <-deadline:
			t.Fatal("the pending count was not reported as 3 within 10 s")
		}
	}
}
