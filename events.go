package herald

import (
	"context"
	"time"

	"github.com/heraldhq/herald/heraldtype"
	"github.com/heraldhq/herald/store"
)

// Event is a business event: the body of POST /v1/events. Today an event
// stops the reminders waiting for it (a reminder's stop.on_event); the
// event rules of S3 extend the same endpoint.
type Event struct {
	// ID identifies the event for de-duplication (optional).
	ID string `json:"id,omitempty"`
	// Name is what happened ("checkout_completed").
	Name string `json:"name"`
	// UserID is whom it happened to.
	UserID string `json:"user_id,omitempty"`
	// Subject is what it happened to ("product:42"), optional.
	Subject string `json:"subject,omitempty"`
	// Data carries the event's fields; a reminder's stop.match compares
	// them.
	Data map[string]string `json:"data,omitempty"`
	// OccurredAt defaults to now.
	OccurredAt *time.Time `json:"occurred_at,omitempty"`
	// Version orders the events of one subject (S3.1): an event whose
	// version is not above the last one seen for its subject is stale and
	// is dropped. Zero: the event is not ordered (never stale). A product
	// system's event timestamp (epoch milliseconds) serves.
	Version int64 `json:"version,omitempty"`
	// Topic is the Kafka topic the event was read from, set by kafkaapi;
	// "" for POST /v1/events. A rule whose source names a topic applies
	// to that topic's events only; a rule without one to the others.
	Topic string `json:"-"`
}

// TrackResult is what an event did.
type TrackResult struct {
	// StoppedReminders counts the reminders the event stopped.
	StoppedReminders int `json:"stopped_reminders"`
}

// Track records what an event does. It stops, synchronously, every active
// reminder of the event's user whose stop.on_event is the event's name and
// whose stop.match fields all equal the event's data (issue 19 item 3):
// once Track returns, none of them sends again.
func (c *Client) Track(ctx context.Context, e Event) (TrackResult, error) {
	if err := validEventName("name", e.Name); err != nil {
		return TrackResult{}, err
	}
	if e.ID != "" {
		if err := validID("id", e.ID); err != nil {
			return TrackResult{}, err
		}
	}
	if e.Subject != "" {
		if err := validText("subject", e.Subject, MaxIDLength); err != nil {
			return TrackResult{}, err
		}
	}
	if err := validData(e.Data, false); err != nil {
		return TrackResult{}, err
	}
	if e.UserID == "" {
		// Today an event acts on its user's reminders only.
		return TrackResult{}, heraldtype.FieldErrorf("user_id", "is required")
	}
	if err := validID("user_id", e.UserID); err != nil {
		return TrackResult{}, err
	}
	n, err := c.store.StopReminders(ctx, store.ReminderSelector{UserID: e.UserID, Event: e.Name, Data: e.Data},
		heraldtype.StopEvent, c.now().UTC())
	if err != nil {
		return TrackResult{}, err
	}
	if n > 0 {
		c.metrics.RemindersStopped.WithLabelValues(heraldtype.StopEvent).Add(float64(n))
	}
	return TrackResult{StoppedReminders: n}, nil
}

// validEventName: event names follow the type names' pattern.
func validEventName(field, name string) error {
	if name == "" {
		return heraldtype.FieldErrorf(field, "is required")
	}
	// Upper case too: product systems name their events PRICE_CHANGE
	// (seed 003); names compare exactly.
	if len(name) > MaxTypeLength || !eventNamePattern.MatchString(name) {
		return heraldtype.FieldErrorf(field, "must be 1-%d characters of letters, digits, '_', '.', '-', starting with a letter or digit", MaxTypeLength)
	}
	return nil
}
