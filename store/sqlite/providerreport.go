package sqlite

import (
	"context"

	"github.com/heraldhq/herald/store"
	"github.com/heraldhq/herald/store/rules"
)

// RecordProviderReport implements store.Store: rules.ProviderReportSQL's
// attempt row and, when asked, the address's suppression, in one write
// transaction. It moves no delivery.
func (s *Store) RecordProviderReport(ctx context.Context, r store.ProviderReport) (bool, error) {
	if err := store.CheckProviderReport(&r); err != nil {
		return false, err
	}
	found := false
	err := s.inTx(ctx, func(tx *writeTx) error {
		var n int
		if err := tx.QueryRowContext(ctx, rules.Unqualified(rules.ProviderReportExistsSQL("?1", "?2")),
			r.DeliveryID, r.ProviderMessageID).Scan(&n); err != nil {
			return formatError(err, "delivery")
		}
		if found = n > 0; !found {
			return nil
		}
		if _, err := s.exec(ctx, tx, `INSERT INTO delivery_attempts
	(delivery_id, attempt, at, outcome, error_code, error, provider_message_id, latency)
`+rules.Unqualified(rules.ProviderReportSQL("?1", "?2", "?3", "?4", "?5")),
			r.DeliveryID, r.ProviderMessageID, micros(r.At), r.Status, r.Error); err != nil {
			return formatError(err, "attempts")
		}
		if r.SuppressReason == "" {
			return nil
		}
		_, err := s.exec(ctx, tx, `INSERT INTO suppressions (channel, address, reason, created_at)
`+rules.Unqualified(rules.ProviderReportSuppressSQL("?1", "?2", "?3", "?4")),
			r.DeliveryID, r.ProviderMessageID, r.SuppressReason, micros(r.At))
		return formatError(err, "suppression")
	})
	return found, err
}
