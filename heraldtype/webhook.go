package heraldtype

import (
	"encoding/json"
	"time"
)

// The event types an outbound webhook endpoint can subscribe to (issue 35
// item 4), each written with the change it reports.
const (
	// WebhookDeliveryFinished: a delivery reached sent, dead, unknown,
	// skipped, opted_out or rate_limited.
	WebhookDeliveryFinished = "delivery.finished"
	// WebhookNotificationStatusChanged: a notification's status
	// (HistoryStatus) became final — its last delivery still to be
	// decided finished. The data is the notification's status as GET
	// /v1/notifications/{id} reports it then: status, reason,
	// channel_status.
	WebhookNotificationStatusChanged = "notification.status_changed"
	// WebhookDeadLetterCreated: something landed on a dead letter list
	// for an operator's replay: a delivery that died (dead or unknown),
	// or a record the Kafka intake gave up on, kept as a dead event; the
	// data's list says which.
	WebhookDeadLetterCreated = "dead_letter.created"
	// WebhookReceiptRecorded: a receipt was recorded — the app's
	// delivered, opened, dismissed or clicked, an e-mail's open or click,
	// or an inbox item seen, read, clicked or archived; once per delivery
	// and event.
	WebhookReceiptRecorded = "receipt.recorded"
	// WebhookDeviceInvalidated: a provider answered that a device's
	// token is dead (unregistered, invalid), or another device registered
	// its token, and Herald invalidated the device.
	WebhookDeviceInvalidated = "device.invalidated"
	// WebhookRuleRunFinished: an event rule's run ended, done or failed.
	WebhookRuleRunFinished = "rule_run.finished"
	// WebhookTest is the event a test of an endpoint sends it (POST
	// /v1/webhooks/{id}/test): not one an endpoint subscribes to, never
	// queued, never retried.
	WebhookTest = "webhook.test"
)

// WebhookEventTypes lists the event types Herald emits, the ones an
// endpoint may name in its events.
var WebhookEventTypes = []string{WebhookDeliveryFinished, WebhookNotificationStatusChanged, WebhookDeadLetterCreated,
	WebhookReceiptRecorded, WebhookDeviceInvalidated, WebhookRuleRunFinished}

// WebhookEndpoint is a receiver of Herald's signed webhooks, as the API
// shows it: never its secrets.
type WebhookEndpoint struct {
	ID  string `json:"id"`
	URL string `json:"url"`
	// Description is the operator's note about the endpoint.
	Description string `json:"description,omitempty"`
	// Events are the event types it receives; empty: every type.
	Events []string `json:"events"`
	// Enabled says messages are sent to it. A disabled endpoint gets no
	// new messages, and its pending ones are held until it is enabled
	// again.
	Enabled bool `json:"enabled"`
	// DisabledReason says why Herald disabled it (it answered 410 Gone,
	// or failed for longer than webhooks.disable_after).
	DisabledReason string `json:"disabled_reason,omitempty"`
	// FailingSince is the first failure after its last success.
	FailingSince *time.Time `json:"failing_since,omitempty"`
	// PreviousSecretUntil is set during a rotation: until then messages
	// are signed with the previous secret as well as the new one.
	PreviousSecretUntil *time.Time `json:"previous_secret_until,omitempty"`
	CreatedAt           time.Time  `json:"created_at"`
	UpdatedAt           time.Time  `json:"updated_at"`
}

// WebhookMessageState is where a webhook message is in its life.
type WebhookMessageState string

const (
	// WebhookPending: waiting for its run_at (a first send or a retry).
	WebhookPending WebhookMessageState = "pending"
	// WebhookLeased: an instance is sending it.
	WebhookLeased WebhookMessageState = "leased"
	// WebhookSent: the endpoint answered 2xx.
	WebhookSent WebhookMessageState = "sent"
	// WebhookDead: retried for webhooks.retry_for without success; on the
	// endpoint's dead letter list, replayable.
	WebhookDead WebhookMessageState = "dead"
)

// WebhookMessageStates lists every state.
var WebhookMessageStates = []WebhookMessageState{WebhookPending, WebhookLeased, WebhookSent, WebhookDead}

// Valid reports whether s is a known state.
func (s WebhookMessageState) Valid() bool {
	for _, v := range WebhookMessageStates {
		if s == v {
			return true
		}
	}
	return false
}

// WebhookMessage is one event for one endpoint.
type WebhookMessage struct {
	Seq        int64  `json:"seq"`
	EndpointID string `json:"endpoint_id"`
	// EventID is the webhook-id header: the same on every retry and
	// replay, the receiver's idempotency key.
	EventID string `json:"event_id"`
	Type    string `json:"type"`
	// OrderingKey is what messages are ordered by: the notification's id
	// for a delivery's events.
	OrderingKey string `json:"ordering_key"`
	// Data is the event's JSON object, the body's "data".
	Data       json.RawMessage     `json:"data"`
	State      WebhookMessageState `json:"state"`
	Attempt    int                 `json:"attempt"`
	RunAt      time.Time           `json:"run_at"`
	OccurredAt time.Time           `json:"occurred_at"`
	// FirstAt starts the retry window (webhooks.retry_for): the event's
	// time, or its last replay.
	FirstAt time.Time `json:"first_at"`
	// LastStatus is the endpoint's last HTTP status (0: no answer).
	LastStatus int        `json:"last_status,omitempty"`
	LastError  string     `json:"last_error,omitempty"`
	FinishedAt *time.Time `json:"finished_at,omitempty"`
	// Txid is the writing transaction's id on PostgreSQL (0 elsewhere):
	// with Seq, the message's place in the log's order, which lists page
	// by. Not shown.
	Txid uint64 `json:"-"`
}

// WebhookEndpointInput registers an endpoint (POST /v1/webhooks).
type WebhookEndpointInput struct {
	URL         string   `json:"url"`
	Description string   `json:"description,omitempty"`
	Events      []string `json:"events,omitempty"`
}

// WebhookEndpointUpdate changes an endpoint (PATCH /v1/webhooks/{id});
// an absent field is left as it is. Enabling a disabled endpoint starts
// it afresh: its held messages flow again.
type WebhookEndpointUpdate struct {
	URL         *string   `json:"url,omitempty"`
	Description *string   `json:"description,omitempty"`
	Events      *[]string `json:"events,omitempty"`
	Enabled     *bool     `json:"enabled,omitempty"`
}

// WebhookEndpointSecret is an endpoint with its signing secret: the answer
// to its creation and to a rotation, the only times the secret is shown.
type WebhookEndpointSecret struct {
	WebhookEndpoint
	Secret string `json:"secret"`
}

// WebhookMessageFilter selects a page of an endpoint's messages, newest
// first.
type WebhookMessageFilter struct {
	// State, if set, keeps one state ("dead": the dead letter list).
	State WebhookMessageState `json:"state,omitempty"`
	// Cursor is a previous page's NextCursor.
	Cursor string `json:"cursor,omitempty"`
	// Limit is the page size, 50 if zero.
	Limit int `json:"limit,omitempty"`
}

// WebhookMessagePage is a page of an endpoint's messages.
type WebhookMessagePage struct {
	Messages   []WebhookMessage `json:"messages"`
	NextCursor string           `json:"next_cursor,omitempty"`
}

// WebhookReplayResult counts the dead messages a replay sent again.
type WebhookReplayResult struct {
	Replayed int `json:"replayed"`
}

// WebhookTestResult is what an endpoint answered a test event, sent at
// once and only once (POST /v1/webhooks/{id}/test).
type WebhookTestResult struct {
	// EventID is the test event's webhook-id.
	EventID string `json:"event_id"`
	// Type is WebhookTest.
	Type string `json:"type"`
	// OK says the endpoint answered 2xx.
	OK bool `json:"ok"`
	// Status is the endpoint's HTTP status; 0 (absent) without an answer.
	Status int `json:"status,omitempty"`
	// DurationMS is how long the send took, in milliseconds.
	DurationMS int64 `json:"duration_ms"`
	// Error says what went wrong when not OK, as a message's last_error
	// would: "answered 503", "refused: …", "failed: no answer; …".
	Error string `json:"error,omitempty"`
}
