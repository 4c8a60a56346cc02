package maintenance

import (
	"context"
	"time"

	"github.com/heraldhq/herald/store"
)

// DigestStore is the part of the store the digest pruner uses.
type DigestStore interface {
	PruneDigests(ctx context.Context, cutoff time.Time) (int, error)
}

var _ DigestStore = store.Store(nil)

// NewDigestPruner deletes the digests (issue 36 item 1) sent or failed
// longer than retention ago, with their items, every interval. A digest
// still collecting or being sent is never deleted. A zero (or negative)
// retention keeps them forever.
func NewDigestPruner(st DigestStore, interval, retention time.Duration) *Pruner {
	return agePruner("digest_pruner", "digests", "sent digests", interval, retention, st.PruneDigests)
}
