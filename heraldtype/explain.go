package heraldtype

import "time"

// ExplainRequest asks why a user did (or did not) get a notification:
// "Why didn't this user get it?". It names the user and one of their
// notifications, a rule's run (the rule's fan-out of one event), an
// event, a trigger, or a type, whose newest notification since Since is
// explained. When several are named, NotificationID wins over Rule and
// RuleRun, which win over Event, which wins over IdempotencyKey, which
// wins over Type.
type ExplainRequest struct {
	UserID string
	// Type explains the user's newest notification of this type created
	// at or after Since; when there is none, what the records say about
	// the type for the user now (preferences, devices).
	Type string
	// NotificationID explains this notification of the user. It wins
	// over Type.
	NotificationID string
	// IdempotencyKey names a trigger by its Idempotency-Key: the user's
	// newest notification it created, among the user's newest
	// notifications (of Type, since Since, when given).
	IdempotencyKey string
	// Rule and RuleRun name a rule's run (GET /v1/rules/{name}/runs): the
	// notification it wrote for the user, or why it wrote none (outside
	// its audience, not reached yet, the run failed). Given together;
	// NotificationID wins over them, they win over Event.
	Rule    string
	RuleRun string
	// Event names an applied event by its id: what each rule decided on
	// it (not detected and why, stale), and for the rules whose runs it
	// started, the notification the first of them wrote for the user, or
	// why none did. Herald records only the events some rule considered,
	// for rules.event_retention. It wins over IdempotencyKey.
	Event string
	// EventSource is the Kafka topic the event was read from; "" for
	// one posted to POST /v1/events.
	EventSource string
	// EventNamespace is whose id Event is: POST /v1/events records an
	// event under the posting API key's id, a topic's events (and a Go
	// caller's that names none) under "".
	EventNamespace string
	// Since bounds the search by Type; zero looks as far back as the
	// history goes.
	Since time.Time
}

// Verdicts of an Explanation, and codes of its reasons. Each is stable:
// a program may switch on it. Where the records hold a code of their own
// (a preference, a policy decision, a provider's error) the reason
// carries it in ErrorCode.
const (
	// ExplainSent: a delivery reached the provider, which accepted it.
	ExplainSent = "sent"
	// ExplainPending: a delivery waits for its turn (or a retry).
	ExplainPending = "pending"
	// ExplainQuietHours: deferred until the user's quiet hours end.
	ExplainQuietHours = "quiet_hours"
	// ExplainOptedOut: the user's preferences refused it (ErrorCode says
	// which: type_disabled, channel_disabled, channel_opted_out).
	ExplainOptedOut = "opted_out"
	// ExplainDuplicate: another notification with the same dedupe key
	// was sent within the type's window.
	ExplainDuplicate = "duplicate"
	// ExplainDailyCap: the user's daily cap was reached.
	ExplainDailyCap = "daily_cap"
	// ExplainNoDevice: the user has no device a push could go to.
	ExplainNoDevice = "no_device"
	// ExplainDeviceInvalid: the user's device was invalidated (its token
	// died) or removed.
	ExplainDeviceInvalid = "device_invalid"
	// ExplainDeviceOptedOut: the device does not take push messages.
	ExplainDeviceOptedOut = "device_opted_out"
	// ExplainNoAddress: the user has no phone number or e-mail address.
	ExplainNoAddress = "no_address"
	// ExplainSuppressed: the address asked not to be contacted.
	ExplainSuppressed = "suppressed"
	// ExplainProviderFailure: the provider refused it, or every attempt
	// failed (ErrorCode and Error are the provider's answer).
	ExplainProviderFailure = "provider_failure"
	// ExplainRenderFailed: the delivery's channel form of its type's
	// templates did not render, or rendered past the channel's limit
	// (Error says which template and why); nothing was sent (issue 37).
	ExplainRenderFailed = "render_failed"
	// ExplainUnknown: the send's answer never came; it may have arrived.
	ExplainUnknown = "unknown"
	// ExplainNoProvider: no provider is configured for the channel.
	ExplainNoProvider = "no_provider"
	// ExplainNoNotification: no notification of the type was created for
	// the user in the period.
	ExplainNoNotification = "no_notification"
	// ExplainOutsideAudience: the rule's run went through its audience
	// and the user was not in it.
	ExplainOutsideAudience = "outside_audience"
	// ExplainRuleRunFailed: the rule's run stopped on an error before it
	// reached the user.
	ExplainRuleRunFailed = "rule_run_failed"
	// ExplainEventStale: the event asked about was stale — its version
	// was not above the last one applied for its subject — so no rule
	// judged it.
	ExplainEventStale = "event_stale"
	// ExplainNotDetected: no rule detected the event asked about; each
	// rule's reason names the rule and what its detector said.
	ExplainNotDetected = "not_detected"
	// ExplainCancelled: its notification was cancelled before it was
	// sent (Error says by whom and by which key).
	ExplainCancelled = "cancelled"
	// ExplainNotDelivered: a final state the other codes do not name.
	ExplainNotDelivered = "not_delivered"
)

// Explanation is the answer to an ExplainRequest, drawn from the records:
// the notification, its deliveries and their attempts, the user's devices
// and preferences, and the notifications that decided a duplicate or the
// daily cap.
type Explanation struct {
	UserID string `json:"user_id"`
	Type   string `json:"type,omitempty"`
	// Rule and RuleRun name the rule's run asked about.
	Rule    string `json:"rule,omitempty"`
	RuleRun string `json:"rule_run,omitempty"`
	// Event is the id of the event asked about, when one was.
	Event string `json:"event,omitempty"`
	// NotificationID is the notification explained; empty when there is
	// none (Verdict no_notification).
	NotificationID string    `json:"notification_id,omitempty"`
	CreatedAt      time.Time `json:"created_at,omitzero"`
	// Status is the notification's status (GET /v1/notifications/{id}).
	Status HistoryStatus `json:"status,omitempty"`
	// Verdict is the code of the deciding reason, one of the Explain…
	// codes.
	Verdict string `json:"verdict"`
	// Message says it in one sentence an operator reads.
	Message string `json:"message"`
	// Reasons are the findings, the deciding one first: one per delivery
	// (or channel without one), then what the records add (a device's
	// invalidation, the notifications counted toward the cap).
	Reasons []ExplainReason `json:"reasons"`
}

// ExplainReason is one finding of an Explanation.
type ExplainReason struct {
	// Code is one of the Explain… codes.
	Code    string  `json:"code"`
	Message string  `json:"message"`
	Channel Channel `json:"channel,omitempty"`
	// DeliveryID and DeviceID name the delivery and device it is about.
	DeliveryID int64  `json:"delivery_id,omitempty"`
	DeviceID   string `json:"device_id,omitempty"`
	// Address is the phone number or e-mail address of an sms or email
	// delivery (the HTTP API masks it for a key without users:read).
	Address string `json:"address,omitempty"`
	// State is the delivery's state.
	State DeliveryState `json:"state,omitempty"`
	// Rule names the rule a finding about an event is about.
	Rule string `json:"rule,omitempty"`
	// ErrorCode and Error are what the records hold: the policy's code
	// (type_disabled, duplicate, …), the provider's code and answer.
	ErrorCode string `json:"error_code,omitempty"`
	Error     string `json:"error,omitempty"`
	// At is when it happened: the decision, the send, the invalidation.
	At *time.Time `json:"at,omitempty"`
	// Until is when a deferred or pending delivery runs next.
	Until *time.Time `json:"until,omitempty"`
	// NotificationIDs are the other notifications it points at: the one
	// a duplicate repeated, those counted toward the daily cap.
	NotificationIDs []string `json:"notification_ids,omitempty"`
}
