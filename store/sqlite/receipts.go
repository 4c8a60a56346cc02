package sqlite

import (
	"context"

	"github.com/heraldhq/herald/heraldtype"
	"github.com/heraldhq/herald/store"
	"github.com/heraldhq/herald/store/rules"
)

// The receipts' statements (rules.ReceiptSQL), built once.
var (
	receiptSQL       = rules.Unqualified(rules.ReceiptSQL("?1", "?2", "?3", "?4", "?5", "?6"))
	receiptExistsSQL = rules.Unqualified(rules.ReceiptExistsSQL("?1", "?2", "?3"))
)

// RecordReceipts implements store.Store: each receipt's attempt row, in
// one write transaction (SQLite has one writer, so no two batches
// interleave; the unique index still decides what is a duplicate).
func (s *Store) RecordReceipts(ctx context.Context, rs []store.Receipt) ([]heraldtype.ReceiptResult, error) {
	if err := store.CheckReceipts(rs); err != nil {
		return nil, err
	}
	out := make([]heraldtype.ReceiptResult, len(rs))
	if len(rs) == 0 {
		return out, nil
	}
	err := s.inTx(ctx, func(tx *writeTx) error {
		// A receipt written gets its receipt.recorded messages (issue 35
		// item 4) in this transaction; without an enabled endpoint one
		// probe says there are none to write.
		hooks, err := webhooksEnabled(ctx, tx)
		if err != nil {
			return err
		}
		for _, i := range store.ReceiptOrder(rs) {
			r := rs[i]
			n, err := s.execN(ctx, tx, "receipt", receiptSQL,
				r.DeliveryID, r.NotificationID, r.UserID, micros(r.At), string(r.Event), r.Action)
			if err != nil {
				return err
			}
			if n == 1 {
				out[i] = heraldtype.ReceiptRecorded
				if err := s.stopEscalations(ctx, tx, r.Event, []any{r.DeliveryID}); err != nil {
					return err
				}
				if hooks {
					if err := s.receiptMessages(ctx, tx, r.Event, []any{r.DeliveryID}); err != nil {
						return err
					}
				}
				continue
			}
			var found int
			if err := tx.QueryRowContext(ctx, receiptExistsSQL, r.DeliveryID, r.NotificationID, r.UserID).Scan(&found); err != nil {
				return formatError(err, "delivery")
			}
			out[i] = heraldtype.ReceiptNotFound
			if found > 0 {
				out[i] = heraldtype.ReceiptDuplicate
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}
