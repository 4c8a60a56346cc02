package httpapi

import (
	"net/http"
	"strconv"

	"github.com/heraldhq/herald"
	"github.com/heraldhq/herald/heraldtype"
)

// The Kafka intake's dead events (issue 20 item 5, S3.10).

func deadEventID(r *http.Request) (int64, error) {
	id, err := strconv.ParseInt(r.PathValue("id"), 10, 64)
	if err != nil || id < 1 {
		return 0, heraldtype.FieldErrorf("id", "must be a positive integer")
	}
	return id, nil
}

// listDeadEvents: GET /v1/events/dead?topic=&kind=&replayed=&from=&to=&cursor=&limit=,
// newest first: {"dead_events":[…],"next_cursor":"…"}.
func (s *Server) listDeadEvents(w http.ResponseWriter, r *http.Request) error {
	var f herald.DeadEventFilter
	if err := parseQuery(r.URL.RawQuery, map[string]func(string) error{
		"topic": setString(&f.Topic), "kind": setString(&f.Kind), "replayed": setString(&f.Replayed),
		"from": setTime("from", &f.From), "to": setTime("to", &f.To),
		"cursor": setString(&f.Cursor), "limit": setLimit(&f.Limit),
	}); err != nil {
		return err
	}
	page, err := s.client.ListDeadEvents(r.Context(), f)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, page)
	return nil
}

// getDeadEvent: GET /v1/events/dead/{id}.
func (s *Server) getDeadEvent(w http.ResponseWriter, r *http.Request) error {
	id, err := deadEventID(r)
	if err != nil {
		return err
	}
	d, err := s.client.GetDeadEvent(r.Context(), id)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, d)
	return nil
}

// replayDeadEvent: POST /v1/events/dead/{id}/replay makes the record's
// call again; the answer is the dead event with the replay's outcome
// (200), or the call's error.
func (s *Server) replayDeadEvent(w http.ResponseWriter, r *http.Request) error {
	id, err := deadEventID(r)
	if err != nil {
		return err
	}
	if err := s.client.ReplayDeadEvent(r.Context(), id); err != nil {
		return err
	}
	d, err := s.client.GetDeadEvent(r.Context(), id)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, d)
	return nil
}

// replayDeadEventsBody selects the dead events a bulk replay feeds back.
type replayDeadEventsBody struct {
	Topic  string `json:"topic"`
	Kind   string `json:"kind"`
	From   string `json:"from"`
	To     string `json:"to"`
	DryRun bool   `json:"dry_run"`
}

// replayDeadEvents: POST /v1/events/dead/replay {"topic"?, "kind"?,
// "dry_run"?} replays every dead event not yet replayed that matches, or
// only counts them: {"matched","skipped","replayed","failed","errors"}
// (skipped: records that never decoded, which cannot be replayed).
func (s *Server) replayDeadEvents(w http.ResponseWriter, r *http.Request) error {
	var in replayDeadEventsBody
	if err := s.decodeJSON(w, r, &in, bodySpec{optional: true}); err != nil {
		return err
	}
	f := herald.DeadEventFilter{Topic: in.Topic, Kind: in.Kind}
	var err error
	if f.From, err = parseTime("from", in.From); err != nil {
		return err
	}
	if f.To, err = parseTime("to", in.To); err != nil {
		return err
	}
	out, err := s.client.ReplayDeadEvents(r.Context(), f, in.DryRun)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}
