package sqlite

import (
	"context"

	"github.com/heraldhq/herald/heraldtype"
	"github.com/heraldhq/herald/store"
	"github.com/heraldhq/herald/store/rules"
)

// ReportLate implements store.Store: one INSERT … SELECT per chunk of
// outcomes, which brings them in as a VALUES list and keeps those
// rules.LateReportSQL says are late reports. It writes attempt rows only.
func (s *Store) ReportLate(ctx context.Context, outcomes []store.Outcome) (int, error) {
	outcomes, err := store.CheckReportLate(outcomes)
	if err != nil || len(outcomes) == 0 {
		return 0, err
	}
	n := 0
	err = s.inTx(ctx, func(tx *writeTx) error {
		n = 0
		return insertBatches(outcomes, func(os []store.Outcome) error {
			args := make([]any, 0, len(os)*7)
			for i := range os {
				o := &os[i]
				r := o.Row()
				args = append(args, o.DeliveryID, o.Attempt, micros(o.At), r.Report, store.LateReportError(o),
					r.ProviderMessageID, int64(r.Latency))
			}
			res, err := s.exec(ctx, tx, `WITH o (delivery_id, attempt, at, report, error, provider_message_id, latency)
AS (VALUES `+rowMarks(len(os), 7)+`)
INSERT INTO delivery_attempts (delivery_id, attempt, at, outcome, error_code, error, provider_message_id, latency)
SELECT delivery_id, attempt, at, '`+string(heraldtype.OutcomeLateReport)+`', report, error, provider_message_id, latency
FROM o WHERE `+rules.Unqualified(rules.LateReportSQL("rowid")), args...)
			added, err := affected(res, err, "attempts")
			n += added
			return err
		})
	})
	if err != nil {
		return 0, err
	}
	return n, nil
}
