package heraldtype

import (
	"encoding/json"
	"time"
)

// DeadEvent is a Kafka record Herald gave up on (issue 20 item 5, S3.10):
// it failed every try, was written to its topic's dead-letter topic, and
// is kept here so an operator can see why and feed it back.
type DeadEvent struct {
	ID int64 `json:"id"`
	// Where it came from.
	Topic     string `json:"topic"`
	Partition int32  `json:"partition"`
	Offset    int64  `json:"offset"`
	// Kind is the topic's kind: notifications, events or interests; or
	// render_failed: an event that was applied but whose rules could not
	// render their message (a replay renders those runs again).
	Kind string `json:"kind"`
	// Key and Value are the record's, as received. Value is null for a
	// tombstone (a record whose value is null, Tombstone) and "" for an
	// empty one.
	Key       []byte `json:"key,omitempty"`
	Value     []byte `json:"value"`
	Tombstone bool   `json:"tombstone,omitempty"`
	// RecordTimestamp is the record's own timestamp (its producer's, or
	// the broker's append time); zero for a dead event kept before Herald
	// recorded it. With the position, key and value it tells a record
	// dead-lettered twice (kept once) from another record at a reused
	// position — a topic recreated (kept too).
	RecordTimestamp time.Time `json:"record_timestamp,omitzero"`
	// Payload is the decoded record — the call Herald made with it (a
	// notification request, an event, an interest) — or nil when it did
	// not decode; a replay makes that call again.
	Payload json.RawMessage `json:"payload,omitempty"`
	// Error is the last try's; Attempts how many there were.
	Error     string    `json:"error"`
	Attempts  int       `json:"attempts"`
	CreatedAt time.Time `json:"created_at"`
	// ReplayedAt is set once a replay succeeded; ReplayError is the last
	// failed replay's error.
	ReplayedAt  *time.Time `json:"replayed_at,omitempty"`
	ReplayError string     `json:"replay_error,omitempty"`
}

// DeadEventFilter selects dead events. Zero fields match all.
type DeadEventFilter struct {
	Topic string
	Kind  string
	// Replayed: "yes" only those replayed, "no" only those not yet.
	Replayed string
	// From and To bound when Herald gave up on the record (created_at):
	// at or after From, before To; zero is unbounded.
	From, To time.Time
	Cursor   string
	// Limit defaults to 50 and is capped at 200.
	Limit int
}
