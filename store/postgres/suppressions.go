package postgres

import (
	"context"

	"github.com/jackc/pgx/v5"

	"github.com/heraldhq/herald/heraldtype"
	"github.com/heraldhq/herald/store"
	"github.com/heraldhq/herald/store/rules"
)

// The suppression list: store.Channels' suppression methods and the
// suppression an outcome records (store.Dead.SuppressAddress).

// ListSuppressions implements store.Channels.
func (s *Store) ListSuppressions(ctx context.Context, channel heraldtype.Channel) ([]heraldtype.Suppression, error) {
	if err := rules.CheckSuppressionChannel(channel, true); err != nil {
		return nil, err
	}
	rows, err := s.pool.Query(ctx, s.q(`SELECT channel, address, reason, created_at FROM {s}.suppressions
WHERE $1 = '' OR channel = $1 ORDER BY created_at DESC, channel, address`), string(channel))
	if err != nil {
		return nil, formatError(err, "suppressions")
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (heraldtype.Suppression, error) {
		var sp heraldtype.Suppression
		err := r.Scan(&sp.Channel, &sp.Address, &sp.Reason, &sp.CreatedAt)
		sp.CreatedAt = utc(sp.CreatedAt)
		return sp, err
	})
	if err != nil {
		return nil, formatError(err, "suppressions")
	}
	if out == nil {
		out = []heraldtype.Suppression{}
	}
	return out, nil
}

// DeleteSuppression implements store.Channels.
func (s *Store) DeleteSuppression(ctx context.Context, channel heraldtype.Channel, address string) error {
	if err := rules.CheckDeleteSuppression(channel, address); err != nil {
		return err
	}
	tag, err := s.pool.Exec(ctx, s.q(`DELETE FROM {s}.suppressions WHERE channel = $1 AND address = $2`),
		string(channel), address)
	return affectedOne(tag.RowsAffected(), err, "suppression of "+quote(address)+" on "+string(channel))
}

// queueSuppressions queues, for each outcome that asks for it, the
// suppression of its delivery's channel and address, guarded by the
// delivery's lease like every outcome write and queued before the
// statement that applies the outcomes (which releases the lease), so a
// suppression is recorded exactly when its outcome is applied. A later
// suppression of the same address replaces the reason and time. A
// delivery without an address (push, in-app) suppresses nothing.
func (s *Store) queueSuppressions(b *pgx.Batch, os []store.Outcome) {
	for i := range os {
		o := &os[i]
		r := o.Row()
		if !r.Suppress {
			continue
		}
		b.Queue(s.q(`INSERT INTO {s}.suppressions (channel, address, reason, created_at)
SELECT d.channel, d.address, $4, $5 FROM {s}.deliveries d,
	(SELECT $1::bigint AS id, $2::text AS owner, $3::int AS attempt) o
WHERE d.id = o.id AND `+leasedBy+` AND d.address <> ''
ON CONFLICT (channel, address) DO UPDATE SET reason = excluded.reason, created_at = excluded.created_at`),
			o.DeliveryID, o.Owner, o.Attempt, r.SuppressReason, o.At)
	}
}
