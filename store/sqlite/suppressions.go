package sqlite

import (
	"context"

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
	rows, err := s.read.QueryContext(ctx, `SELECT channel, address, reason, created_at FROM suppressions
WHERE ? = '' OR channel = ? ORDER BY created_at DESC, channel, address`, string(channel), string(channel))
	if err != nil {
		return nil, formatError(err, "suppressions")
	}
	defer rows.Close()
	out := []heraldtype.Suppression{}
	for rows.Next() {
		var sp heraldtype.Suppression
		var created int64
		if err := rows.Scan(&sp.Channel, &sp.Address, &sp.Reason, &created); err != nil {
			return nil, formatError(err, "suppressions")
		}
		sp.CreatedAt = fromMicros(created)
		out = append(out, sp)
	}
	return out, formatError(rows.Err(), "suppressions")
}

// DeleteSuppression implements store.Channels.
func (s *Store) DeleteSuppression(ctx context.Context, channel heraldtype.Channel, address string) error {
	if err := rules.CheckDeleteSuppression(channel, address); err != nil {
		return err
	}
	return s.inTx(ctx, func(tx *writeTx) error {
		res, err := s.exec(ctx, tx, `DELETE FROM suppressions WHERE channel = ? AND address = ?`, string(channel), address)
		return affectedOne(res, err, "suppression of "+quote(address)+" on "+string(channel))
	})
}

// suppress records the suppression of an outcome whose guard holds (?1
// to ?3 are the guard of leasedBy): the delivery's channel and address,
// replacing the reason and time of an earlier suppression. A delivery
// without an address (push, in-app) suppresses nothing.
func (s *Store) suppress(ctx context.Context, tx *writeTx, o *store.Outcome, reason string, guard []any) error {
	_, err := s.exec(ctx, tx, `INSERT INTO suppressions (channel, address, reason, created_at)
SELECT channel, address, ?4, ?5 FROM deliveries WHERE `+leasedBy+` AND address <> ''
ON CONFLICT (channel, address) DO UPDATE SET reason = excluded.reason, created_at = excluded.created_at`,
		append(guard, reason, micros(o.At))...)
	return formatError(err, "suppression")
}
