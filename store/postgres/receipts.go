package postgres

import (
	"context"

	"github.com/jackc/pgx/v5"

	"github.com/heraldhq/herald/heraldtype"
	"github.com/heraldhq/herald/store"
	"github.com/heraldhq/herald/store/rules"
)

// receiptSQL records one receipt (rules.ReceiptSQL) with its
// receipt.recorded messages (issue 35 item 4: written by the statement
// that writes the receipt, and only when it does) and answers whether it
// wrote the row and whether the delivery exists: data-modifying CTEs and
// a count the same snapshot reads, so a batch is one round trip.
var receiptSQL = `WITH r AS (` +
	rules.ReceiptSQL("$1", "$2", "$3::text", "$4::timestamptz", "$5::text", "$6::text") + `
` + rules.ReceiptReturning + `), w AS (
` + rules.ReceiptRecordedSQL(rules.WebhookPostgres, "r") + ` ORDER BY e.id
), ` + escalationStop() + `
SELECT (SELECT count(*) FROM r), (` + rules.ReceiptExistsSQL("$1", "$2", "$3::text") + `)`

// RecordReceipts implements store.Store: every receipt of the batch, in
// store.ReceiptOrder, in one transaction and one round trip. A receipt
// racing the same receipt of another transaction waits on the unique
// index for that transaction's end and then writes nothing (duplicate).
func (s *Store) RecordReceipts(ctx context.Context, rs []store.Receipt) ([]heraldtype.ReceiptResult, error) {
	if err := store.CheckReceipts(rs); err != nil {
		return nil, err
	}
	out := make([]heraldtype.ReceiptResult, len(rs))
	if len(rs) == 0 {
		return out, nil
	}
	order := store.ReceiptOrder(rs)
	query := s.q(receiptSQL)
	err := s.inTx(ctx, func(tx pgx.Tx) error {
		b := &pgx.Batch{}
		for _, i := range order {
			r := rs[i]
			b.Queue(query, r.DeliveryID, r.NotificationID, r.UserID, r.At, string(r.Event), r.Action)
		}
		res := tx.SendBatch(ctx, b)
		for _, i := range order {
			var recorded, found int
			if err := res.QueryRow().Scan(&recorded, &found); err != nil {
				res.Close()
				return formatError(err, "receipt")
			}
			switch {
			case recorded > 0:
				out[i] = heraldtype.ReceiptRecorded
			case found > 0:
				out[i] = heraldtype.ReceiptDuplicate
			default:
				out[i] = heraldtype.ReceiptNotFound
			}
		}
		return formatError(res.Close(), "receipt")
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}
