package httpapi

import (
	"encoding/json"
	"net/http"
	"time"

	"github.com/heraldhq/herald"
)

// eventBody is herald.Event as POST /v1/events and a rule's dry run take
// it: data values may be any JSON scalar, as on a Kafka events topic
// (herald.EventDataFromJSON), so `"current_price": 8500` needs no quotes.
type eventBody struct {
	ID         string                     `json:"id"`
	Name       string                     `json:"name"`
	UserID     string                     `json:"user_id"`
	Subject    string                     `json:"subject"`
	Data       map[string]json.RawMessage `json:"data"`
	OccurredAt *time.Time                 `json:"occurred_at"`
	Version    int64                      `json:"version"`
	// CancellationKey cancels the notifications triggered with it.
	CancellationKey string `json:"cancellation_key"`
}

// decodeEvent reads an event body.
func (s *Server) decodeEvent(w http.ResponseWriter, r *http.Request) (herald.Event, error) {
	var in eventBody
	if err := s.decodeJSON(w, r, &in, bodySpec{timeField: "occurred_at"}); err != nil {
		return herald.Event{}, err
	}
	data, err := herald.EventDataFromJSON(in.Data)
	if err != nil {
		return herald.Event{}, err
	}
	return herald.Event{ID: in.ID, Name: in.Name, UserID: in.UserID, Subject: in.Subject, Data: data,
		OccurredAt: in.OccurredAt, Version: in.Version, CancellationKey: in.CancellationKey}, nil
}

// postEvent: POST /v1/events applies a business event (herald.Event,
// Client.Track) and answers what it did once it is done: the reminders it
// stopped (stopped when the answer arrives) and each rule's decision, with
// the fan-out it started. An event id sent again with the same body is
// answered from its record ("replayed"); with another body it is a 409.
func (s *Server) postEvent(w http.ResponseWriter, r *http.Request) error {
	in, err := s.decodeEvent(w, r)
	if err != nil {
		return err
	}
	// An event's id is the calling key's own, as a trigger's
	// Idempotency-Key is (issue 31 item 5): the key's id, not its secret,
	// names the namespace; without auth (dev) every caller shares "dev".
	if p := principalFrom(r.Context()); p != nil {
		in.Namespace = p.keyID
	}
	res, err := s.client.Track(r.Context(), in)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, res)
	return nil
}
