package heraldtype

import "time"

// Overview is the state of the delivery pipeline at a glance: what the
// console's overview shows (Client.Overview). Every figure is read from a
// partial index or from the per-minute rollup, never by counting a big
// table, so it stays cheap with millions of deliveries; a count that
// reached its cap says so (Capped) instead of counting on.
type Overview struct {
	// At is when the figures were read.
	At time.Time `json:"at"`
	// Queue counts the deliveries waiting (pending) and being sent
	// (leased), by state and channel.
	Queue []QueueCount `json:"queue"`
	// QueueCapped says a state had more deliveries than the cap
	// (OverviewCountCap): its counts are the first that many.
	QueueCapped bool `json:"queue_capped,omitempty"`
	// OldestPending is when the longest-waiting due pending delivery was
	// due; zero when none is due.
	OldestPending time.Time `json:"oldest_pending,omitzero"`
	// DeadLetters counts the dead and unknown deliveries.
	DeadLetters CappedCount `json:"dead_letters"`
	// DeadEvents counts the Kafka records given up on and not replayed.
	DeadEvents CappedCount `json:"dead_events"`
	// RuleRunsRunning counts the rule runs in progress.
	RuleRunsRunning CappedCount `json:"rule_runs_running"`
	// ReminderDue is when the longest-overdue active reminder was due; the
	// scheduler's lag is At minus it. Zero when no reminder is due.
	ReminderDue time.Time `json:"reminder_due,omitzero"`
	// Minutes are the sent and failed deliveries of each minute of the
	// last hour, oldest first, summed over every instance's rollup.
	Minutes []MinuteCount `json:"minutes"`
	// FailuresByCode counts the failed attempts of the last hour by error
	// code, most first.
	FailuresByCode []CodeCount `json:"failures_by_code"`
}

// OverviewCountCap bounds every count of an Overview: past it, a count
// says "at least" (CappedCount.Capped) instead of reading more rows. Each
// row counted can cost a heap page read on PostgreSQL (a pending
// delivery's channel; a dead one whose page vacuum has not marked
// all-visible yet), so the cap is what bounds a cold page load: 10,000
// reads, not one per dead letter of a bad day (docs/PERFORMANCE.md, "The
// console").
const OverviewCountCap = 10000

// QueueCount is how many deliveries of one channel are in one state.
type QueueCount struct {
	State   DeliveryState `json:"state"`
	Channel Channel       `json:"channel"`
	Count   int64         `json:"count"`
}

// CappedCount is a count that stops at OverviewCountCap.
type CappedCount struct {
	Count int64 `json:"count"`
	// Capped says there are at least Count.
	Capped bool `json:"capped,omitempty"`
}

// MinuteCount is one minute of the delivery rollup.
type MinuteCount struct {
	Minute time.Time `json:"minute"`
	Sent   int64     `json:"sent"`
	Failed int64     `json:"failed"`
}

// CodeCount is how many failures had one error code.
type CodeCount struct {
	Code  string `json:"code"`
	Count int64  `json:"count"`
}
