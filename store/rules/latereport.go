package rules

// The late-report rule (store/latereport.go, issue 24 item 3), written once
// for both stores. rowID names the timeline's insertion order: "id" in
// PostgreSQL, "rowid" in SQLite.

// LateReportSQL is the condition under which an outcome — a row o with
// columns delivery_id and attempt — is recorded as a late report: the
// reaper ended that lease (it wrote the attempt's lease_expired row) and
// nothing has since replayed the delivery (a replay restarts the attempt
// numbers) or already recorded this lease's report (ReportLate is
// idempotent). An outcome the lease guard ignored for any other reason — a
// duplicate of one already recorded, whose first flush's answer was lost —
// finds no such row and writes nothing.
func LateReportSQL(rowID string) string {
	return `EXISTS (SELECT 1 FROM ` + Schema + `delivery_attempts r
	WHERE r.delivery_id = o.delivery_id AND r.attempt = o.attempt AND r.error_code = 'lease_expired'
	AND NOT EXISTS (SELECT 1 FROM ` + Schema + `delivery_attempts p
		WHERE p.delivery_id = o.delivery_id AND p.` + rowID + ` > r.` + rowID + `
		AND (p.outcome = 'replayed' OR (p.outcome = 'late_report' AND p.attempt = o.attempt))))`
}
