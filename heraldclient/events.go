package heraldclient

import (
	"context"
	"iter"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/heraldhq/herald/heraldtype"
)

// Event is something that happened, for the rules and the reminders that
// stop on it (the body of PostEvent and DryRunRule).
type Event struct {
	// ID identifies the event: the server applies an id once (a repeat is
	// answered Replayed), so PostEvent with an ID is retried; without one
	// it is sent once.
	ID string `json:"id,omitempty"`
	// Name is what happened ("price_changed").
	Name string `json:"name"`
	// UserID is whom it happened to, if anyone.
	UserID string `json:"user_id,omitempty"`
	// Subject is what it happened to ("product:42").
	Subject string `json:"subject,omitempty"`
	// Data carries the event's fields; each value is a string, a number
	// or a boolean (kept as its text on the server).
	Data map[string]any `json:"data,omitempty"`
	// OccurredAt defaults to now.
	OccurredAt *time.Time `json:"occurred_at,omitempty"`
	// Version orders the events of one subject: one whose version is not
	// above the last seen for its subject is stale. Zero: not ordered.
	Version int64 `json:"version,omitempty"`
	// CancellationKey cancels the notifications triggered with it (of
	// UserID, or of every user without one) before the answer, as Cancel
	// does. A dry run ignores it.
	CancellationKey string `json:"cancellation_key,omitempty"`
}

// TrackResult is what an event did.
type TrackResult struct {
	// EventID is the event's id (made by the server when it had none).
	EventID string `json:"event_id"`
	// StoppedReminders counts the reminders the event stopped.
	StoppedReminders int `json:"stopped_reminders"`
	// CancelledDeliveries counts the deliveries its CancellationKey
	// cancelled.
	CancelledDeliveries int `json:"cancelled_deliveries,omitempty"`
	// CancelledDigestItems counts the triggers waiting in digests that
	// its CancellationKey took out of them.
	CancelledDigestItems int `json:"cancelled_digest_items,omitempty"`
	// Replayed: the event had been applied before; this is what it did
	// then, and nothing was done again.
	Replayed bool `json:"replayed,omitempty"`
	// Stale: the event's version is not above the last seen for its
	// subject; no rule acted on it.
	Stale bool `json:"stale,omitempty"`
	// Rules is what each rule decided (the first ones, by name;
	// RulesTruncated says there were more).
	Rules          []RuleOutcome `json:"rules,omitempty"`
	RulesTruncated bool          `json:"rules_truncated,omitempty"`
	// Counts counts every rule's decision; nil when no rule judged it.
	Counts *DecisionCounts `json:"counts,omitempty"`
}

// RuleOutcome is one rule's decision on an event.
type RuleOutcome struct {
	Rule string `json:"rule"`
	// Detected: the detector fired; Reason says why or why not.
	Detected bool   `json:"detected"`
	Reason   string `json:"reason,omitempty"`
	// Run is the id of the fan-out the rule started (ListRuleRuns).
	Run string `json:"run,omitempty"`
	// Error is what stopped the rule.
	Error string `json:"error,omitempty"`
}

// DecisionCounts counts the rules' decisions on one event.
type DecisionCounts struct {
	Rules    int `json:"rules"`
	Detected int `json:"detected"`
	Errors   int `json:"errors"`
	Runs     int `json:"runs"`
}

// DeadEventPage is one page of dead events.
type DeadEventPage struct {
	DeadEvents []heraldtype.DeadEvent `json:"dead_events"`
	NextCursor string                 `json:"next_cursor,omitempty"`
}

// DeadEventReplay is what replaying dead events did (or, for a dry run,
// would do).
type DeadEventReplay struct {
	// Matched counts the dead events selected.
	Matched int `json:"matched"`
	// Skipped counts those that cannot be replayed (records that never
	// decoded).
	Skipped  int `json:"skipped"`
	Replayed int `json:"replayed"`
	Failed   int `json:"failed"`
	// Errors names the failures by dead event id.
	Errors map[int64]string `json:"errors,omitempty"`
}

// DeadEventSelector selects the dead events ReplayDeadEvents replays.
type DeadEventSelector struct {
	Topic string `json:"topic,omitempty"`
	Kind  string `json:"kind,omitempty"`
	// From and To bound when Herald gave up on the record: at or after
	// From, before To; zero is unbounded.
	From time.Time `json:"-"`
	To   time.Time `json:"-"`
	// DryRun counts what would be replayed and replays nothing.
	DryRun bool `json:"dry_run,omitempty"`
}

// PostEvent reports an event (POST /v1/events): the rules act on it and
// the reminders waiting for it stop. With an ID it is retried (the server
// applies an id once); without one it is sent once.
func (c *Client) PostEvent(ctx context.Context, e Event) (TrackResult, error) {
	var out TrackResult
	_, err := c.do(ctx, call{method: http.MethodPost, path: "/v1/events", body: e, out: &out, safe: e.ID != ""})
	return out, err
}

// ListDeadEvents reads one page of the records the Kafka intake gave up
// on (GET /v1/events/dead): by topic, kind, whether replayed ("yes",
// "no") and when Herald gave up on them.
func (c *Client) ListDeadEvents(ctx context.Context, f heraldtype.DeadEventFilter) (DeadEventPage, error) {
	q := newQuery().str("topic", f.Topic).str("kind", f.Kind).str("replayed", f.Replayed).time("from", f.From).time("to", f.To).
		str("cursor", f.Cursor).limit(f.Limit)
	var page DeadEventPage
	_, err := c.do(ctx, call{method: http.MethodGet, path: "/v1/events/dead", query: url.Values(q), out: &page})
	return page, err
}

// DeadEvents walks every dead event f selects.
func (c *Client) DeadEvents(ctx context.Context, f heraldtype.DeadEventFilter) iter.Seq2[heraldtype.DeadEvent, error] {
	return walk(ctx, f.Cursor, func(ctx context.Context, cursor string) ([]heraldtype.DeadEvent, string, error) {
		f.Cursor = cursor
		p, err := c.ListDeadEvents(ctx, f)
		return p.DeadEvents, p.NextCursor, err
	})
}

// GetDeadEvent reads one dead event (GET /v1/events/dead/{id}).
func (c *Client) GetDeadEvent(ctx context.Context, id int64) (heraldtype.DeadEvent, error) {
	var d heraldtype.DeadEvent
	_, err := c.do(ctx, call{method: http.MethodGet, path: pathf("/v1/events/dead/%s", strconv.FormatInt(id, 10)), out: &d})
	return d, err
}

// ReplayDeadEvent applies a dead event again (POST
// /v1/events/dead/{id}/replay) and returns it as it is after. Not retried.
func (c *Client) ReplayDeadEvent(ctx context.Context, id int64) (heraldtype.DeadEvent, error) {
	var d heraldtype.DeadEvent
	_, err := c.do(ctx, call{method: http.MethodPost, path: pathf("/v1/events/dead/%s/replay", strconv.FormatInt(id, 10)), out: &d})
	return d, err
}

// ReplayDeadEvents replays every dead event sel selects (POST
// /v1/events/dead/replay). Not retried, unless it is a dry run.
func (c *Client) ReplayDeadEvents(ctx context.Context, sel DeadEventSelector) (DeadEventReplay, error) {
	body := struct {
		DeadEventSelector
		From string `json:"from,omitempty"`
		To   string `json:"to,omitempty"`
	}{DeadEventSelector: sel}
	if !sel.From.IsZero() {
		body.From = sel.From.Format(time.RFC3339Nano)
	}
	if !sel.To.IsZero() {
		body.To = sel.To.Format(time.RFC3339Nano)
	}
	var out DeadEventReplay
	_, err := c.do(ctx, call{method: http.MethodPost, path: "/v1/events/dead/replay", body: body, out: &out, safe: sel.DryRun})
	return out, err
}
