package maintenance

import (
	"context"
	"time"

	"github.com/heraldhq/herald/store"
)

// EventStore is the part of the store event retention uses.
type EventStore interface {
	PruneEvents(ctx context.Context, cutoff time.Time, limit int) (int, error)
}

var _ EventStore = store.Store(nil)

// NewEventPruner deletes, every interval, the records of events applied
// longer than retention ago and the rule runs finished that long ago
// (issue 20), in batches of pruneBatch. A redelivery of an event older
// than the retention is applied again, so the retention must outlast the
// longest time a Kafka record can wait before it is redelivered. A zero
// (or negative) retention keeps them forever.
func NewEventPruner(st EventStore, interval, retention time.Duration) *Pruner {
	return agePruner("event_pruner", "events", "event records and finished rule runs", interval, retention,
		func(ctx context.Context, cutoff time.Time) (int, error) {
			total := 0
			for ctx.Err() == nil {
				n, err := st.PruneEvents(ctx, cutoff, pruneBatch)
				total += n
				if err != nil || n < pruneBatch {
					return total, err
				}
			}
			return total, ctx.Err()
		})
}
