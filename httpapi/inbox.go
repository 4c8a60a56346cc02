package httpapi

import (
	"net/http"
	"strconv"

	"github.com/heraldhq/herald"
	"github.com/heraldhq/herald/heraldtype"
)

// listInbox: GET /v1/users/{id}/inbox?unread=true&archived=true&cursor=&limit=
// returns {"items":[…],"next_cursor":"…","unread":n} (S4.5).
func (s *Server) listInbox(w http.ResponseWriter, r *http.Request) error {
	var f herald.InboxFilter
	err := parseQuery(r.URL.RawQuery, map[string]func(string) error{
		"unread":   func(v string) (err error) { f.Unread, err = parseBool("unread", v); return },
		"archived": func(v string) (err error) { f.Archived, err = parseBool("archived", v); return },
		"cursor":   func(v string) error { f.Cursor = v; return nil },
		"limit": func(v string) error {
			n, err := strconv.Atoi(v)
			if err != nil || n < 1 || n > 200 {
				return heraldtype.FieldErrorf("limit", "must be a number from 1 to 200")
			}
			f.Limit = n
			return nil
		},
	})
	if err != nil {
		return err
	}
	page, err := s.client.ListInbox(r.Context(), r.PathValue("id"), f)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, page)
	return nil
}

// markRead is the body of POST /v1/users/{id}/inbox/read and /seen.
type markRead struct {
	IDs []int64 `json:"ids"`
}

// countBody answers the mark-read endpoints.
type countBody struct {
	Updated int `json:"updated"`
}

// markInboxRead: POST /v1/users/{id}/inbox/read {"ids":[…]}.
func (s *Server) markInboxRead(w http.ResponseWriter, r *http.Request) error {
	var in markRead
	if err := s.decodeJSON(w, r, &in, bodySpec{}); err != nil {
		return err
	}
	n, err := s.client.MarkInboxRead(r.Context(), r.PathValue("id"), in.IDs)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, countBody{Updated: n})
	return nil
}

// markAllInboxRead: POST /v1/users/{id}/inbox/read-all.
func (s *Server) markAllInboxRead(w http.ResponseWriter, r *http.Request) error {
	n, err := s.client.MarkAllInboxRead(r.Context(), r.PathValue("id"))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, countBody{Updated: n})
	return nil
}

// archiveInboxItem: POST /v1/users/{id}/inbox/{item_id}/archive.
func (s *Server) archiveInboxItem(w http.ResponseWriter, r *http.Request) error {
	id, err := strconv.ParseInt(r.PathValue("item_id"), 10, 64)
	if err != nil || id <= 0 {
		return heraldtype.FieldErrorf("item_id", "%q is not an inbox item id", r.PathValue("item_id"))
	}
	if err := s.client.ArchiveInboxItem(r.Context(), r.PathValue("id"), id); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// markInboxSeen: POST /v1/users/{id}/inbox/seen {"ids":[…]}.
func (s *Server) markInboxSeen(w http.ResponseWriter, r *http.Request) error {
	var in markRead
	if err := s.decodeJSON(w, r, &in, bodySpec{}); err != nil {
		return err
	}
	n, err := s.client.MarkInboxSeen(r.Context(), r.PathValue("id"), in.IDs)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, countBody{Updated: n})
	return nil
}

// clickBody is the optional body of POST /v1/users/{id}/inbox/{item_id}/click.
type clickBody struct {
	Action string `json:"action"`
}

// clickInboxItem: POST /v1/users/{id}/inbox/{item_id}/click {"action":"…"}
// (the body may be empty).
func (s *Server) clickInboxItem(w http.ResponseWriter, r *http.Request) error {
	id, err := strconv.ParseInt(r.PathValue("item_id"), 10, 64)
	if err != nil || id <= 0 {
		return heraldtype.FieldErrorf("item_id", "%q is not an inbox item id", r.PathValue("item_id"))
	}
	var in clickBody
	if err := s.decodeJSON(w, r, &in, bodySpec{optional: true}); err != nil {
		return err
	}
	if err := s.client.ClickInboxItem(r.Context(), r.PathValue("id"), id, in.Action); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// listSuppressions: GET /v1/suppressions?channel=sms|email.
func (s *Server) listSuppressions(w http.ResponseWriter, r *http.Request) error {
	var ch string
	if err := parseQuery(r.URL.RawQuery, map[string]func(string) error{
		"channel": func(v string) error { ch = v; return nil },
	}); err != nil {
		return err
	}
	out, err := s.client.ListSuppressions(r.Context(), heraldtype.Channel(ch))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]any{"suppressions": out})
	return nil
}

// deleteSuppression: DELETE /v1/suppressions/{channel}/{address} lifts a
// suppression after the address opted in again.
func (s *Server) deleteSuppression(w http.ResponseWriter, r *http.Request) error {
	if err := s.client.DeleteSuppression(r.Context(), heraldtype.Channel(r.PathValue("channel")), r.PathValue("address")); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

func parseBool(field, v string) (bool, error) {
	b, err := strconv.ParseBool(v)
	if err != nil {
		return false, heraldtype.FieldErrorf(field, "must be true or false")
	}
	return b, nil
}
