package rules

// The rule engine's writes both stores make (issue 20 items 1 and 4,
// S3.1, S3.5), each one statement written once here with the store's
// table names and markers.

// EventInsert is one applied event's values for EventInsertSQL.
type EventInsert struct {
	Source, Namespace, ID, Name, Subject, UserID, RequestHash string
	Version                                                   int64
	Outcome, Now                                              any
}

// EventInsertSQL records an applied event by (source, namespace, id); it
// changes no row when the event was recorded before (a redelivery, or
// the same id with another body: the stored hash tells them apart), and
// the store then writes nothing else of it.
func EventInsertSQL(table string, e EventInsert, mark Marker) string {
	return `INSERT INTO ` + table + ` (source, namespace, id, name, subject, user_id, version, request_hash, outcome, received_at) VALUES (` +
		mark(e.Source) + `, ` + mark(e.Namespace) + `, ` + mark(e.ID) + `, ` + mark(e.Name) + `, ` + mark(e.Subject) + `, ` +
		mark(e.UserID) + `, ` + mark(e.Version) + `, ` + mark(e.RequestHash) + `, ` + mark(e.Outcome) + `, ` + mark(e.Now) +
		`) ON CONFLICT (source, namespace, id) DO NOTHING`
}

// EventSelectSQL reads an event's outcome and request hash.
func EventSelectSQL(table string, source, namespace, id string, mark Marker) string {
	return `SELECT outcome, request_hash FROM ` + table + ` WHERE source = ` + mark(source) + ` AND namespace = ` +
		mark(namespace) + ` AND id = ` + mark(id)
}

// SubjectSelectSQL reads a source's subject.
func SubjectSelectSQL(table, source, subject string, mark Marker) string {
	return `SELECT version, seq, state FROM ` + table + ` WHERE source = ` + mark(source) + ` AND subject = ` + mark(subject)
}

// SubjectCreateSQL creates a source's subject's row (seq 1); it changes
// no row when another event created it first (the engine then reads it
// and decides again).
func SubjectCreateSQL(table, source, subject string, version int64, state, now any, mark Marker) string {
	return `INSERT INTO ` + table + ` (source, subject, version, seq, state, updated_at) VALUES (` + mark(source) + `, ` +
		mark(subject) + `, ` + mark(version) + `, 1, ` + mark(state) + `, ` + mark(now) + `) ON CONFLICT (source, subject) DO NOTHING`
}

// SubjectUpdateSQL writes a subject's row, guarded by the seq the engine
// read: when another event of the subject was applied in between, it
// changes no row. The version only grows (an unordered event keeps it).
func SubjectUpdateSQL(table, source, subject string, seq, version int64, state, now any, mark Marker) string {
	return `UPDATE ` + table + ` SET version = CASE WHEN ` + mark(version) + ` > version THEN ` + mark(version) + ` ELSE version END, seq = seq + 1, state = ` +
		mark(state) + `, updated_at = ` + mark(now) + ` WHERE source = ` + mark(source) + ` AND subject = ` + mark(subject) +
		` AND seq = ` + mark(seq)
}

// RuleRunAdvance is one batch's values for RuleRunAdvanceSQL.
type RuleRunAdvance struct {
	Rule, RunID string
	Version     int64
	Cursor      string
	Recipients  int
	Enqueued    int
	LastError   string
	// Finish is "" (still running), "done" or "failed".
	Finish string
	Now    any
}

// RuleRunAdvanceSQL is the guarded UPDATE that takes a rule run's batch:
// it applies only while the run is running with the version the runner
// saw, so a second runner of the same run (a leadership hand-over) makes
// it change no row, and the store then writes nothing of the batch.
func RuleRunAdvanceSQL(table string, v RuleRunAdvance, mark Marker) string {
	set := `cursor = ` + mark(v.Cursor) + `, recipients = recipients + ` + mark(v.Recipients) +
		`, enqueued = enqueued + ` + mark(v.Enqueued) + `, updated_at = ` + mark(v.Now) + `, version = version + 1`
	if v.LastError != "" {
		set += `, last_error = ` + mark(v.LastError)
	}
	if v.Finish != "" {
		set += `, state = ` + mark(v.Finish) + `, finished_at = ` + mark(v.Now)
	}
	return `UPDATE ` + table + ` SET ` + set + ` WHERE rule = ` + mark(v.Rule) + ` AND run_id = ` + mark(v.RunID) +
		` AND version = ` + mark(v.Version) + ` AND state = 'running'`
}

// RuleRunRetrySQL is the guarded UPDATE that sends a failed rule run
// again with its message rendered anew: it applies only while the run is
// failed with the version the caller read, so two replays of one dead
// event cannot both restart it. The cursor and counts are kept: a run
// that failed on its message reached no one.
func RuleRunRetrySQL(table, rule, runID string, version int64, job, now any, mark Marker) string {
	return `UPDATE ` + table + ` SET state = 'running', job = ` + mark(job) + `, last_error = '', finished_at = NULL,
	updated_at = ` + mark(now) + `, version = version + 1 WHERE rule = ` + mark(rule) + ` AND run_id = ` + mark(runID) +
		` AND version = ` + mark(version) + ` AND state = 'failed'`
}

// EventPruneSQL deletes up to limit event rows received before cutoff,
// oldest first. A redelivery older than the retention is applied again.
func EventPruneSQL(table string, cutoff any, limit int, mark Marker) string {
	return `DELETE FROM ` + table + ` WHERE (source, namespace, id) IN (SELECT source, namespace, id FROM ` + table +
		` WHERE received_at < ` + mark(cutoff) + ` ORDER BY received_at LIMIT ` + mark(limit) + `)`
}

// RuleRunPruneSQL deletes up to limit rule runs that finished before
// cutoff, oldest first; running runs are kept.
func RuleRunPruneSQL(table string, cutoff any, limit int, mark Marker) string {
	return `DELETE FROM ` + table + ` WHERE (rule, run_id) IN (SELECT rule, run_id FROM ` + table +
		` WHERE state <> 'running' AND finished_at < ` + mark(cutoff) + ` ORDER BY finished_at LIMIT ` + mark(limit) + `)`
}
