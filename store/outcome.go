package store

import (
	"fmt"
	"time"

	"github.com/heraldhq/herald/heraldtype"
)

// Outcome is the result of one attempt of one claimed delivery: which
// lease it answers (DeliveryID, Owner, Attempt), when, and the move out of
// leased it makes, given by To. Complete applies it only while the
// delivery is still leased by Owner for Attempt (S4.4).
//
//	store.Outcome{DeliveryID: id, Owner: w, Attempt: n, At: now}.To(store.Sent{ProviderMessageID: pm})
//
// The transition is kept flattened (Row), so an outcome costs no
// allocation on the hot path: a few thousand a second pass through
// Complete.
type Outcome struct {
	DeliveryID int64
	Owner      string
	// Attempt is the attempt number the delivery was claimed with.
	Attempt int
	At      time.Time
	// kind is the type of the transition To recorded (0: none), row what
	// it writes.
	kind kind
	row  OutcomeRow
}

// To returns o making the move t: one of Sent, InboxSent, Retry, Dead,
// Unknown, Skipped, OptedOut, RateLimited, Released, ReleasedWithReason. It is the
// only way to give an outcome its transition.
func (o Outcome) To(t Transition) Outcome {
	o.kind, o.row = flatten(t)
	return o
}

// Transition is the type of the transition To recorded, as its zero
// value; nil for none.
func (o *Outcome) Transition() Transition {
	if o.kind == 0 || int(o.kind) > len(Transitions) {
		return nil
	}
	return Transitions[o.kind-1]
}

// Row is what Complete writes for a checked outcome (CheckOutcome).
func (o *Outcome) Row() OutcomeRow { return o.row }

// Transition is what an outcome does to a leased delivery. The set is
// closed: the types of this file are all there is, and each is one
// "leased → State()" row of Moves written by Complete.
type Transition interface {
	// State is the state the delivery moves to.
	State() heraldtype.DeliveryState
	transition()
}

// Failure is what a failed attempt reports: the error code and message the
// delivery keeps as its last error, and the attempt row's Retry-After and
// send latency (zero when the worker failed it without a send).
type Failure struct {
	ErrorCode  string
	Error      string
	RetryAfter time.Duration
	Latency    time.Duration
	// NotSent says the worker failed the delivery without handing it to a
	// provider (no sender configured, a job without its notification, the
	// policy undecidable for too long): what a late report says (Report).
	NotSent bool
}

// Sent: the provider accepted the message. Final.
type Sent struct {
	ProviderMessageID string
	Latency           time.Duration
	// DeviceClean says the delivery's device had a fail_count of 0 when it
	// was claimed, so there is no count to reset and the store skips that
	// write. Without it the send resets the count (a failure recorded
	// during this send is then reset by the next send that sees it at its
	// claim).
	DeviceClean bool
}

// InboxSent: an in_app delivery that was due (a notification scheduled
// for later, issue 22) is written to the user's inbox — its item created
// from the notification in the same transaction as the move, the item's id
// its provider message id — and is sent. Only an outcome the lease guard
// applies writes an item, so a duplicate or late one writes nothing: the
// item appears exactly once. Final.
type InboxSent struct{}

// Retry: a failed attempt with attempts left; the delivery is due again at
// RunAt (At when zero), the attempt counted.
type Retry struct {
	RunAt time.Time
	Failure
}

// Dead: a permanent failure, or the last attempt failed. Final until
// replayed.
type Dead struct {
	Failure
	// InvalidReason, when set, marks the delivery's device INVALID with
	// this reason, invalidated_at = At and fail_count+1, in the same
	// transaction — only if the device was not updated after the claim, so
	// a dead-token answer about the token read at claim time never kills
	// one the app registered since (S0.3: only for a dead token).
	InvalidReason string
	// SuppressAddress suppresses the delivery's address on its channel
	// with SuppressReason (the error code when empty) in the same
	// transaction (Twilio 21610 STOP); later triggers skip it until the
	// suppression is deleted. A delivery without an address suppresses
	// nothing.
	SuppressAddress bool
	SuppressReason  string
}

// Suppression is the reason a suppression records: SuppressReason, or the
// error code when it gives none, so the list always says why.
func (d Dead) Suppression() string {
	if d.SuppressReason != "" {
		return d.SuppressReason
	}
	return d.ErrorCode
}

// Unknown: an at_most_once send that failed ambiguously — a timeout or a
// network error after which the provider may have the message — is never
// retried (S1.3). Final until replayed.
type Unknown struct {
	Failure
}

// Skipped: never sent, because the device became unusable (deleted,
// INVALID, opted out of push) before the send. Final.
type Skipped struct {
	ErrorCode, Error string
}

// OptedOut: never sent, because the user's preferences refuse it. Final.
type OptedOut struct {
	ErrorCode, Error string
}

// RateLimited: never sent, because a de-duplication window or the daily
// cap blocked it (S3.8). Final.
type RateLimited struct {
	ErrorCode, Error string
}

// Released undoes the claim without counting an attempt (attempt-1, no
// attempt row, last error kept): the delivery was never handed to the
// provider, e.g. because its provider is throttled. It is due again at
// RunAt (At when zero).
type Released struct {
	RunAt time.Time
}

// ReleasedWithReason is a Released the delivery policy decided, with an
// attempt row whose outcome (deferred or policy_error) says why, and the
// delivery's last error set from ErrorCode and Error (the history reads it:
// DEFERRED).
type ReleasedWithReason struct {
	Outcome          heraldtype.AttemptOutcome
	RunAt            time.Time
	ErrorCode, Error string
}

func (Sent) State() heraldtype.DeliveryState               { return heraldtype.StateSent }
func (InboxSent) State() heraldtype.DeliveryState          { return heraldtype.StateSent }
func (Retry) State() heraldtype.DeliveryState              { return heraldtype.StatePending }
func (Dead) State() heraldtype.DeliveryState               { return heraldtype.StateDead }
func (Unknown) State() heraldtype.DeliveryState            { return heraldtype.StateUnknown }
func (Skipped) State() heraldtype.DeliveryState            { return heraldtype.StateSkipped }
func (OptedOut) State() heraldtype.DeliveryState           { return heraldtype.StateOptedOut }
func (RateLimited) State() heraldtype.DeliveryState        { return heraldtype.StateRateLimited }
func (Released) State() heraldtype.DeliveryState           { return heraldtype.StatePending }
func (ReleasedWithReason) State() heraldtype.DeliveryState { return heraldtype.StatePending }

func (Sent) transition()               {}
func (InboxSent) transition()          {}
func (Retry) transition()              {}
func (Dead) transition()               {}
func (Unknown) transition()            {}
func (Skipped) transition()            {}
func (OptedOut) transition()           {}
func (RateLimited) transition()        {}
func (Released) transition()           {}
func (ReleasedWithReason) transition() {}

// kind numbers the transitions: 1 + the index in Transitions.
type kind uint8

const (
	kindSent kind = 1 + iota
	kindRetry
	kindDead
	kindUnknown
	kindSkipped
	kindOptedOut
	kindRateLimited
	kindReleased
	kindReleasedWithReason
	kindInboxSent
)

// Transitions are a zero value of every Transition, for tests and the
// state machine's documentation.
var Transitions = []Transition{
	Sent{}, Retry{}, Dead{}, Unknown{}, Skipped{}, OptedOut{}, RateLimited{}, Released{}, ReleasedWithReason{},
	InboxSent{},
}

// OutcomeRow is an outcome flattened into what a store's Complete writes:
// the delivery's new columns, its attempt row, and the device and
// suppression changes. Only Outcome.To makes one, from a Transition, so
// its fields never hold a combination no Transition has.
type OutcomeRow struct {
	State heraldtype.DeliveryState
	// RunAt is when a delivery moved back to pending is due; zero for a
	// final state.
	RunAt time.Time
	// Timeline is the attempt row's outcome; "" writes no attempt row.
	Timeline          heraldtype.AttemptOutcome
	ErrorCode, Error  string
	RetryAfter        time.Duration
	Latency           time.Duration
	ProviderMessageID string
	// InvalidReason invalidates the device (Dead.InvalidReason).
	InvalidReason string
	// SuppressReason is the reason of the suppression Suppress records.
	SuppressReason string
	// Release gives the attempt back (attempt-1).
	Release bool
	// SetError replaces the delivery's last error with ErrorCode and
	// Error: a failure's, or none for a sent outcome, so a sent delivery
	// carries no stale error of an earlier attempt (issue 22 item 3); the
	// attempt rows keep every earlier error.
	SetError bool
	// ResetFailCount sets the device's fail_count to 0 (a send that did
	// not see a clean device at its claim).
	ResetFailCount bool
	// Suppress suppresses the delivery's address on its channel.
	Suppress bool
	// Inbox writes the delivery's inbox item (InboxSent); its id becomes
	// the provider message id.
	Inbox bool
	// Report is what the outcome says the worker did, one of the
	// heraldtype.Report… codes: recorded by Store.ReportLate when the
	// outcome arrives after its lease expired (issue 24 item 3).
	Report string
}

// flatten is t's kind and row. RunAt is left zero when t leaves it so;
// CheckOutcome defaults it to At.
func flatten(t Transition) (kind, OutcomeRow) {
	var r OutcomeRow
	var k kind
	switch t := t.(type) {
	case Sent:
		// SetError with no code: the delivery's own fields describe its
		// current state, and a sent delivery has no error.
		k, r = kindSent, OutcomeRow{Timeline: heraldtype.OutcomeSent, ProviderMessageID: t.ProviderMessageID, Latency: t.Latency,
			ResetFailCount: !t.DeviceClean, SetError: true}
	case InboxSent:
		k, r = kindInboxSent, OutcomeRow{Timeline: heraldtype.OutcomeSent, Inbox: true, SetError: true}
	case Retry:
		k, r = kindRetry, failedRow(heraldtype.OutcomeRetry, t.Failure)
		r.RunAt = t.RunAt
	case Dead:
		k, r = kindDead, failedRow(heraldtype.OutcomeDead, t.Failure)
		r.InvalidReason, r.Suppress = t.InvalidReason, t.SuppressAddress
		if r.Suppress {
			r.SuppressReason = t.Suppression()
		}
	case Unknown:
		k, r = kindUnknown, failedRow(heraldtype.OutcomeUnknown, t.Failure)
	case Skipped:
		k, r = kindSkipped, failedRow(heraldtype.OutcomeSkipped, Failure{ErrorCode: t.ErrorCode, Error: t.Error})
	case OptedOut:
		k, r = kindOptedOut, failedRow(heraldtype.OutcomeOptedOut, Failure{ErrorCode: t.ErrorCode, Error: t.Error})
	case RateLimited:
		k, r = kindRateLimited, failedRow(heraldtype.OutcomeRateLimited, Failure{ErrorCode: t.ErrorCode, Error: t.Error})
	case Released:
		k, r = kindReleased, OutcomeRow{Release: true, RunAt: t.RunAt}
	case ReleasedWithReason:
		k, r = kindReleasedWithReason, failedRow(t.Outcome, Failure{ErrorCode: t.ErrorCode, Error: t.Error})
		r.Release, r.RunAt = true, t.RunAt
	default:
		return 0, OutcomeRow{}
	}
	// The state of the zero value: a call on t would make it escape.
	r.State = Transitions[k-1].State()
	r.Report = report(t)
	return k, r
}

// report is what an outcome making t says its worker did. Only a send
// reached a provider: a release, a skip, a policy refusal or an inbox
// write (written only by an applied outcome) did not.
func report(t Transition) string {
	switch t := t.(type) {
	case Sent:
		return heraldtype.ReportSent
	case Retry:
		return heraldtype.ReportSendFailed
	case Unknown:
		return heraldtype.ReportSendUnknown
	case Dead:
		if t.NotSent {
			return heraldtype.ReportNotSent
		}
		return heraldtype.ReportSendFailed
	}
	return heraldtype.ReportNotSent
}

func failedRow(timeline heraldtype.AttemptOutcome, f Failure) OutcomeRow {
	return OutcomeRow{Timeline: timeline, SetError: f.ErrorCode != "" || f.Error != "", ErrorCode: f.ErrorCode,
		Error: f.Error, RetryAfter: f.RetryAfter, Latency: f.Latency}
}

// CheckOutcome rejects an outcome that would write a broken row: a bad
// header, no transition, or a move Moves does not allow; and it defaults
// the run_at of a move back to pending to At. Every store's Complete calls
// it first, so all of them refuse the same outcomes.
func CheckOutcome(o *Outcome) error {
	bad := func(format string, args ...any) error {
		return heraldtype.Errorf(heraldtype.EINVALID, "outcome of delivery %d: %s", o.DeliveryID, fmt.Sprintf(format, args...))
	}
	switch {
	case o.DeliveryID <= 0:
		return bad("delivery id must be positive")
	case o.Owner == "":
		return bad("owner must not be empty")
	case o.At.IsZero():
		return bad("at is not set")
	case o.kind == 0:
		return bad("it has no transition (Outcome.To)")
	case !Allowed(heraldtype.StateLeased, o.row.State, ByComplete):
		return bad("leased → %s is not a move Complete makes", o.row.State)
	case o.kind == kindReleasedWithReason && o.row.Timeline != heraldtype.OutcomeDeferred && o.row.Timeline != heraldtype.OutcomePolicyError:
		return bad("a release outcome must be deferred or policy_error, not %q", o.row.Timeline)
	}
	if o.row.State == heraldtype.StatePending && o.row.RunAt.IsZero() {
		o.row.RunAt = o.At
	}
	return nil
}
