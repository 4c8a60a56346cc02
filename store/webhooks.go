package store

import (
	"cmp"
	"context"
	"slices"
	"time"

	"github.com/heraldhq/herald/heraldtype"
)

// WebhookEndpoint is an outbound webhook endpoint as stored (issue 35 item
// 4): what the API shows, and the signing secrets it never shows after
// creation or rotation.
type WebhookEndpoint struct {
	heraldtype.WebhookEndpoint
	// Secret is the current signing secret ("whsec_…").
	Secret string
	// PreviousSecret is the secret a rotation replaced, valid (messages
	// signed with it too) until PreviousSecretUntil; "" otherwise.
	PreviousSecret string
}

// WebhookEndpointUpdate changes an endpoint's settable fields; a nil
// field is left as it is. Enabling an endpoint clears its disabled reason
// and failing-since, so it starts afresh.
type WebhookEndpointUpdate struct {
	URL         *string
	Description *string
	Events      *[]string
	Enabled     *bool
}

// WebhookEvent is one event to report to every enabled endpoint
// subscribed to its type (AddWebhookEvents): the events that are not the
// by-product of a statement that already writes its messages (a test
// message, an event raised in Go).
type WebhookEvent struct {
	EventID     string
	Type        string
	OrderingKey string
	// Data is the event's JSON object.
	Data []byte
	At   time.Time
	// EndpointID, if set, sends the event to that endpoint only, whatever
	// its subscriptions (a test message).
	EndpointID string
}

// WebhookClaim asks for due messages.
type WebhookClaim struct {
	Owner      string
	Now        time.Time
	LeaseUntil time.Time
	Limit      int
	// PerEndpoint, if positive, takes at most this many messages of one
	// endpoint: the dispatcher's cap on requests in flight per endpoint
	// (webhooks.max_in_flight_per_endpoint).
	PerEndpoint int
	// Skip leaves the messages of these endpoints out: the ones the
	// dispatcher is still sending to, so a slow endpoint never has more
	// than PerEndpoint sends in flight and does not hold the others.
	Skip []string
}

// WebhookJob is a claimed message with what sending it needs.
type WebhookJob struct {
	heraldtype.WebhookMessage
	URL string
	// Secrets sign the message: the current one, then the previous one
	// while a rotation's overlap lasts.
	Secrets []string
	// FailingSince is the endpoint's, at the claim.
	FailingSince *time.Time
}

// WebhookFinish is the outcome of one send of a claimed message, applied
// only while the message is still leased by Owner for Attempt.
type WebhookFinish struct {
	Seq     int64
	Owner   string
	Attempt int
	At      time.Time
	// State is sent, pending (a retry at RunAt, or held by a disabled
	// endpoint) or dead.
	State heraldtype.WebhookMessageState
	RunAt time.Time
	// Status is the endpoint's HTTP status, 0 without an answer; Error
	// says what went wrong ("" when sent).
	Status int
	Error  string
	// Disable, when set, disables the endpoint with this reason (410
	// Gone). DisableFailingSince, when set, disables it with
	// FailingReason if it has been failing since that time or earlier
	// (webhooks.disable_after). A sent outcome clears failing_since; any
	// other sets it if unset.
	Disable             string
	DisableFailingSince time.Time
	FailingReason       string
}

// WebhookMessageFilter selects an endpoint's messages, newest first.
type WebhookMessageFilter struct {
	EndpointID string
	// State, if set, keeps that state only.
	State heraldtype.WebhookMessageState
	// Before, if positive, keeps the messages before the position
	// (BeforeTxid, Before) in the log's order (the page's cursor: the
	// last message of the page before). Messages are listed newest first
	// in that order: by their writing transaction, then seq.
	Before     int64
	BeforeTxid uint64
	Limit      int
}

// WebhookEndpoints stores the outbound webhook endpoints and their
// messages. Store embeds it. The messages of a delivery's outcome are
// written by Complete (and ReapExpiredLeases) themselves, in the same
// statement or transaction (docs/ARCHITECTURE.md, "Outbound webhooks").
type WebhookEndpoints interface {
	WebhookStreams

	// CreateWebhookEndpoint records an endpoint; ECONFLICT if its id exists.
	CreateWebhookEndpoint(ctx context.Context, e WebhookEndpoint) error
	// GetWebhookEndpoint returns an endpoint with its secrets; ENOTFOUND if
	// absent.
	GetWebhookEndpoint(ctx context.Context, id string) (WebhookEndpoint, error)
	// ListWebhookEndpoints returns every endpoint, oldest first.
	ListWebhookEndpoints(ctx context.Context) ([]WebhookEndpoint, error)
	// UpdateWebhookEndpoint applies u at now and returns the endpoint;
	// ENOTFOUND if absent.
	UpdateWebhookEndpoint(ctx context.Context, id string, u WebhookEndpointUpdate, now time.Time) (WebhookEndpoint, error)
	// DeleteWebhookEndpoint removes an endpoint and its messages;
	// ENOTFOUND if absent.
	DeleteWebhookEndpoint(ctx context.Context, id string) error
	// RotateWebhookSecret makes secret the endpoint's signing secret and
	// keeps the one it replaces valid until previousUntil; ENOTFOUND if
	// absent.
	RotateWebhookSecret(ctx context.Context, id, secret string, previousUntil, now time.Time) (WebhookEndpoint, error)

	// AddWebhookEvents writes one pending message per event and enabled
	// endpoint subscribed to its type (or its EndpointID's, enabled or
	// not), in one transaction, and returns how many it wrote.
	AddWebhookEvents(ctx context.Context, events []WebhookEvent) (int, error)
	// ClaimWebhookMessages leases up to p.Limit due messages of enabled
	// endpoints (pending with run_at <= p.Now, or leased with an ended
	// lease), oldest run_at first, each only when no message of its
	// endpoint and ordering key with a smaller seq is pending or leased:
	// a notification's events go out in order, one at a time. With
	// p.PerEndpoint it takes at most that many of one endpoint, and none
	// of the endpoints p.Skip names. Two concurrent claims never return
	// the same message. attempt+1.
	ClaimWebhookMessages(ctx context.Context, p WebhookClaim) ([]WebhookJob, error)
	// FinishWebhookMessage applies a send's outcome to the message and its
	// endpoint in one transaction, if the message is still leased by
	// f.Owner for f.Attempt. It reports whether it applied, and whether it
	// disabled the endpoint.
	FinishWebhookMessage(ctx context.Context, f WebhookFinish) (applied, disabled bool, err error)
	// FinishWebhooksSent applies many sent outcomes (each State sent) in
	// one transaction, as FinishWebhookMessage would one by one: each
	// message still leased by its Owner for its Attempt is sent, and an
	// endpoint of one of them that was failing is failing no more. It
	// returns how many applied. The dispatcher's usual outcome, batched
	// (issue 35 item 5).
	FinishWebhooksSent(ctx context.Context, fs []WebhookFinish) (int, error)
	// ListWebhookMessages returns a page of an endpoint's messages, newest
	// first; ENOTFOUND if the endpoint does not exist.
	ListWebhookMessages(ctx context.Context, f WebhookMessageFilter) ([]heraldtype.WebhookMessage, error)
	// ReplayWebhookMessages sends an endpoint's dead messages again — those
	// of seqs, or every dead one when seqs is empty — with their event
	// ids: pending, attempt 0, run_at and first_at = now. It returns how
	// many it moved; ENOTFOUND if the endpoint does not exist.
	ReplayWebhookMessages(ctx context.Context, endpointID string, seqs []int64, now time.Time) (int, error)
	// CountWebhookMessagesPending counts the messages waiting to be sent
	// or being sent (pending or leased), of every endpoint, stopping at
	// max: it reads the due index only (the pending gauge).
	CountWebhookMessagesPending(ctx context.Context, max int) (int, error)
	// PruneWebhookMessages deletes the sent and dead messages that
	// finished before cutoff (the elected leader's retention) and returns
	// how many it deleted; pending and leased ones are never deleted,
	// except those whose endpoint is gone (a store may write one while the
	// endpoint's delete commits). It deletes the log's events that
	// occurred before cutoff and that their endpoint's cursor has passed
	// too, never one still to be sent.
	PruneWebhookMessages(ctx context.Context, cutoff time.Time) (int, error)
}

// MaxWebhookClaim bounds ClaimWebhookMessages' limit, and
// MaxWebhookMessagePage ListWebhookMessages'.
const (
	MaxWebhookClaim       = 1000
	MaxWebhookMessagePage = 500
)

// CheckWebhookClaim validates the arguments of ClaimWebhookMessages.
func CheckWebhookClaim(p WebhookClaim) error {
	if p.Owner == "" {
		return heraldtype.FieldErrorf("owner", "must not be empty")
	}
	if !p.LeaseUntil.After(p.Now) {
		return heraldtype.FieldErrorf("lease_until", "must be after now")
	}
	if p.Limit < 1 || p.Limit > MaxWebhookClaim {
		return heraldtype.FieldErrorf("limit", "must be between 1 and %d", MaxWebhookClaim)
	}
	if p.PerEndpoint < 0 {
		return heraldtype.FieldErrorf("per_endpoint", "must not be negative")
	}
	if len(p.Skip) > MaxWebhookClaim {
		return heraldtype.FieldErrorf("skip", "names %d endpoints; the limit is %d", len(p.Skip), MaxWebhookClaim)
	}
	return nil
}

// CheckWebhookFinish validates a WebhookFinish.
func CheckWebhookFinish(f WebhookFinish) error {
	switch f.State {
	case heraldtype.WebhookSent, heraldtype.WebhookDead:
	case heraldtype.WebhookPending:
		if f.RunAt.IsZero() {
			return heraldtype.FieldErrorf("run_at", "a retry needs a time")
		}
	default:
		return heraldtype.FieldErrorf("state", "must be sent, pending or dead, not %q", f.State)
	}
	if f.Owner == "" {
		return heraldtype.FieldErrorf("owner", "must not be empty")
	}
	return nil
}

// CheckWebhooksSent validates the outcomes of FinishWebhooksSent: every one
// sent, with an owner, at most MaxWebhookClaim of them.
func CheckWebhooksSent(fs []WebhookFinish) error {
	if len(fs) > MaxWebhookClaim {
		return heraldtype.FieldErrorf("outcomes", "at most %d at once, not %d", MaxWebhookClaim, len(fs))
	}
	for _, f := range fs {
		if f.State != heraldtype.WebhookSent {
			return heraldtype.FieldErrorf("state", "must be sent, not %q", f.State)
		}
		if err := CheckWebhookFinish(f); err != nil {
			return err
		}
	}
	return nil
}

// CheckWebhookMessageFilter validates a WebhookMessageFilter.
func CheckWebhookMessageFilter(f WebhookMessageFilter) error {
	if f.State != "" && !f.State.Valid() {
		return heraldtype.FieldErrorf("state", "must be one of pending, leased, sent, dead")
	}
	if f.Limit < 1 || f.Limit > MaxWebhookMessagePage {
		return heraldtype.FieldErrorf("limit", "must be between 1 and %d", MaxWebhookMessagePage)
	}
	return nil
}

// CheckWebhookEvents validates the events of AddWebhookEvents.
func CheckWebhookEvents(events []WebhookEvent) error {
	for _, e := range events {
		if e.EventID == "" || e.Type == "" || e.OrderingKey == "" {
			return heraldtype.FieldErrorf("events", "an event needs an id, a type and an ordering key")
		}
	}
	return nil
}

// SortWebhookJobs puts claimed jobs in seq order, which an UPDATE …
// RETURNING does not keep.
func SortWebhookJobs(jobs []WebhookJob) {
	slices.SortFunc(jobs, func(a, b WebhookJob) int { return cmp.Compare(a.Seq, b.Seq) })
}
