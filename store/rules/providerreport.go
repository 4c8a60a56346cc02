package rules

// The provider-report rule (store/providerreport.go, issue 21 item 4),
// written once for both stores.

// ProviderReportSQL selects the attempt row a provider report appends, as
// the body of an INSERT INTO delivery_attempts (delivery_id, attempt, at,
// outcome, error_code, error, provider_message_id, latency): from the
// delivery with the id whose provider message id is the report's or not
// recorded yet (a callback can overtake the worker's outcome), at its
// current attempt, unless that delivery's timeline already holds a report of the
// same status (a provider retries a callback it got no 2xx for). The
// placeholders are the caller's: id, pmid, at, status, error.
func ProviderReportSQL(id, pmid, at, status, errText string) string {
	return `SELECT d.id, d.attempt, ` + at + `, 'provider_report', ` + status + `, ` + errText + `, ` + pmid + `, 0
FROM ` + Schema + `deliveries d
WHERE ` + providerReportDelivery(id, pmid) + `
AND NOT EXISTS (SELECT 1 FROM ` + Schema + `delivery_attempts a
	WHERE a.delivery_id = d.id AND a.outcome = 'provider_report' AND a.error_code = ` + status + `)`
}

// ProviderReportSuppressSQL selects the suppression a provider report
// records (INSERT INTO suppressions (channel, address, reason,
// created_at)): the delivery's channel and address, when it has one.
func ProviderReportSuppressSQL(id, pmid, reason, at string) string {
	return `SELECT d.channel, d.address, ` + reason + `, ` + at + `
FROM ` + Schema + `deliveries d
WHERE ` + providerReportDelivery(id, pmid) + ` AND d.address <> ''
ON CONFLICT (channel, address) DO UPDATE SET reason = excluded.reason, created_at = excluded.created_at`
}

// ProviderReportExistsSQL reports whether the delivery a report names
// exists (SELECT count(*)).
func ProviderReportExistsSQL(id, pmid string) string {
	return `SELECT count(*) FROM ` + Schema + `deliveries d WHERE ` + providerReportDelivery(id, pmid)
}

// providerReportDelivery is the delivery a report names: its id, and the
// provider message id its send recorded — or none yet, as when the status
// callback overtakes the worker's batched outcome write. The provider
// signed the pairing (Twilio signs the callback URL that names the
// delivery), so the id check is what matters; the message id keeps the
// callbacks of an earlier send of a replayed delivery off the new one.
func providerReportDelivery(id, pmid string) string {
	return `d.id = ` + id + ` AND (d.provider_message_id = ` + pmid + ` OR d.provider_message_id = '')`
}
