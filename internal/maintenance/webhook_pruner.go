package maintenance

import (
	"context"
	"time"

	"github.com/heraldhq/herald/store"
)

// WebhookStore is the part of the store the webhook message pruner uses.
type WebhookStore interface {
	PruneWebhookMessages(ctx context.Context, cutoff time.Time) (int, error)
}

var _ WebhookStore = store.Store(nil)

// NewWebhookPruner deletes the outbound webhook messages (issue 35 item 4)
// sent or dead longer than retention ago, every interval: one row per event
// and endpoint, so without it the table grows with every delivery. Pending
// ones are never deleted. A zero (or negative) retention keeps them
// forever.
func NewWebhookPruner(st WebhookStore, interval, retention time.Duration) *Pruner {
	return agePruner("webhook_pruner", "webhook_messages", "finished webhook messages", interval, retention, st.PruneWebhookMessages)
}
