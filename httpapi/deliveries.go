package httpapi

import (
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/heraldhq/herald"
	"github.com/heraldhq/herald/heraldtype"
)

// listDeliveries: GET /v1/deliveries lists deliveries newest first, for
// example the dead letters by error code, type, user and time (S0.4):
//
//	?state=dead&error_code=&type=&user_id=&notification_id=&from=&to=&cursor=&limit=
//
// from and to are RFC 3339 times bounding created_at (from inclusive, to
// exclusive). The answer is {"deliveries":[…],"next_cursor":"…"}; pass
// next_cursor back as cursor for the next page.
func (s *Server) listDeliveries(w http.ResponseWriter, r *http.Request) error {
	f, err := parseDeliveryQuery(r.URL.RawQuery)
	if err != nil {
		return err
	}
	page, err := s.client.ListDeliveries(r.Context(), f)
	if err != nil {
		return err
	}
	visibilityFor(principalFrom(r.Context())).deliveries(page.Deliveries)
	writeJSON(w, http.StatusOK, page)
	return nil
}

// getDelivery: GET /v1/deliveries/{id} is one delivery with its attempts,
// oldest first (its timeline), under the scope of the list; the address
// is masked as in the list. 404 for an unknown id, 400 naming id for one
// that is not a delivery id.
func (s *Server) getDelivery(w http.ResponseWriter, r *http.Request) error {
	id, err := herald.ParseDeliveryID(r.PathValue("id"))
	if err != nil {
		return err
	}
	d, err := s.client.GetDelivery(r.Context(), id)
	if err != nil {
		return err
	}
	visibilityFor(principalFrom(r.Context())).delivery(&d)
	writeJSON(w, http.StatusOK, d)
	return nil
}

// parseDeliveryQuery turns the query string into a filter. An unknown or
// repeated parameter is an error rather than ignored: a typo such as
// ?sate=dead would otherwise list every delivery.
func parseDeliveryQuery(raw string) (herald.DeliveryFilter, error) {
	var f herald.DeliveryFilter
	q, err := url.ParseQuery(raw)
	if err != nil {
		return f, heraldtype.Errorf(heraldtype.EINVALID, "the query string is malformed: %s", err.Error())
	}
	names := make([]string, 0, len(q))
	for name := range q {
		names = append(names, name)
	}
	slices.Sort(names) // report the same error for the same query every time
	for _, name := range names {
		vs := q[name]
		if len(vs) > 1 {
			return f, heraldtype.FieldErrorf(name, "is given %d times; give it once", len(vs))
		}
		v := vs[0]
		switch name {
		case "state":
			f.State = heraldtype.DeliveryState(v)
		case "error_code":
			f.ErrorCode = v
		case "type":
			f.Type = v
		case "channel":
			f.Channel = heraldtype.Channel(v)
		case "user_id":
			f.UserID = v
		case "notification_id":
			f.NotificationID = v
		case "cursor":
			f.Cursor = v
		case "from":
			if f.From, err = parseTime(name, v); err != nil {
				return f, err
			}
		case "to":
			if f.To, err = parseTime(name, v); err != nil {
				return f, err
			}
		case "limit":
			n, err := strconv.Atoi(v)
			if err != nil || n < 1 {
				return f, heraldtype.FieldErrorf("limit", "must be a positive integer")
			}
			f.Limit = n
		default:
			return f, heraldtype.FieldErrorf(name, "is not a known parameter (known: state, error_code, type, channel, user_id, notification_id, from, to, cursor, limit)")
		}
	}
	return f, nil
}

// parseTime parses an RFC 3339 time; empty means unbounded.
func parseTime(field, v string) (time.Time, error) {
	if v == "" {
		return time.Time{}, nil
	}
	t, err := time.Parse(time.RFC3339Nano, v)
	if err != nil {
		if strings.Contains(v, " ") {
			// The classic: "+09:00" in a URL decodes to " 09:00".
			return time.Time{}, heraldtype.FieldErrorf(field, "must be an RFC 3339 time; a '+' in a query string means a space, so write it as %%2B")
		}
		return time.Time{}, heraldtype.FieldErrorf(field, "must be an RFC 3339 time such as 2026-05-01T09:00:00Z")
	}
	return t, nil
}

// replayDelivery: POST /v1/deliveries/{id}/replay sends one dead or unknown
// delivery again (S0.4, S4.6) and returns it, pending.
func (s *Server) replayDelivery(w http.ResponseWriter, r *http.Request) error {
	id, err := herald.ParseDeliveryID(r.PathValue("id"))
	if err != nil {
		return err
	}
	d, err := s.client.ReplayDelivery(r.Context(), id)
	if err != nil {
		return err
	}
	visibilityFor(principalFrom(r.Context())).delivery(&d)
	writeJSON(w, http.StatusOK, d)
	return nil
}

// replayFilter is the body of POST /v1/deliveries/replay. Times are RFC
// 3339 strings, parsed here so that a bad one is reported by its field.
type replayFilter struct {
	State          heraldtype.DeliveryState `json:"state"`
	ErrorCode      string                   `json:"error_code"`
	Type           string                   `json:"type"`
	Channel        heraldtype.Channel       `json:"channel"`
	UserID         string                   `json:"user_id"`
	NotificationID string                   `json:"notification_id"`
	From           string                   `json:"from"`
	To             string                   `json:"to"`
}

// replayResult is the answer of POST /v1/deliveries/replay.
type replayResult struct {
	Replayed int `json:"replayed"`
}

// replayDeliveries: POST /v1/deliveries/replay replays every dead or
// unknown delivery matching the filter in the body (at most
// herald.MaxBulkReplay per call). The body is required: replaying
// everything must be asked for explicitly, with {}.
func (s *Server) replayDeliveries(w http.ResponseWriter, r *http.Request) error {
	var in replayFilter
	if err := s.decodeJSON(w, r, &in, bodySpec{}); err != nil {
		return err
	}
	f := herald.DeliveryFilter{
		State: in.State, ErrorCode: in.ErrorCode, Type: in.Type, Channel: in.Channel,
		UserID: in.UserID, NotificationID: in.NotificationID,
	}
	var err error
	if f.From, err = parseTime("from", in.From); err != nil {
		return err
	}
	if f.To, err = parseTime("to", in.To); err != nil {
		return err
	}
	n, err := s.client.ReplayDeliveries(r.Context(), f)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, replayResult{Replayed: n})
	return nil
}
