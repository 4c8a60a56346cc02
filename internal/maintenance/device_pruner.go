package maintenance

import (
	"context"
	"fmt"
	"time"

	"github.com/heraldhq/herald/internal/leadership"
	"github.com/heraldhq/herald/store"
)

// DeviceStore is the part of the store the device pruner uses.
type DeviceStore interface {
	PruneDevices(ctx context.Context, cutoff time.Time) (int, error)
}

var _ DeviceStore = store.Store(nil)

// DevicePruner deletes devices not seen for a while (S0.2 token hygiene:
// FCM drops tokens idle for 270 days).
type DevicePruner struct {
	store    DeviceStore
	interval time.Duration
	maxAge   time.Duration
}

var _ leadership.Service = (*DevicePruner)(nil)

// NewDevicePruner prunes devices not seen for maxAge every interval. A zero
// (or negative) maxAge never prunes; a zero interval leaves pruning to
// Prune calls.
func NewDevicePruner(st DeviceStore, interval, maxAge time.Duration) *DevicePruner {
	return &DevicePruner{store: st, interval: enabledEvery(interval, maxAge), maxAge: maxAge}
}

// Name implements leadership.Service.
func (p *DevicePruner) Name() string { return "device_pruner" }

// Interval implements leadership.Service.
func (p *DevicePruner) Interval() time.Duration { return p.interval }

// RunOnce implements leadership.Service.
func (p *DevicePruner) RunOnce(ctx context.Context, now time.Time) (leadership.Result, error) {
	n, err := p.Prune(ctx, now)
	return leadership.Result{Counts: map[string]int{"devices": n}}, err
}

// Prune deletes the devices not seen within maxAge of now, once, and
// counts them.
func (p *DevicePruner) Prune(ctx context.Context, now time.Time) (int, error) {
	if p.maxAge <= 0 {
		return 0, nil
	}
	n, err := p.store.PruneDevices(ctx, now.Add(-p.maxAge))
	if err != nil {
		return n, fmt.Errorf("prune devices: %w", err)
	}
	return n, nil
}
