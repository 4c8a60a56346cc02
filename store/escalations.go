package store

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"time"

	"github.com/heraldhq/herald/heraldtype"
)

// Escalations is the part of the store that keeps escalation steps (issue
// 36 item 3; docs/ARCHITECTURE.md "As built: escalation"). An enqueue
// with EnqueueParams.Escalate writes one pending row per notification and
// step, due at the notification's send plus the step's After, in the
// trigger's transaction. A receipt (RecordReceipts, an inbox mark) stops
// the pending steps it answers in its own transaction, and a cancel
// (CancelNotifications) stops every pending step of what it cancels; the
// escalation worker claims the due rows and fires each with
// FireEscalation, which decides under the row's lock: whichever commits
// first wins, never both. Store embeds it.
type Escalations interface {
	// ClaimEscalations leases up to p.Limit pending steps due at p.Now
	// whose lease (if any) ended: lease_owner p.Owner, lease_until
	// p.LeaseUntil. Two concurrent claims never return the same step.
	ClaimEscalations(ctx context.Context, p EscalationClaimParams) ([]ClaimedEscalation, error)
	// FireEscalation settles a claimed step in one transaction, if
	// f.Owner still holds its lease and it is still pending: when a
	// receipt of the step's Unless exists on the notification's deliveries
	// (or those of its fired steps) it stops the step; else with
	// f.Failure it stops it with that reason; else it enqueues f.Enqueue
	// (idempotency key EscalationIdempotencyKey) and marks the step fired
	// with the notification's id. It returns what it did (EscalationFired
	// or EscalationStopped) and "" when the guard refused (nothing
	// written).
	FireEscalation(ctx context.Context, f EscalationFire) (outcome string, reason string, res EnqueueResult, err error)
	// ListEscalations returns a notification's steps in order (none for
	// a notification without escalation).
	ListEscalations(ctx context.Context, notificationID string) ([]heraldtype.Escalation, error)
}

// EscalationClaimParams parameterises ClaimEscalations.
type EscalationClaimParams struct {
	Owner      string
	Now        time.Time
	LeaseUntil time.Time
	Limit      int
}

// ClaimedEscalation is a leased escalation step.
type ClaimedEscalation struct {
	NotificationID string
	UserID         string
	Type           string
	heraldtype.Escalation
}

// EscalationFire is one claimed step's settlement (FireEscalation).
type EscalationFire struct {
	NotificationID string
	Step           int
	Owner          string
	Now            time.Time
	// Enqueue is the step's notification.
	Enqueue *EnqueueParams
	// Failure, when set, stops the step with it (the notification could
	// not be sent again: its type or user is gone).
	Failure string
}

// Check refuses a fire that would write a broken row.
func (f EscalationFire) Check() error {
	if f.NotificationID == "" || f.Step < 1 || f.Owner == "" || f.Now.IsZero() {
		return heraldtype.Errorf(heraldtype.EINVALID, "escalation: a fire needs a notification, a step, an owner and a time")
	}
	if f.Failure == "" {
		if f.Enqueue == nil || len(f.Enqueue.Notifications) != 1 {
			return heraldtype.Errorf(heraldtype.EINVALID, "escalation: a fire needs one notification or a failure")
		}
		return CheckEnqueue(*f.Enqueue)
	}
	return nil
}

// EscalationIdempotencyKey is the idempotency key of the notification
// step step of notification id sends: a fire repeated after a crash (its
// lease ended, another worker claimed the step again) finds the key taken
// and writes nothing new.
func EscalationIdempotencyKey(id string, step int) string {
	return "escalation:" + id + ":" + strconv.Itoa(step)
}

// EscalationNamespace is the idempotency namespace of escalations'
// notifications, apart from every caller's.
const EscalationNamespace = "herald.escalation"

// Reasons an escalation step records when it stops.
const (
	// EscalationReasonReceipt prefixes the receipt's event: "receipt read".
	EscalationReasonReceipt = "receipt "
	// EscalationReasonCancelled: the notification was cancelled.
	EscalationReasonCancelled = "cancelled"
)

// EscalationRow is one pending step an enqueue writes.
type EscalationRow struct {
	NotificationID, UserID, Type string
	Step                         int
	DueAt                        time.Time
	Unless                       string
	// Channels is the step's channels as a JSON array.
	Channels string
}

// EscalationRows are the rows of p's escalation steps, one per
// notification and step: due at the notification's send (its send_at,
// or p.Now) plus the step's After.
func EscalationRows(p EnqueueParams) ([]EscalationRow, error) {
	if len(p.Escalate) == 0 {
		return nil, nil
	}
	channels := make([]string, len(p.Escalate))
	for i, st := range p.Escalate {
		b, err := json.Marshal(st.Channels)
		if err != nil {
			return nil, fmt.Errorf("escalation step %d: %w", i+1, err)
		}
		channels[i] = string(b)
	}
	rows := make([]EscalationRow, 0, len(p.Notifications)*len(p.Escalate))
	for _, n := range p.Notifications {
		base := p.Now
		if n.SendAt.After(base) {
			base = n.SendAt
		}
		for i, st := range p.Escalate {
			rows = append(rows, EscalationRow{NotificationID: n.ID, UserID: n.UserID, Type: n.Type, Step: i + 1,
				DueAt: base.Add(st.After), Unless: string(st.Unless), Channels: channels[i]})
		}
	}
	return rows, nil
}

// ParseEscalationChannels reads the channels EscalationRows wrote.
func ParseEscalationChannels(b []byte) ([]heraldtype.Channel, error) {
	var ch []heraldtype.Channel
	if err := json.Unmarshal(b, &ch); err != nil {
		return nil, fmt.Errorf("escalation channels: %w", err)
	}
	return ch, nil
}

// CheckEscalate refuses escalation steps that would write a broken row.
func CheckEscalate(steps []heraldtype.EscalationStep) error {
	for i, st := range steps {
		if st.After <= 0 || st.Unless == "" || len(st.Channels) == 0 {
			return heraldtype.Errorf(heraldtype.EINVALID, "enqueue: escalation step %d needs after, unless and channels", i+1)
		}
	}
	return nil
}

// EscalationFiredReason is the reason a fired step records: the channels
// it sent on ("sent on sms").
func EscalationFiredReason(channels []heraldtype.Channel) string {
	s := "sent on "
	for i, ch := range channels {
		if i > 0 {
			s += ", "
		}
		s += string(ch)
	}
	return s
}

// EscalationCancelReason is the reason a step stopped by a cancel
// records: "cancelled", with the cancel's own reason when it gave one.
func EscalationCancelReason(reason string) string {
	if reason == "" {
		return EscalationReasonCancelled
	}
	return EscalationReasonCancelled + ": " + reason
}
