package maintenance

import (
	"context"
	"time"

	"github.com/heraldhq/herald/store"
)

// DeviceStore is the part of the store the device pruner uses.
type DeviceStore interface {
	PruneDevices(ctx context.Context, cutoff time.Time) (int, error)
}

var _ DeviceStore = store.Store(nil)

// NewDevicePruner deletes devices not seen for maxAge, every interval
// (S0.2 token hygiene: FCM drops tokens idle for 270 days). A zero (or
// negative) maxAge never prunes; a zero interval leaves pruning to Prune
// calls.
func NewDevicePruner(st DeviceStore, interval, maxAge time.Duration) *Pruner {
	return agePruner("device_pruner", "devices", "devices", interval, maxAge, st.PruneDevices)
}
