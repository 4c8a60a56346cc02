// Package heraldtype holds the value types every part of Herald shares —
// its public vocabulary: users, devices, notifications, deliveries and
// their states, declared notification types and users' preferences, the
// history, the list filters, retry policies, and the error values that
// cross package boundaries. It imports nothing from Herald, so
// the root package, the stores, the dispatcher and the providers can all
// depend on it without cycles (the role rivertype plays in River).
package heraldtype

import (
	"strconv"
	"time"
)

// Platform is the kind of device a push token belongs to (S0.2).
type Platform string

const (
	PlatformAndroid Platform = "android"
	PlatformIOS     Platform = "ios"
	PlatformWeb     Platform = "web"
)

// Valid reports whether p is a known platform.
func (p Platform) Valid() bool {
	return p == PlatformAndroid || p == PlatformIOS || p == PlatformWeb
}

// DeviceStatus says whether a device's token may still be used (S0.2).
type DeviceStatus string

const (
	DeviceActive  DeviceStatus = "ACTIVE"
	DeviceInvalid DeviceStatus = "INVALID"
)

// Channel is a way of reaching a person. Only push is delivered by the core;
// sms, email and in_app arrive with their providers.
type Channel string

const (
	ChannelPush  Channel = "push"
	ChannelSMS   Channel = "sms"
	ChannelEmail Channel = "email"
	ChannelInApp Channel = "in_app"
)

// Priority of a notification (S3.4).
type Priority string

const (
	PriorityLow    Priority = "LOW"
	PriorityNormal Priority = "NORMAL"
	PriorityHigh   Priority = "HIGH"
)

// Valid reports whether p is a known priority.
func (p Priority) Valid() bool {
	return p == PriorityLow || p == PriorityNormal || p == PriorityHigh
}

// PayloadMode chooses between a notification the OS displays (alert) and a
// data-only message the app renders itself (S1.4).
type PayloadMode string

const (
	PayloadAlert PayloadMode = "alert"
	PayloadData  PayloadMode = "data"
)

// Valid reports whether m is a known payload mode.
func (m PayloadMode) Valid() bool { return m == PayloadAlert || m == PayloadData }

// Guarantee is a notification type's delivery guarantee (Across all seeds,
// S1.3). at_least_once resends a delivery whose outcome was lost;
// at_most_once marks it unknown instead, because a duplicate is worse than a
// miss for routine nudges.
type Guarantee string

const (
	AtLeastOnce Guarantee = "at_least_once"
	AtMostOnce  Guarantee = "at_most_once"
)

// Valid reports whether g is a known guarantee.
func (g Guarantee) Valid() bool { return g == AtLeastOnce || g == AtMostOnce }

// DeliveryState is a delivery's place in the state machine drawn in
// docs/ARCHITECTURE.md, whose legal moves are store.Moves.
type DeliveryState string

const (
	// StatePending waits for run_at; the queue claims it from here.
	StatePending DeliveryState = "pending"
	// StateLeased is claimed by a worker until lease_until.
	StateLeased DeliveryState = "leased"
	// StateSent was accepted by the provider. Final.
	StateSent DeliveryState = "sent"
	// StateDead failed permanently or ran out of attempts. Final until replayed.
	StateDead DeliveryState = "dead"
	// StateUnknown is an at_most_once delivery whose lease expired mid-send,
	// or whose send failed ambiguously (a timeout, a network error): it may
	// or may not have reached the provider, so it is never resent
	// automatically. Final until replayed.
	StateUnknown DeliveryState = "unknown"
	// StateSkipped was never sent because its device became unusable
	// (token invalidated, opted out, or deleted) before the send, or, at
	// enqueue, because its channel had no address or the address is
	// suppressed. Final.
	StateSkipped DeliveryState = "skipped"
	// StateOptedOut was never sent because the user's preferences refuse
	// it (the type turned off, the channel not allowed for the type, or the
	// channel opted out). Final; last_error_code says which.
	StateOptedOut DeliveryState = "opted_out"
	// StateRateLimited was never sent because a rate limit blocked it: a
	// duplicate within the type's de-duplication window, or the user's
	// daily cap (S3.8). Final; last_error_code says which.
	StateRateLimited DeliveryState = "rate_limited"
	// StateCancelled was never sent because the caller cancelled its
	// notification (by id or by cancellation key) while it was pending:
	// scheduled, deferred by quiet hours or released for a retry. Final;
	// last_error_code is cancelled, last_error says by what.
	StateCancelled DeliveryState = "cancelled"
)

// Final reports whether a delivery in state s is never changed again except
// by an explicit replay.
func (s DeliveryState) Final() bool {
	switch s {
	case StateSent, StateDead, StateUnknown, StateSkipped, StateOptedOut, StateRateLimited, StateCancelled:
		return true
	}
	return false
}

// Valid reports whether s is a known state.
func (s DeliveryState) Valid() bool {
	switch s {
	case StatePending, StateLeased, StateSent, StateDead, StateUnknown, StateSkipped,
		StateOptedOut, StateRateLimited, StateCancelled:
		return true
	}
	return false
}

// User is a person Herald notifies (S0.1). Timezone is an IANA name.
type User struct {
	ID        string    `json:"id"`
	Timezone  string    `json:"timezone"`
	Locale    string    `json:"locale,omitempty"`
	Email     string    `json:"email,omitempty"`
	Phone     string    `json:"phone,omitempty"`
	CreatedAt time.Time `json:"created_at"`
	UpdatedAt time.Time `json:"updated_at"`
}

// Device is one app installation of a user, with its current push token
// (S0.1, S0.2). A device maps 1:1 to a token, but the token is refreshed
// over time.
type Device struct {
	ID            string       `json:"device_id"`
	UserID        string       `json:"user_id"`
	Platform      Platform     `json:"platform"`
	Token         string       `json:"token"`
	AppVersion    string       `json:"app_version,omitempty"`
	PushOptIn     bool         `json:"push_opt_in"`
	Status        DeviceStatus `json:"status"`
	FailCount     int          `json:"fail_count"`
	LastSeenAt    time.Time    `json:"last_seen_at"`
	InvalidatedAt *time.Time   `json:"invalidated_at,omitempty"`
	InvalidReason string       `json:"invalid_reason,omitempty"`
	// WebPushP256DH and WebPushAuth are a browser subscription's keys
	// (RFC 8291) when the device is a web device delivered by Web Push
	// directly; Token then holds the subscription endpoint URL.
	WebPushP256DH string `json:"p256dh,omitempty"`
	WebPushAuth   string `json:"auth,omitempty"`
	// PreviousUserID and ReassignedAt record the device's last move from
	// one user to another, which only a server key can make (issue 18):
	// the user it was taken from and when. They stay until the next move.
	// A user token is shown ReassignedAt but never PreviousUserID.
	PreviousUserID string     `json:"previous_user_id,omitempty"`
	ReassignedAt   *time.Time `json:"reassigned_at,omitempty"`
	CreatedAt      time.Time  `json:"created_at"`
	UpdatedAt      time.Time  `json:"updated_at"`
}

// Notification is one message for one user. A trigger naming several users
// creates one notification per user; all of them share the trigger's
// idempotency key.
type Notification struct {
	ID             string            `json:"id"`
	UserID         string            `json:"user_id"`
	Type           string            `json:"type"`
	Title          string            `json:"title,omitempty"`
	Body           string            `json:"body,omitempty"`
	Data           map[string]string `json:"data,omitempty"`
	Channels       []Channel         `json:"channels"`
	Priority       Priority          `json:"priority"`
	PayloadMode    PayloadMode       `json:"payload_mode"`
	Guarantee      Guarantee         `json:"guarantee"`
	IdempotencyKey string            `json:"idempotency_key,omitempty"`
	// DedupeKey, when set, de-duplicates the notification per user × type
	// × key within the type's window (S1.2, S3.8).
	DedupeKey string `json:"dedupe_key,omitempty"`
	// CancellationKey, when set, names the notification for a later
	// cancel: POST /v1/notifications/cancel with the key (for this user
	// or for every user) cancels every delivery of it not yet sent.
	CancellationKey string `json:"cancellation_key,omitempty"`
	// TemplateVersion is the version of the type's templates the
	// notification is rendered from (issue 37 item 6): set when the
	// trigger gave no title or body and the type has templates; each
	// delivery renders its channel's form of that version in the user's
	// locale. 0 for a notification sent as its trigger wrote it.
	TemplateVersion int       `json:"template_version,omitempty"`
	SendAt          time.Time `json:"send_at,omitzero"`
	CreatedAt       time.Time `json:"created_at"`
	// Source names what produced the notification when it was not a plain
	// trigger — a reminder's occurrence, a campaign's run, a rule's event —
	// so the timeline shows where it came from (issue 19 item 8, S2.7;
	// issue 20, S3.12). Nil for a trigger of the API or of Enqueue.
	Source *Source `json:"source,omitempty"`
	// Critical says the notification's type was critical when it was
	// triggered: the in-app decision at enqueue bypasses the user's
	// opt-outs for it (issue 22). Set by the Client, read by Store.Enqueue,
	// not stored: the policy at send time reads the type itself.
	Critical bool `json:"-"`
	// TraceParent is the W3C traceparent of the span that enqueued the
	// notification, kept so the worker that claims its deliveries later
	// continues that trace. "" (stored as NULL) when tracing is off or the
	// trace is not sampled; never shown by the API.
	TraceParent string `json:"-"`
}

// Source is what produced a notification other than a direct trigger. It is
// written with the notification, in the transaction of the enqueue, and
// shown on its detail (GET /v1/notifications/{id}).
type Source struct {
	// Kind is SourceReminder, SourceCampaign, SourceRule, SourceDigest,
	// SourceEscalation or SourceTest.
	Kind string `json:"kind"`
	// ID is the id of what produced it: the reminder's id, the campaign
	// run's id, the event's id.
	ID string `json:"id,omitempty"`
	// Name is the caller's name for it: the reminder's key, the campaign's
	// or the rule's name.
	Name string `json:"name,omitempty"`
	// Occurrence names the occurrence: a reminder's send number ("n3") or
	// schedule instant, a campaign's run.
	Occurrence string `json:"occurrence,omitempty"`
	// Event is the name of the event that caused it (rules).
	Event string `json:"event,omitempty"`
	// Count is how many triggers a digest gathered (SourceDigest).
	Count int `json:"count,omitempty"`
}

// Kinds of Source.
const (
	SourceReminder = "reminder"
	SourceCampaign = "campaign"
	SourceRule     = "rule"
	// SourceTest is a test-send of a type's templates to one named user
	// (POST /v1/types/{type}/test-send): sent now, past quiet hours,
	// de-duplication, the daily cap and digests, but never past the
	// user's opt-outs; the engagement report leaves it out.
	SourceTest = "test"
)

// IsTest reports whether s is a test-send's (SourceTest); nil is not.
func (s *Source) IsTest() bool { return s != nil && s.Kind == SourceTest }

// Delivery is one attempt target: a notification × channel × device. The
// deliveries table is the queue.
type Delivery struct {
	ID             int64   `json:"id"`
	NotificationID string  `json:"notification_id"`
	UserID         string  `json:"user_id"`
	Type           string  `json:"type"`
	Channel        Channel `json:"channel"`
	Provider       string  `json:"provider"`
	DeviceID       string  `json:"device_id,omitempty"`
	// Address is the target of a delivery without a device: the user's
	// phone (sms) or e-mail address (email), captured at enqueue.
	Address           string        `json:"address,omitempty"`
	State             DeliveryState `json:"state"`
	Guarantee         Guarantee     `json:"guarantee"`
	Attempt           int           `json:"attempt"`
	MaxAttempts       int           `json:"max_attempts"`
	RunAt             time.Time     `json:"run_at"`
	LeaseOwner        string        `json:"lease_owner,omitempty"`
	LeaseUntil        *time.Time    `json:"lease_until,omitempty"`
	LastErrorCode     string        `json:"last_error_code,omitempty"`
	LastError         string        `json:"last_error,omitempty"`
	ProviderMessageID string        `json:"provider_message_id,omitempty"`
	ReplayCount       int           `json:"replay_count"`
	LastReplayAt      *time.Time    `json:"last_replay_at,omitempty"`
	LastReplayResult  DeliveryState `json:"last_replay_result,omitempty"`
	CreatedAt         time.Time     `json:"created_at"`
	UpdatedAt         time.Time     `json:"updated_at"`
	FinishedAt        *time.Time    `json:"finished_at,omitempty"`
	// LateReport is what the worker whose lease expired reported about it
	// afterwards (one of the Report… codes), when that report is the
	// newest row of the delivery's timeline: "not_sent" on an unknown
	// delivery says it may be replayed with confidence (issue 24 item 3).
	LateReport string    `json:"late_report,omitempty"`
	Attempts   []Attempt `json:"attempts,omitempty"`
	// Receipts is what the user's side reported about it (issue 35 item
	// 1), oldest first, each event at most once: the app's receipts and
	// the inbox item's read-state. They are part of its timeline, beside
	// the attempts, and move nothing.
	Receipts []DeliveryReceipt `json:"receipts,omitempty"`
}

// IdempotencyKey is the key sent to the app as data.messageId (S0.5), so
// the app can drop a duplicate it still receives. It is unique per delivery
// and stable across retries and replays.
func (d *Delivery) IdempotencyKey() string {
	return DeliveryKey(d.NotificationID, d.ID)
}

// DeliveryKey builds a delivery's idempotency key from its notification id
// and delivery id.
func DeliveryKey(notificationID string, deliveryID int64) string {
	return notificationID + "." + strconv.FormatInt(deliveryID, 10)
}

// AttemptOutcome is what one attempt of a delivery came to.
type AttemptOutcome string

const (
	OutcomeSent         AttemptOutcome = "sent"
	OutcomeRetry        AttemptOutcome = "retry"
	OutcomeDead         AttemptOutcome = "dead"
	OutcomeSkipped      AttemptOutcome = "skipped"
	OutcomeLeaseExpired AttemptOutcome = "lease_expired"
	OutcomeUnknown      AttemptOutcome = "unknown"
	OutcomeReplayed     AttemptOutcome = "replayed"
	// OutcomeOptedOut and OutcomeRateLimited end a delivery the delivery
	// policy refused (states opted_out and rate_limited).
	OutcomeOptedOut    AttemptOutcome = "opted_out"
	OutcomeRateLimited AttemptOutcome = "rate_limited"
	// OutcomeDeferred returned the delivery to the queue until the user's
	// quiet hours end; the attempt was not counted.
	OutcomeDeferred AttemptOutcome = "deferred"
	// OutcomePolicyError returned the delivery to the queue because the
	// policy store failed: nothing is sent blind (S1.3). Not counted.
	OutcomePolicyError AttemptOutcome = "policy_error"
	// OutcomeLateReport is a worker's outcome for a lease that had already
	// expired — the reaper had moved the delivery (unknown, or back to
	// pending) — recorded as what the worker says happened, never as a
	// move: the delivery's state is left alone (S1.3, issue 24 item 3).
	// Its error code is one of the Report… codes, its error the details.
	OutcomeLateReport AttemptOutcome = "late_report"
	// OutcomeProviderReport is what the provider reported after accepting
	// the message — a Twilio status callback's delivered, undelivered or
	// failed, the attempt row's error code — recorded on the timeline
	// without moving the delivery: a sent delivery stays sent (issue 21
	// item 4).
	OutcomeProviderReport AttemptOutcome = "provider_report"
	// OutcomeReceipt is how the stores keep a receipt (issue 35 item 1)
	// in the timeline's table: an attempt row whose error code is the
	// ReceiptEvent and whose error the action, at most one of each event
	// per delivery (a unique index in both stores). It is read into
	// Delivery.Receipts, never into Attempts.
	OutcomeReceipt AttemptOutcome = "receipt"
	// OutcomeCancelled ended a pending delivery whose notification was
	// cancelled (state cancelled): a decision, not an attempt; its error
	// code is CodeCancelled and its error says what cancelled it.
	OutcomeCancelled AttemptOutcome = "cancelled"
)

// What a worker reports about a lease that expired before its outcome was
// recorded: the error code of an OutcomeLateReport attempt row.
const (
	// ReportNotSent: the worker never handed the message to a provider
	// (it released it, the policy refused it, the device was gone, …).
	ReportNotSent = "not_sent"
	// ReportSent: the provider accepted the message.
	ReportSent = "sent"
	// ReportSendFailed: the provider refused the message.
	ReportSendFailed = "send_failed"
	// ReportSendUnknown: the message was sent and its answer never came
	// (a timeout, a network error): the provider may have it.
	ReportSendUnknown = "send_unknown"
)

// Attempt is one row of a delivery's timeline.
type Attempt struct {
	Attempt           int            `json:"attempt"`
	At                time.Time      `json:"at"`
	Outcome           AttemptOutcome `json:"outcome"`
	ErrorCode         string         `json:"error_code,omitempty"`
	Error             string         `json:"error,omitempty"`
	RetryAfter        time.Duration  `json:"retry_after_ns,omitempty"`
	ProviderMessageID string         `json:"provider_message_id,omitempty"`
	Latency           time.Duration  `json:"latency_ns,omitempty"`
}

// Job is a claimed delivery with everything a provider needs to send it:
// the device's current token (read at claim time, so a refreshed token is
// used and an invalidated one is skipped) and the notification, shared by
// all jobs of one notification in a claim batch.
type Job struct {
	Delivery     Delivery
	Notification *Notification
	// Device is nil when the delivery has no device or the device no longer
	// exists.
	Device *Device
}

// Message is what a provider is asked to send.
type Message struct {
	// Key is the delivery's idempotency key (data.messageId, S0.5).
	Key          string
	Notification *Notification
	// Device is the target of a push delivery (its current token).
	Device *Device
	// Address is the target of a delivery that has no device: an E.164
	// phone number for SMS, an e-mail address for email.
	Address string
	// ListUnsubscribe, on an e-mail of a type that is not transactional,
	// are its one-click unsubscribe targets (RFC 2369, RFC 8058): an https
	// URL that a POST turns the type off with, then optionally a mailto.
	ListUnsubscribe []string
	// HTML, when set, is the e-mail's HTML part in place of the
	// notification's data.html (DataHTML): the copy e-mail tracking
	// rewrote for this delivery, whose links and open pixel are signed for
	// it alone, so the notification its deliveries share is left as it is
	// (issue 35 item 2).
	HTML string
}

// DataHTML is the notification data key that carries an e-mail's HTML
// body; the body (Notification.Body) is its plain-text part.
const DataHTML = "html"

// InboxItem is one entry of a user's in-app inbox: the record the user is
// guaranteed to see, whatever happened to the pushes (S4.5). It is written
// in the same transaction as its notification. IDs increase with time per
// database, so a stream resumes after the last id it delivered.
type InboxItem struct {
	ID             int64             `json:"id"`
	UserID         string            `json:"user_id"`
	NotificationID string            `json:"notification_id"`
	Type           string            `json:"type"`
	Title          string            `json:"title,omitempty"`
	Body           string            `json:"body,omitempty"`
	Data           map[string]string `json:"data,omitempty"`
	CreatedAt      time.Time         `json:"created_at"`
	// MessageID names the item's message for POST /v1/receipts, as a
	// push's data.messageId does (DeliveryKey of its in-app delivery);
	// "" if the delivery is gone.
	MessageID string `json:"message_id,omitempty"`
	// SeenAt, ReadAt, ClickedAt and ArchivedAt are when the item was
	// first seen, read, clicked and archived; a click marks it seen and
	// read too.
	SeenAt     *time.Time `json:"seen_at,omitempty"`
	ReadAt     *time.Time `json:"read_at,omitempty"`
	ClickedAt  *time.Time `json:"clicked_at,omitempty"`
	ArchivedAt *time.Time `json:"archived_at,omitempty"`
}

// InboxState is a user's inbox counts as the real-time stream sends them
// (its "state" event; issue 35 item 1): Unread is the unarchived items
// not read (ListInbox's unread count); Unseen is the unarchived items not
// seen among the user's newest InboxUnseenWindow items, so at most that.
type InboxState struct {
	Unread int `json:"unread"`
	Unseen int `json:"unseen"`
}

// InboxUnseenWindow bounds InboxState.Unseen: it counts among the user's
// newest items only (archived ones included in the window), so reading
// the counts never scans an unbounded inbox. Items not yet seen are the
// newest ones in practice; an app shows "999+" at the bound.
const InboxUnseenWindow = 1000

// Suppression records that an address must not be contacted on a channel
// any more (Twilio 21610 STOP; an e-mail mailbox that does not exist),
// until it opts in again.
type Suppression struct {
	Channel   Channel   `json:"channel"`
	Address   string    `json:"address"`
	Reason    string    `json:"reason"`
	CreatedAt time.Time `json:"created_at"`
}

// ProviderReport is what a provider reported, by calling Herald back,
// about a message it accepted earlier: a Twilio status callback (issue 21
// item 4). A provider that takes such callbacks verifies and decodes them
// into it; Herald records the final ones on the delivery's timeline.
type ProviderReport struct {
	// DeliveryKey is the delivery's idempotency key (DeliveryKey), which
	// Herald gave the provider with the message.
	DeliveryKey string
	// ProviderMessageID is the provider's id of the message (Twilio's
	// MessageSid).
	ProviderMessageID string
	// Status is the provider's status word ("delivered", "undelivered",
	// "failed", or an intermediate one such as "sent").
	Status string
	// Final says the status is one Herald records: the message's fate
	// (delivered, undelivered, failed), not a step on the way.
	Final bool
	// ErrorCode and Error are the provider's error, if it gave one
	// ("twilio_30003").
	ErrorCode string
	Error     string
	// Suppress says the recipient's address asked not to be contacted any
	// more (Twilio 21610, STOP), as SendError.Suppress does for a send.
	Suppress bool
}
