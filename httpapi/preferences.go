package httpapi

import (
	"net/http"

	"github.com/heraldhq/herald"
)

// getPreferences: GET /v1/users/{id}/preferences (S3.11). A user token
// may read its own user's preferences.
func (s *Server) getPreferences(w http.ResponseWriter, r *http.Request) error {
	p, err := s.client.GetPreferences(r.Context(), r.PathValue("id"))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, p)
	return nil
}

// putPreferences: PUT /v1/users/{id}/preferences replaces the user's
// preferences (herald.Preferences documents the body); user_id, timezone
// and updated_at in the body are ignored (the timezone is the user's).
func (s *Server) putPreferences(w http.ResponseWriter, r *http.Request) error {
	var in herald.Preferences
	if err := s.decodeJSON(w, r, &in, bodySpec{}); err != nil {
		return err
	}
	if err := checkPreferenceLists(&in); err != nil {
		return err
	}
	p, err := s.client.PutPreferences(r.Context(), r.PathValue("id"), in)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, p)
	return nil
}
