package heraldtype

import "time"

// RuleRun is one rule's fan-out of one event (issue 20 item 4, S3.5):
// the rule fired on the event, and its audience is enqueued in batches by
// the rule runner, a leader service. The run is created in the
// transaction that records the event; each batch's notifications commit
// with the run's advanced cursor, so a crash mid-run resumes where it
// stopped and reaches no one twice.
type RuleRun struct {
	Rule string `json:"rule"`
	// ID is the event's key: its source and id ("http/ev-1",
	// "product.inventory.v1/42-1700000000").
	ID string `json:"id"`
	// Source is the Kafka topic the event came from, or "http".
	Source string `json:"source"`
	// EventID and Event are the event's id and name.
	EventID string           `json:"event_id"`
	Event   string           `json:"event"`
	Subject string           `json:"subject,omitempty"`
	State   CampaignRunState `json:"state"`
	// Cursor is the last user id the run went past (keyset order).
	Cursor string `json:"cursor,omitempty"`
	// Recipients counts the users considered; Enqueued the notifications
	// written (the pipeline's policy then decides each one: preferences,
	// quiet hours, the 1 h de-duplication, the daily cap).
	Recipients int    `json:"recipients"`
	Enqueued   int    `json:"enqueued"`
	LastError  string `json:"last_error,omitempty"`
	// Job is what the run sends and to whom, fixed when the event was
	// applied: a later edit of the rule does not change a run under way.
	Job        RuleJob   `json:"job"`
	CreatedAt  time.Time `json:"created_at"`
	UpdatedAt  time.Time `json:"updated_at"`
	FinishedAt time.Time `json:"finished_at,omitzero"`
	// Version changes with every write of the run: each batch is guarded
	// by it.
	Version int64 `json:"-"`
	// TraceParent is the W3C traceparent of the span that applied the
	// event (its request's or Kafka record's), "" when tracing is off or
	// the trace is not sampled: the run's batches, and their deliveries'
	// sends, join that trace.
	TraceParent string `json:"-"`
}

// RuleJob is a rule run's work: the rendered notification and the
// resolved audience.
type RuleJob struct {
	Notification RuleMessage `json:"notification"`
	Audience     JobAudience `json:"audience"`
	// DetectorVars are what the detector added to the event's fields
	// (drop_pct, previous_price…), kept on a run whose message could not
	// be rendered: replaying its dead event renders the message again as
	// the event was judged, the subject's detector state having moved on.
	DetectorVars map[string]string `json:"detector_vars,omitempty"`
}

// RuleMessage is a rule's notification rendered for one event.
type RuleMessage struct {
	Type     string            `json:"type"`
	Title    string            `json:"title,omitempty"`
	Body     string            `json:"body,omitempty"`
	Data     map[string]string `json:"data,omitempty"`
	Channels []Channel         `json:"channels,omitempty"`
	Priority Priority          `json:"priority,omitempty"`
	// DedupeKey is the event's subject: the 1 h user × subject × type
	// de-duplication (S3.8).
	DedupeKey string `json:"dedupe_key,omitempty"`
}

// JobAudience is a rule's audience resolved for one event: the users
// with an interest in Subject (the event's, or a topic's "topic:deals";
// of Kinds, since Since), or UserIDs, or the users the registered audience
// source named Source or the Webhook pages for Event; at most Limit.
type JobAudience struct {
	Source  string      `json:"source,omitempty"`
	Webhook *JobWebhook `json:"webhook,omitempty"`
	// Event is what a source or a webhook is told of the event.
	Event   *JobEvent `json:"event,omitempty"`
	Subject string    `json:"subject,omitempty"`
	Kinds   []string  `json:"kinds,omitempty"`
	Since   time.Time `json:"since,omitzero"`
	UserIDs []string  `json:"user_ids,omitempty"`
	Limit   int       `json:"limit"`
	// AtMost keeps the watchers whose interest's data field
	// InterestField is at least Value (a watcher's target price).
	AtMost *JobBound `json:"at_most,omitempty"`
}

// JobWebhook is an audience webhook as the rule named it when the event
// was applied.
type JobWebhook struct {
	URL     string   `json:"url"`
	Timeout Duration `json:"timeout,omitempty"`
	Secret  string   `json:"secret,omitempty"`
}

// JobEvent is the event an audience source or webhook pages the users of.
type JobEvent struct {
	ID      string            `json:"id"`
	Name    string            `json:"name"`
	Subject string            `json:"subject,omitempty"`
	UserID  string            `json:"user_id,omitempty"`
	Data    map[string]string `json:"data,omitempty"`
}

// JobBound is an interest audience's bound, resolved with the event's
// value.
type JobBound struct {
	InterestField string  `json:"interest_field"`
	Value         float64 `json:"value"`
}

// RuleRunFilter selects a page of one rule's runs, newest first.
type RuleRunFilter struct {
	Rule   string
	Cursor string
	Limit  int
}
