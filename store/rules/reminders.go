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

// ReminderFireSQL is the guarded UPDATE of one fire of FireReminders
// (S2.4, S2.6) on table (the store's name for reminders): it applies
// only while the reminder is active, has the version the scheduler
// claimed and is leased by owner, so a reminder updated, stopped,
// deleted or claimed by another scheduler since the claim is left alone
// (the statement changes no row, and the store enqueues nothing). A
// sent fire is counted (Sends occurrences) and recorded as the last send (its
// notification notificationID, at now); the reminder is then due at
// fire.NextAt or stopped with fire.StopReason; the lease is dropped and
// the version moves on.
func ReminderFireSQL(table, owner string, f FireValues, mark Marker) string {
	set := ``
	if f.Sends > 0 {
		set = `sent_count = sent_count + ` + mark(f.Sends) + `, last_notification_id = ` + mark(f.NotificationID) +
			`, last_sent_at = ` + mark(f.Now) + `, `
	}
	if f.StopReason != "" {
		set += ReminderStopSet(f.StopReason, f.Now, mark)
	} else {
		set += `next_at = ` + mark(f.NextAt) + `, next_occurrence = ` + mark(f.NextOccurrence) + `, lease_owner = '', lease_until = NULL, version = version + 1, updated_at = ` +
			mark(f.Now)
	}
	return `UPDATE ` + table + ` SET ` + set + ` WHERE id = ` + mark(f.ID) + ` AND version = ` + mark(f.Version) +
		` AND lease_owner = ` + mark(owner) + ` AND state = 'active'`
}

// FireValues are the values of one fire's UPDATE, each in the store's
// encoding (Now and NextAt are times as the store writes them).
type FireValues struct {
	ID      string
	Version int64
	// Sends is how many occurrences the fire sent (sent_count grows by it).
	Sends                       int
	NotificationID              string
	StopReason                  string
	Now, NextAt, NextOccurrence any
}
