package rules

// The provider-report rule (store/providerreport.go, issue 21 item 4),
// written once for both stores.

// ProviderReportSQL selects the attempt row a provider report appends, as
// the body of an INSERT INTO delivery_attempts (delivery_id, attempt, at,
// outcome, error_code, error, provider_message_id, latency): from the
// delivery that has both the id and the provider message id, at its current
// attempt, unless that delivery's timeline already holds a report of the
// same status (a provider retries a callback it got no 2xx for). The
// placeholders are the caller's: id, pmid, at, status, error.
func ProviderReportSQL(id, pmid, at, status, errText string) string {
	return `SELECT d.id, d.attempt, ` + at + `, 'provider_report', ` + status + `, ` + errText + `, d.provider_message_id, 0
FROM ` + Schema + `deliveries d
WHERE d.id = ` + id + ` AND d.provider_message_id = ` + pmid + `
AND NOT EXISTS (SELECT 1 FROM ` + Schema + `delivery_attempts a
	WHERE a.delivery_id = d.id AND a.outcome = 'provider_report' AND a.error_code = ` + status + `)`
}

// ProviderReportSuppressSQL selects the suppression a provider report
// records (INSERT INTO suppressions (channel, address, reason,
// created_at)): the delivery's channel and address, when it has one.
func ProviderReportSuppressSQL(id, pmid, reason, at string) string {
	return `SELECT d.channel, d.address, ` + reason + `, ` + at + `
FROM ` + Schema + `deliveries d
WHERE d.id = ` + id + ` AND d.provider_message_id = ` + pmid + ` AND d.address <> ''
ON CONFLICT (channel, address) DO UPDATE SET reason = excluded.reason, created_at = excluded.created_at`
}

// ProviderReportExistsSQL reports whether the delivery a report names
// exists (SELECT count(*)).
func ProviderReportExistsSQL(id, pmid string) string {
	return `SELECT count(*) FROM ` + Schema + `deliveries d WHERE d.id = ` + id + ` AND d.provider_message_id = ` + pmid
}
