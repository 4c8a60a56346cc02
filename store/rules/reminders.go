package rules

import "github.com/heraldhq/herald/heraldtype"

// EventStops is the event-stop rule of a reminder (issue 19 item 3): an
// event named event whose data is data stops the reminder whose stop
// conditions are stop when stop.OnEvent is that name and every field of
// stop.Match is present in data with the same value (no Match: the name
// alone). Whose reminders an event reaches (its user) is the caller's
// selection; both stores select the candidates by user and event name in
// SQL and decide with this function, in the transaction that stops them.
func EventStops(stop heraldtype.ReminderStop, event string, data map[string]string) bool {
	if event == "" || stop.OnEvent != event {
		return false
	}
	for k, want := range stop.Match {
		if got, ok := data[k]; !ok || got != want {
			return false
		}
	}
	return true
}

// The reminder writes both stores make (issue 19, S2.3, S2.4), each one
// SQL text the stores embed, so that what an update keeps, what a fire
// advances and what a stop clears cannot drift between them. The
// statements' values reach them through a Marker, which adds a value to
// the statement's arguments (in the store's own encoding: SQLite's
// microseconds, PostgreSQL's timestamptz) and returns its parameter
// marker ("?" or "$n"). The markers are asked for in the order they
// appear in the text, since SQLite binds "?" by position.

// Marker adds v to a statement's arguments and returns its marker.
type Marker func(v any) string

// ReminderUpdateSQL is the SET list of PutReminder's upsert when a
// reminder exists under the key (S2.3): the content, schedule, stop
// conditions, quiet hours and next_at are replaced from the row the
// upsert proposed (excluded); id, created_at, sent_count and the last
// send are kept; the reminder is active again with no lease, and its
// version moves on so that a fire claimed before the update writes
// nothing.
const ReminderUpdateSQL = `user_id = excluded.user_id, type = excluded.type, title = excluded.title,
	body = excluded.body, data = excluded.data, channels = excluded.channels, priority = excluded.priority,
	data_only = excluded.data_only, schedule = excluded.schedule, max_sends = excluded.max_sends,
	expires_at = excluded.expires_at, on_event = excluded.on_event, match = excluded.match,
	quiet_hours = excluded.quiet_hours, next_at = excluded.next_at, next_occurrence = excluded.next_occurrence,
	schedule_start = excluded.schedule_start, updated_at = excluded.updated_at,
	state = 'active', stop_reason = '', stopped_at = NULL, lease_owner = '', lease_until = NULL,
	version = reminders.version + 1`

// ReminderStopSet is the SET list that stops a reminder (StopReminders,
// and a fire with a stop reason): stopped for reason at now, no next
// occurrence, no lease, a new version.
func ReminderStopSet(reason string, now any, mark Marker) string {
	return `state = 'stopped', stop_reason = ` + mark(reason) + `, stopped_at = ` + mark(now) +
		`, next_at = NULL, next_occurrence = NULL, lease_owner = '', lease_until = NULL, version = version + 1, updated_at = ` + mark(now)
}

// ReminderDueSQL is the condition of a reminder a claim at now may take
// (S2.4): active, due, and not held by a live lease — a lease that ended
// (its scheduler died) no longer holds it.
func ReminderDueSQL(now any, mark Marker) string {
	return `state = 'active' AND next_at <= ` + mark(now) + ` AND (lease_until IS NULL OR lease_until <= ` + mark(now) + `)`
}

// ReminderFireSQL is the guarded UPDATE of a batch of fires of
// FireReminders (S2.4, S2.6) on table (the store's name for reminders),
// one statement for the whole batch. source is a FROM item in the
// store's dialect that yields one row per fire, named x, with the
// columns (reminder_id, claimed_version, sends, notification_id,
// stop_reason, next_at, next_occurrence) in the store's encoding; it is called with the
// statement's Marker where its text goes, so that its values are marked
// in order.
//
// A fire applies only while its reminder is active, has the version the
// scheduler claimed and is leased by owner, so a reminder updated,
// stopped, deleted or claimed by another scheduler since the claim is
// left alone (no row, and the store enqueues nothing for it). A sent fire
// (sends > 0) is counted and recorded as the last send (its notification,
// at now); the reminder is then due at next_at, or stopped for
// stop_reason as ReminderStopSet stops one; the lease is dropped and the
// version moves on. The statement returns the id and the new version of
// each reminder it changed: the applied fire is the one of that id whose
// version is one less. At most one fire per (id, version) may be in x.
func ReminderFireSQL(table string, source func(Marker) string, owner, now any, mark Marker) string {
	stopped := `x.stop_reason <> ''`
	set := `sent_count = r.sent_count + x.sends,
	last_notification_id = CASE WHEN x.sends > 0 THEN x.notification_id ELSE r.last_notification_id END,
	last_sent_at = CASE WHEN x.sends > 0 THEN ` + mark(now) + ` ELSE r.last_sent_at END,
	state = CASE WHEN ` + stopped + ` THEN 'stopped' ELSE 'active' END, stop_reason = x.stop_reason,
	stopped_at = CASE WHEN ` + stopped + ` THEN ` + mark(now) + ` ELSE r.stopped_at END,
	next_at = CASE WHEN ` + stopped + ` THEN NULL ELSE x.next_at END,
	next_occurrence = CASE WHEN ` + stopped + ` THEN NULL ELSE x.next_occurrence END,
	lease_owner = '', lease_until = NULL, version = r.version + 1, updated_at = ` + mark(now)
	from := source(mark)
	return `UPDATE ` + table + ` AS r SET ` + set + `
FROM ` + from + `
WHERE r.id = x.reminder_id AND r.version = x.claimed_version AND r.lease_owner = ` + mark(owner) + ` AND r.state = 'active'
RETURNING id, version`
}
