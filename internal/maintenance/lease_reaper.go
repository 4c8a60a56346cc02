package maintenance

import (
	"context"
	"fmt"
	"time"

	"github.com/heraldhq/herald/internal/leadership"
	"github.com/heraldhq/herald/internal/metrics"
	"github.com/heraldhq/herald/store"
)

// LeaseStore is the part of the store the lease reaper uses.
type LeaseStore interface {
	ReapExpiredLeases(ctx context.Context, now time.Time) (store.ReapResult, error)
}

var _ LeaseStore = store.Store(nil)

// LeaseReaper reclaims deliveries whose worker died mid-send (S4.2, S1.3):
// at_least_once ones go back to pending, at_most_once ones become unknown.
// Only the leader reaps, so the workers never race each other over expired
// leases.
type LeaseReaper struct {
	store    LeaseStore
	interval time.Duration
	timeout  time.Duration
	metrics  *metrics.Metrics
}

var _ leadership.Service = (*LeaseReaper)(nil)

// NewLeaseReaper reaps st every interval (zero: never). Each reap is bounded
// by timeout, the leader TTL: a database that stopped answering fails the
// reap, which is retried at the next interval, instead of holding it
// forever. Reclaimed leases are counted in m.
func NewLeaseReaper(st LeaseStore, interval, timeout time.Duration, m *metrics.Metrics) *LeaseReaper {
	return &LeaseReaper{store: st, interval: max(interval, 0), timeout: timeout, metrics: m}
}

// Name implements leadership.Service.
func (r *LeaseReaper) Name() string { return "lease_reaper" }

// Interval implements leadership.Service.
func (r *LeaseReaper) Interval() time.Duration { return r.interval }

// RunOnce reclaims the leases expired at now. The result is a warning when
// it reclaimed any: each is a worker that died mid-send.
func (r *LeaseReaper) RunOnce(ctx context.Context, now time.Time) (leadership.Result, error) {
	if r.timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, r.timeout)
		defer cancel()
	}
	res, err := r.store.ReapExpiredLeases(ctx, now)
	if err != nil {
		return leadership.Result{}, fmt.Errorf("reap expired leases: %w", err)
	}
	if r.metrics != nil {
		r.metrics.Requeued.Add(float64(res.Requeued))
		r.metrics.Unknown.Add(float64(res.Unknown))
	}
	return leadership.Result{Counts: map[string]int{"requeued": res.Requeued, "unknown": res.Unknown}, Warn: true}, nil
}
