package httpapi

import (
	"net/http"

	"github.com/heraldhq/herald"
)

// getDigest: GET /v1/digests/{id} returns a digest (issue 36 item 1): whose,
// its type and key, its state and window, its notification once sent, and
// the triggers it holds.
func (s *Server) getDigest(w http.ResponseWriter, r *http.Request) error {
	d, err := s.client.GetDigest(r.Context(), r.PathValue("id"))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, d)
	return nil
}

// listDigests: GET /v1/digests returns a page of digests, newest first, by
// user, type and state (issue 36).
func (s *Server) listDigests(w http.ResponseWriter, r *http.Request) error {
	var f herald.DigestFilter
	if err := parseQuery(r.URL.RawQuery, map[string]func(string) error{
		"user_id": setString(&f.UserID), "type": setString(&f.Type), "state": setString(&f.State),
		"cursor": setString(&f.Cursor), "limit": setLimit(&f.Limit),
	}); err != nil {
		return err
	}
	page, err := s.client.ListDigests(r.Context(), f)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, page)
	return nil
}
