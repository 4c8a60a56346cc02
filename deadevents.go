package herald

import (
	"context"
	"encoding/json"

	"github.com/heraldhq/herald/heraldtype"
)

// DeadEvent is a Kafka record Herald gave up on (issue 20 item 5, S3.10).
type DeadEvent = heraldtype.DeadEvent

// DeadEventFilter selects dead events.
type DeadEventFilter = heraldtype.DeadEventFilter

// DeadEventPage is one page of dead events, newest first.
type DeadEventPage struct {
	DeadEvents []DeadEvent `json:"dead_events"`
	NextCursor string      `json:"next_cursor,omitempty"`
}

// The kinds of record a Kafka topic carries (kafkaapi), as a dead event
// names them.
const (
	RecordNotifications = "notifications"
	RecordEvents        = "events"
	RecordInterests     = "interests"
	// RecordRenderFailed is an event record that was applied but one or
	// more of its rules could not render their message (issue 31 item 1):
	// its runs are recorded failed, and its replay renders them again with
	// the rules as they are now instead of applying the event again.
	RecordRenderFailed = "render_failed"
)

// TopicNamespace is the idempotency namespace of the notification
// requests read from a Kafka topic: a notificationId replays only a
// request of the same topic, never an API caller's key (issue 23).
func TopicNamespace(topic string) string { return "kafka:" + topic }

// DeadEventReplay is what replaying dead events did.
type DeadEventReplay struct {
	// Matched counts the dead events selected; with a dry run nothing
	// else happens, and Matched - Skipped is what a replay would make
	// again (issue 30 item 4).
	Matched int `json:"matched"`
	// Skipped counts those that cannot be replayed — records that never
	// decoded: their producer must send them again — left as they are,
	// neither replayed nor failed.
	Skipped  int `json:"skipped"`
	Replayed int `json:"replayed"`
	Failed   int `json:"failed"`
	// Errors names the failures, by dead event id (at most 100).
	Errors map[int64]string `json:"errors,omitempty"`
}

// RecordDeadEvent keeps a record the Kafka intake gave up on, so an
// operator can read it (GET /v1/events/dead) and replay it. A record is
// kept once (the same position, timestamp, key and value: dead-lettered
// again after a crash); the id of the first is returned. Another record at
// a position already used — a topic recreated — is kept too.
func (c *Client) RecordDeadEvent(ctx context.Context, d DeadEvent) (int64, error) {
	switch d.Kind {
	case RecordNotifications, RecordEvents, RecordInterests, RecordRenderFailed:
	default:
		return 0, heraldtype.FieldErrorf("kind", "must be %s, %s, %s or %s", RecordNotifications, RecordEvents, RecordInterests,
			RecordRenderFailed)
	}
	if d.Topic == "" {
		return 0, heraldtype.FieldErrorf("topic", "is required")
	}
	return c.store.PutDeadEvent(ctx, d, c.now().UTC())
}

// GetDeadEvent returns one dead event.
func (c *Client) GetDeadEvent(ctx context.Context, id int64) (DeadEvent, error) {
	return c.store.GetDeadEvent(ctx, id)
}

// ListDeadEvents returns a page of dead events, newest first.
func (c *Client) ListDeadEvents(ctx context.Context, f DeadEventFilter) (DeadEventPage, error) {
	ds, next, err := c.store.ListDeadEvents(ctx, f)
	if err != nil {
		return DeadEventPage{}, err
	}
	return DeadEventPage{DeadEvents: ds, NextCursor: next}, nil
}

// ReplayDeadEvent feeds one dead event back: the call its record made —
// the notification request's enqueue (under its notificationId, so a
// request that did get through once is not sent twice), the event's
// Track, the interest's record — is made again, and the outcome is
// recorded on the dead event. An event that was applied but whose rules
// could not render their message (RecordRenderFailed) is not applied
// again: those rules' failed runs are rendered again with the rules as
// they are now and sent, once (a second replay finds none and is a
// conflict). A record that never decoded cannot be
// replayed (conflict): fix the producer and send it again.
func (c *Client) ReplayDeadEvent(ctx context.Context, id int64) error {
	d, err := c.store.GetDeadEvent(ctx, id)
	if err != nil {
		return err
	}
	replayable, callErr := c.replay(ctx, d)
	if !replayable {
		return callErr
	}
	msg := ""
	if callErr != nil {
		msg = callErr.Error()
	}
	if err := c.store.MarkDeadEventReplayed(ctx, id, msg, c.now().UTC()); err != nil {
		return err
	}
	return callErr
}

// replayable says why d cannot be replayed, or nil: it never decoded, its
// payload does not decode as its kind's call, or its kind is unknown. It
// is what replay checks before making the call, so a dry run counts only
// what a replay would make (issue 30 item 4).
func replayable(d DeadEvent) error {
	if len(d.Payload) == 0 {
		return heraldtype.Errorf(heraldtype.ECONFLICT, "dead event %d never decoded (%s): fix the producer and send it again", d.ID, d.Error)
	}
	var err error
	switch d.Kind {
	case RecordNotifications:
		err = json.Unmarshal(d.Payload, new(Request))
	case RecordInterests:
		err = json.Unmarshal(d.Payload, new(InterestInput))
	case RecordEvents, RecordRenderFailed:
		err = json.Unmarshal(d.Payload, new(Event))
	default:
		return heraldtype.Errorf(heraldtype.ECONFLICT, "dead event %d has an unknown kind %q", d.ID, d.Kind)
	}
	if err != nil {
		return heraldtype.Errorf(heraldtype.ECONFLICT, "dead event %d: its payload does not decode: %v", d.ID, err)
	}
	return nil
}

// replay makes a dead event's call again; replayable is false when it
// cannot be made at all (err then says why).
func (c *Client) replay(ctx context.Context, d DeadEvent) (ok bool, err error) {
	if err := replayable(d); err != nil {
		return false, err
	}
	// replayable decoded the payload already; these cannot fail.
	switch d.Kind {
	case RecordNotifications:
		var r Request
		_ = json.Unmarshal(d.Payload, &r)
		r.IdempotencyNamespace = TopicNamespace(d.Topic)
		_, err := c.Enqueue(ctx, r)
		return true, err
	case RecordInterests:
		var in InterestInput
		_ = json.Unmarshal(d.Payload, &in)
		_, err := c.RecordInterests(ctx, []InterestInput{in})
		return true, err
	case RecordEvents:
		var e Event
		_ = json.Unmarshal(d.Payload, &e)
		// The payload does not carry the topic (Event.Topic is not
		// JSON); the dead event does, and a rule's source matches it.
		e.Topic = d.Topic
		_, err := c.Track(ctx, e)
		return true, err
	case RecordRenderFailed:
		// The event was applied (a Track would answer "replayed"): what
		// is left is its rules' runs whose message could not be rendered.
		var e Event
		_ = json.Unmarshal(d.Payload, &e)
		return true, c.retryRenders(ctx, d, e)
	}
	return false, heraldtype.Errorf(heraldtype.ECONFLICT, "dead event %d has an unknown kind %q", d.ID, d.Kind)
}

// maxReplayErrors bounds the errors a bulk replay names.
const maxReplayErrors = 100

// ReplayDeadEvents replays every dead event f selects that has not been
// replayed yet (f.Replayed is taken as "no"), newest first as listed,
// and skips those that cannot be replayed (records that never decoded);
// with dryRun it only counts them (herald events replay --dry-run).
func (c *Client) ReplayDeadEvents(ctx context.Context, f DeadEventFilter, dryRun bool) (DeadEventReplay, error) {
	f.Replayed, f.Limit = "no", 200
	var out DeadEventReplay
	for {
		ds, next, err := c.store.ListDeadEvents(ctx, f)
		if err != nil {
			return out, err
		}
		for _, d := range ds {
			out.Matched++
			if err := replayable(d); err != nil {
				out.Skipped++
				continue
			}
			if dryRun {
				continue
			}
			if err := c.ReplayDeadEvent(ctx, d.ID); err != nil {
				out.Failed++
				if out.Errors == nil {
					out.Errors = map[int64]string{}
				}
				if len(out.Errors) < maxReplayErrors {
					out.Errors[d.ID] = err.Error()
				}
				continue
			}
			out.Replayed++
		}
		if next == "" {
			return out, nil
		}
		f.Cursor = next
	}
}
