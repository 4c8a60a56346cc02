package postgres

import (
	"context"

	"github.com/jackc/pgx/v5"

	"github.com/heraldhq/herald/store"
	"github.com/heraldhq/herald/store/rules"
)

// RecordProviderReport implements store.Store: rules.ProviderReportSQL's
// attempt row and, when asked, the address's suppression, in one
// transaction. It moves no delivery.
func (s *Store) RecordProviderReport(ctx context.Context, r store.ProviderReport) (bool, error) {
	if err := store.CheckProviderReport(&r); err != nil {
		return false, err
	}
	found := false
	err := s.inTx(ctx, func(tx pgx.Tx) error {
		var n int
		if err := tx.QueryRow(ctx, s.q(rules.ProviderReportExistsSQL("$1", "$2")), r.DeliveryID, r.ProviderMessageID).Scan(&n); err != nil {
			return formatError(err, "delivery")
		}
		if found = n > 0; !found {
			return nil
		}
		if _, err := tx.Exec(ctx, s.q(`INSERT INTO {s}.delivery_attempts
	(delivery_id, attempt, at, outcome, error_code, error, provider_message_id, latency)
`+rules.ProviderReportSQL("$1", "$2", "$3::timestamptz", "$4::text", "$5::text")),
			r.DeliveryID, r.ProviderMessageID, r.At, r.Status, r.Error); err != nil {
			return formatError(err, "attempts")
		}
		if r.SuppressReason == "" {
			return nil
		}
		_, err := tx.Exec(ctx, s.q(`INSERT INTO {s}.suppressions (channel, address, reason, created_at)
`+rules.ProviderReportSuppressSQL("$1", "$2", "$3::text", "$4::timestamptz")),
			r.DeliveryID, r.ProviderMessageID, r.SuppressReason, r.At)
		return formatError(err, "suppression")
	})
	return found, err
}
