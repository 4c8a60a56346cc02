package postgres

import (
	"context"
	"time"

	"github.com/heraldhq/herald/heraldtype"
	"github.com/heraldhq/herald/store"
	"github.com/heraldhq/herald/store/rules"
)

// ReportLate implements store.Store with one INSERT … SELECT: the outcomes
// come in as arrays (unnest) and rules.LateReportSQL keeps the late
// reports. It writes attempt rows only. It runs only when Complete left
// outcomes unapplied, so it is off the hot path.
func (s *Store) ReportLate(ctx context.Context, outcomes []store.Outcome) (int, error) {
	outcomes, err := store.CheckReportLate(outcomes)
	if err != nil || len(outcomes) == 0 {
		return 0, err
	}
	n := len(outcomes)
	ids, attempts := make([]int64, n), make([]int32, n)
	ats := make([]time.Time, n)
	reports, errs, pmids := make([]string, n), make([]string, n), make([]string, n)
	latencies := make([]int64, n)
	for i := range outcomes {
		o := &outcomes[i]
		r := o.Row()
		ids[i], attempts[i], ats[i] = o.DeliveryID, int32(o.Attempt), o.At
		reports[i], errs[i], pmids[i] = r.Report, store.LateReportError(o), r.ProviderMessageID
		latencies[i] = int64(r.Latency)
	}
	tag, err := s.pool.Exec(ctx, s.q(`INSERT INTO {s}.delivery_attempts
	(delivery_id, attempt, at, outcome, error_code, error, provider_message_id, latency)
SELECT o.delivery_id, o.attempt, o.at, '`+string(heraldtype.OutcomeLateReport)+`', o.report, o.error,
	o.provider_message_id, o.latency
FROM unnest($1::bigint[], $2::int[], $3::timestamptz[], $4::text[], $5::text[], $6::text[], $7::bigint[])
	AS o (delivery_id, attempt, at, report, error, provider_message_id, latency)
WHERE `+rules.LateReportSQL("id")+`
ORDER BY o.delivery_id`), ids, attempts, ats, reports, errs, pmids, latencies)
	if err != nil {
		return 0, formatError(err, "attempts")
	}
	return int(tag.RowsAffected()), nil
}
