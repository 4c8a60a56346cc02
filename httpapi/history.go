package httpapi

import (
	"net/http"
	"net/url"
	"slices"
	"strconv"

	"github.com/heraldhq/herald"
	"github.com/heraldhq/herald/heraldtype"
)

// listHistory: GET /v1/notifications?type=&status=&from=&to=&cursor=&limit=
// lists notifications newest first with their status (S3.9): PENDING,
// DEFERRED, SENT, PARTIALLY_SENT, RATE_LIMITED, USER_OPTED_OUT or FAILED
// (status= in any case), the reason and each channel's status — those of
// GET /v1/notifications/{id} (issue 22). The answer is
// {"notifications":[…],"next_cursor":"…"}.
func (s *Server) listHistory(w http.ResponseWriter, r *http.Request) error {
	return s.history(w, r, "")
}

// listUserHistory: GET /v1/users/{id}/notifications, the same for one
// user; a user token may read its own.
func (s *Server) listUserHistory(w http.ResponseWriter, r *http.Request) error {
	id := r.PathValue("id")
	if id == "" {
		return heraldtype.FieldErrorf("id", "is required")
	}
	return s.history(w, r, id)
}

func (s *Server) history(w http.ResponseWriter, r *http.Request, userID string) error {
	f, err := parseHistoryQuery(r.URL.RawQuery)
	if err != nil {
		return err
	}
	f.UserID = userID
	page, err := s.client.ListHistory(r.Context(), f)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, page)
	return nil
}

// parseHistoryQuery turns the query string into a filter; an unknown or
// repeated parameter is an error, as for GET /v1/deliveries.
func parseHistoryQuery(raw string) (herald.HistoryFilter, error) {
	var f herald.HistoryFilter
	q, err := url.ParseQuery(raw)
	if err != nil {
		return f, heraldtype.Errorf(heraldtype.EINVALID, "the query string is malformed: %s", err.Error())
	}
	names := make([]string, 0, len(q))
	for name := range q {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		vs := q[name]
		if len(vs) > 1 {
			return f, heraldtype.FieldErrorf(name, "is given %d times; give it once", len(vs))
		}
		v := vs[0]
		switch name {
		case "type":
			f.Type = v
		case "status":
			f.Status = heraldtype.HistoryStatus(v)
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
			return f, heraldtype.FieldErrorf(name, "is not a filter (type, status, from, to, cursor, limit)")
		}
	}
	return f, nil
}
