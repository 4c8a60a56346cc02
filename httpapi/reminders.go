package httpapi

import (
	"net/http"
	"net/url"
	"slices"
	"strconv"

	"github.com/heraldhq/herald"
	"github.com/heraldhq/herald/heraldtype"
)

// putReminder: PUT /v1/reminders/{key} creates (201) or updates (200) the
// reminder of the caller's item key (S2.1–S2.3; herald.ReminderRequest is
// the body). The answer is the stored reminder with its next_at.
func (s *Server) putReminder(w http.ResponseWriter, r *http.Request) error {
	var in herald.ReminderRequest
	if err := s.decodeJSON(w, r, &in, bodySpec{}); err != nil {
		return err
	}
	in.Key = r.PathValue("key")
	rem, created, err := s.client.PutReminder(r.Context(), in)
	if err != nil {
		return err
	}
	status := http.StatusOK
	if created {
		status = http.StatusCreated
	}
	writeJSON(w, status, rem)
	return nil
}

// getReminder: GET /v1/reminders/{key}.
func (s *Server) getReminder(w http.ResponseWriter, r *http.Request) error {
	rem, err := s.client.GetReminder(r.Context(), r.PathValue("key"))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, rem)
	return nil
}

// deleteReminder: DELETE /v1/reminders/{key} (S2.3: deleting the item
// deletes its reminder); 204, and no further occurrence is sent.
func (s *Server) deleteReminder(w http.ResponseWriter, r *http.Request) error {
	if err := s.client.CancelReminder(r.Context(), r.PathValue("key")); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// cancelReminders: POST /v1/reminders/cancel {"user_id"?, "type"?} stops
// every active reminder of the user, of the type, or both; the answer
// says how many: {"cancelled": n}.
func (s *Server) cancelReminders(w http.ResponseWriter, r *http.Request) error {
	var in herald.ReminderSelector
	if err := s.decodeJSON(w, r, &in, bodySpec{}); err != nil {
		return err
	}
	n, err := s.client.CancelReminders(r.Context(), in)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]int{"cancelled": n})
	return nil
}

// listReminders: GET /v1/reminders?user_id=&type=&state=&due_before=&cursor=&limit=
// lists reminders by key: {"reminders":[…],"next_cursor":"…"}.
func (s *Server) listReminders(w http.ResponseWriter, r *http.Request) error {
	return s.reminders(w, r, "")
}

// listUserReminders: GET /v1/users/{id}/reminders, the same for one user.
func (s *Server) listUserReminders(w http.ResponseWriter, r *http.Request) error {
	return s.reminders(w, r, r.PathValue("id"))
}

func (s *Server) reminders(w http.ResponseWriter, r *http.Request, userID string) error {
	f, err := parseReminderQuery(r.URL.RawQuery, userID == "")
	if err != nil {
		return err
	}
	if userID != "" {
		f.UserID = userID
	}
	page, err := s.client.ListReminders(r.Context(), f)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, page)
	return nil
}

// parseReminderQuery turns the query string into a filter; an unknown or
// repeated parameter is an error.
func parseReminderQuery(raw string, userFilter bool) (herald.ReminderFilter, error) {
	var f herald.ReminderFilter
	q, err := url.ParseQuery(raw)
	if err != nil {
		return f, heraldtype.Errorf(heraldtype.EINVALID, "the query string is malformed: %s", err.Error())
	}
	names := slices.Sorted(func(yield func(string) bool) {
		for n := range q {
			if !yield(n) {
				return
			}
		}
	})
	for _, name := range names {
		vs := q[name]
		if len(vs) > 1 {
			return f, heraldtype.FieldErrorf(name, "is given %d times; give it once", len(vs))
		}
		v := vs[0]
		switch name {
		case "user_id":
			if !userFilter {
				return f, heraldtype.FieldErrorf(name, "is the path's user here")
			}
			f.UserID = v
		case "type":
			f.Type = v
		case "state":
			f.State = heraldtype.ReminderState(v)
		case "due_before":
			if f.DueBefore, err = parseTime(name, v); err != nil {
				return f, err
			}
		case "cursor":
			f.Cursor = v
		case "limit":
			n, err := strconv.Atoi(v)
			if err != nil || n < 1 {
				return f, heraldtype.FieldErrorf("limit", "must be a positive integer")
			}
			f.Limit = n
		default:
			return f, heraldtype.FieldErrorf(name, "is not a filter (user_id, type, state, due_before, cursor, limit)")
		}
	}
	return f, nil
}
