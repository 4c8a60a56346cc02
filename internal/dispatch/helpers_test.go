package dispatch

import (
	"context"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"github.com/heraldhq/herald/heraldtype"
	"github.com/heraldhq/herald/internal/metrics"
)

func start() time.Time { return time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC) }

// fakeClock is the injected clock; tests move it by hand.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *fakeClock) Advance(d time.Duration) time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
	return c.t
}

// senderFunc adapts a function to Sender.
type senderFunc func(ctx context.Context, m *heraldtype.Message) (string, error)

func (f senderFunc) Send(ctx context.Context, m *heraldtype.Message) (string, error) {
	return f(ctx, m)
}

// okSender accepts everything.
func okSender() Sender {
	return senderFunc(func(_ context.Context, m *heraldtype.Message) (string, error) { return "pm-" + m.Key, nil })
}

// scripted answers its calls with errs in order, then succeeds.
func scripted(errs ...error) Sender {
	var mu sync.Mutex
	return senderFunc(func(_ context.Context, m *heraldtype.Message) (string, error) {
		mu.Lock()
		defer mu.Unlock()
		if len(errs) == 0 {
			return "pm-" + m.Key, nil
		}
		err := errs[0]
		errs = errs[1:]
		return "", err
	})
}

type harness struct {
	t       *testing.T
	store   *fakeStore
	clock   *fakeClock
	metrics *metrics.Metrics
	w       *Worker
}

// newHarness builds a worker on a fake store and a fake clock, with jitter
// draws of 0 (exact schedules) unless mod changes them.
func newHarness(t *testing.T, senders map[string]Sender, mod func(*Config)) *harness {
	t.Helper()
	h := &harness{t: t, store: newFakeStore(), clock: &fakeClock{t: start()}, metrics: metrics.New(prometheus.NewRegistry())}
	cfg := Config{
		Store:   h.store,
		Senders: senders,
		Owner:   "worker-a",
		Now:     h.clock.Now,
		Rand:    func() float64 { return 0 },
		Logger:  slog.New(slog.DiscardHandler),
		Metrics: h.metrics,
	}
	if mod != nil {
		mod(&cfg)
	}
	w, err := New(cfg)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	// The fake senders list no codes (CodeLister); declare the ones the
	// tests send so their metrics keep their own label values.
	h.metrics.DeclareCodes(fakeCodes...)
	h.w = w
	return h
}

// fakeCodes are the provider codes the tests' fake senders answer with.
var fakeCodes = []string{"INTERNAL", "INVALID_ARGUMENT", "QUOTA_EXCEEDED", "SENDER_ID_MISMATCH",
	"THIRD_PARTY_AUTH_ERROR", "UNAVAILABLE", "UNREGISTERED", "network", "twilio_21610"}

// add enqueues a delivery due now.
func (h *harness) add(f fakeDelivery) int64 {
	if f.runAt.IsZero() {
		f.runAt = h.clock.Now()
	}
	return h.store.add(f)
}

// runOnce runs one cycle and expects it to claim want deliveries.
func (h *harness) runOnce(want int) {
	h.t.Helper()
	n, err := h.w.RunOnce(context.Background())
	if err != nil {
		h.t.Fatalf("RunOnce: %v", err)
	}
	if n != want {
		h.t.Fatalf("RunOnce claimed %d, want %d", n, want)
	}
}

func counter(c prometheus.Counter) float64 {
	var m dto.Metric
	if err := c.Write(&m); err != nil {
		panic(err)
	}
	return m.GetCounter().GetValue()
}

func gauge(g prometheus.Gauge) float64 {
	var m dto.Metric
	if err := g.Write(&m); err != nil {
		panic(err)
	}
	return m.GetGauge().GetValue()
}

func histogramCount(o prometheus.Observer) uint64 {
	var m dto.Metric
	if err := o.(prometheus.Metric).Write(&m); err != nil {
		panic(err)
	}
	return m.GetHistogram().GetSampleCount()
}

// eventually polls cond until it holds or a deadline passes; async work is
// awaited this way, never by sleeping.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(time.Millisecond)
	}
}

// recv waits for one value on ch, failing the test after a deadline.
func recv[T any](t *testing.T, what string, ch <-chan T) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(10 * time.Second):
		t.Fatalf("timed out waiting for %s", what)
		panic("unreachable")
	}
}

func sendErr(class heraldtype.ErrorClass, code string) *heraldtype.SendError {
	return &heraldtype.SendError{Class: class, Code: code, Message: code + " from the fake"}
}
