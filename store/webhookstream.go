package store

import (
	"cmp"
	"context"
	"time"

	"github.com/heraldhq/herald/heraldtype"
)

// The outbound webhooks' event log (issue 35 item 5; docs/ARCHITECTURE.md
// "Outbound webhooks", "The event log"). Every event is written once into
// the insert-only log by the statement of the change it reports; an
// endpoint's stream reads the events past its cursor, one instance at a
// time (a lease on the endpoint), sends them, and advances the cursor in
// one write per batch. An event that needs a retry is copied, with its
// seq, into the messages table, which the retry claim
// (ClaimWebhookMessages) serves as before.

// WebhookPosition is a place in the log: the writing transaction's id
// (PostgreSQL's txid; 0 in SQLite, whose single writer commits in seq
// order) and the event's seq. Positions order by Txid, then Seq.
type WebhookPosition struct {
	Txid uint64
	Seq  int64
}

// Compare orders two positions.
func (p WebhookPosition) Compare(q WebhookPosition) int {
	return cmp.Or(cmp.Compare(p.Txid, q.Txid), cmp.Compare(p.Seq, q.Seq))
}

// IsZero reports whether p is the zero position.
func (p WebhookPosition) IsZero() bool { return p == WebhookPosition{} }

// WebhookStreamClaim asks ClaimWebhookStream for one endpoint's stream.
type WebhookStreamClaim struct {
	Owner      string
	Now        time.Time
	LeaseUntil time.Time
	// Limit bounds the events returned.
	Limit int
	// Skip names endpoints not to take (the caller is still sending to
	// them).
	Skip []string
}

// WebhookLogEvent is one event of an endpoint's stream: a pending
// message, attempt 0, at its place in the log.
type WebhookLogEvent struct {
	heraldtype.WebhookMessage
	Txid uint64
}

// Position is the event's place in the log.
func (e WebhookLogEvent) Position() WebhookPosition {
	return WebhookPosition{Txid: e.Txid, Seq: e.Seq}
}

// WebhookStream is an endpoint's next events past its cursor, its stream
// leased to the claim's owner until the claim's LeaseUntil.
type WebhookStream struct {
	EndpointID string
	URL        string
	// Secrets sign the messages, as WebhookJob's.
	Secrets      []string
	FailingSince *time.Time
	// Events in log order, at most the claim's Limit.
	Events []WebhookLogEvent
	// Held names the ordering keys of Events that have an unfinished
	// (pending or leased) message in the retry table: their events must
	// wait behind it, so they are moved, not sent.
	Held map[string]bool
}

// WebhookMove copies a stream's event into the retry table, keeping its
// seq: State pending (a retry at RunAt, or an event held behind an
// earlier one of its key) or dead.
type WebhookMove struct {
	Event      WebhookLogEvent
	State      heraldtype.WebhookMessageState
	Attempt    int
	RunAt      time.Time
	FirstAt    time.Time
	LastStatus int
	LastError  string
}

// WebhookStreamAdvance is what a stream's batch came to. It applies only
// while Owner still holds the endpoint's stream, and releases it.
type WebhookStreamAdvance struct {
	EndpointID string
	Owner      string
	At         time.Time
	// Through moves the cursor there: the batch's last event.
	Through WebhookPosition
	// Moves are the events copied into the retry table, in log order.
	Moves []WebhookMove
	// Sent says a send of the batch succeeded: the endpoint is failing no
	// more.
	Sent bool
	// Failed says a send failed: the endpoint is failing since At unless
	// it already was. Disable, DisableFailingSince and FailingReason
	// disable it as WebhookFinish's do.
	Failed              bool
	Disable             string
	DisableFailingSince time.Time
	FailingReason       string
}

// WebhookStreams is the log's side of WebhookEndpoints.
type WebhookStreams interface {
	// ClaimWebhookStream leases the stream of one enabled endpoint, not in
	// p.Skip, whose stream no live lease holds, that has events past its
	// cursor, and returns up to p.Limit of them in
	// log order with its Held keys; nil when there is none. On PostgreSQL
	// only events whose transaction is older than every running one are
	// read, so none can later appear behind the cursor.
	ClaimWebhookStream(ctx context.Context, p WebhookStreamClaim) (*WebhookStream, error)
	// AdvanceWebhookStream applies a, in one transaction, if a.Owner still
	// holds the stream: the moves, the cursor, the endpoint's failing
	// state, the backoff, and releases the lease. It reports whether it
	// applied and whether it disabled the endpoint.
	AdvanceWebhookStream(ctx context.Context, a WebhookStreamAdvance) (applied, disabled bool, err error)
	// CountWebhookBacklog counts the endpoint's events past its cursor,
	// those whose transaction may still be running included, stopping at
	// max.
	CountWebhookBacklog(ctx context.Context, endpointID string, max int) (int, error)
}

// CheckWebhookStreamClaim validates the arguments of ClaimWebhookStream.
func CheckWebhookStreamClaim(p WebhookStreamClaim) error {
	return CheckWebhookClaim(WebhookClaim{Owner: p.Owner, Now: p.Now, LeaseUntil: p.LeaseUntil, Limit: p.Limit, Skip: p.Skip})
}

// CheckWebhookStreamAdvance validates a WebhookStreamAdvance.
func CheckWebhookStreamAdvance(a WebhookStreamAdvance) error {
	if a.Owner == "" || a.EndpointID == "" {
		return heraldtype.FieldErrorf("owner", "an advance names its endpoint and owner")
	}
	if len(a.Moves) > MaxWebhookClaim {
		return heraldtype.FieldErrorf("moves", "at most %d at once, not %d", MaxWebhookClaim, len(a.Moves))
	}
	for _, m := range a.Moves {
		switch m.State {
		case heraldtype.WebhookPending:
			if m.RunAt.IsZero() {
				return heraldtype.FieldErrorf("run_at", "a moved message needs a time")
			}
		case heraldtype.WebhookDead:
		default:
			return heraldtype.FieldErrorf("state", "a moved message is pending or dead, not %q", m.State)
		}
	}
	if a.Through.IsZero() {
		return heraldtype.FieldErrorf("through", "an advance moves the cursor")
	}
	return nil
}
