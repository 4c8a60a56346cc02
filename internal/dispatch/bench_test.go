package dispatch

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/heraldhq/herald/heraldtype"
	"github.com/heraldhq/herald/internal/cputime"
	"github.com/heraldhq/herald/store"
)

// benchStore hands out jobs without bookkeeping, so the benchmark measures
// the worker's own overhead: claim handling, send slots, leases, outcome
// decisions and batching.
type benchStore struct {
	mu        sync.Mutex
	total     int
	claimed   int
	completed int
	done      chan struct{}
	notif     *heraldtype.Notification
	device    *heraldtype.Device
}

func (s *benchStore) Claim(_ context.Context, p store.ClaimParams) ([]heraldtype.Job, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := min(p.Limit, s.total-s.claimed)
	jobs := make([]heraldtype.Job, n)
	for i := range jobs {
		s.claimed++
		jobs[i] = heraldtype.Job{
			Delivery: heraldtype.Delivery{ID: int64(s.claimed), NotificationID: s.notif.ID, Provider: "fcm",
				State: heraldtype.StateLeased, Attempt: 1, MaxAttempts: 4, RunAt: p.Now},
			Notification: s.notif,
			Device:       s.device,
		}
	}
	return jobs, nil
}

func (s *benchStore) ReportLate(context.Context, []store.Outcome) (int, error) { return 0, nil }

func (s *benchStore) Complete(_ context.Context, o []store.Outcome) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.completed += len(o)
	if s.completed == s.total {
		close(s.done)
	}
	return len(o), nil
}

func (s *benchStore) ExtendLeases(_ context.Context, _ string, ids []int64, _ time.Time) ([]int64, error) {
	return ids, nil
}
func (s *benchStore) ReapExpiredLeases(context.Context, time.Time) (store.ReapResult, error) {
	return store.ReapResult{}, nil
}
func (s *benchStore) NextRunAt(context.Context) (time.Time, bool, error) {
	return time.Time{}, false, nil
}
func (s *benchStore) QueueStats(context.Context) (map[heraldtype.DeliveryState]int, error) {
	return nil, nil
}

func (s *benchStore) AddDeliveryMinutes(context.Context, string, []store.DeliveryMinute) error {
	return nil
}

// BenchmarkWorkerPipeline reports the dispatch overhead per delivery with a
// no-op sender and a store that costs nothing.
func BenchmarkWorkerPipeline(b *testing.B) {
	for _, conc := range []int{1, 64} {
		b.Run(fmt.Sprintf("concurrency=%d", conc), func(b *testing.B) {
			s := &benchStore{total: b.N, done: make(chan struct{}),
				notif:  &heraldtype.Notification{ID: "n1", Title: "t", Body: "b"},
				device: &heraldtype.Device{ID: "d1", Token: "tok", PushOptIn: true, Status: heraldtype.DeviceActive}}
			w, err := New(Config{
				Store:              s,
				Senders:            map[string]Sender{"fcm": senderFunc(func(context.Context, *heraldtype.Message) (string, error) { return "", nil })},
				Concurrency:        conc,
				QueueStatsInterval: -1,
				Logger:             slog.New(slog.DiscardHandler),
			})
			if err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			b.ResetTimer()
			cpu := cputime.Report(b)
			if err := w.Start(context.Background()); err != nil {
				b.Fatal(err)
			}
			<-s.done
			cpu()
			b.StopTimer()
			if err := w.Stop(context.Background()); err != nil {
				b.Fatal(err)
			}
		})
	}
}
