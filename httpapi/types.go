package httpapi

import (
	"net/http"

	"github.com/heraldhq/herald"
)

// putType: PUT /v1/types/{type} declares a notification type
// (herald.TypeConfig is the body). It overrides the configuration file's
// declaration of the same type on every instance.
func (s *Server) putType(w http.ResponseWriter, r *http.Request) error {
	var in herald.TypeConfig
	if err := s.decodeJSON(w, r, &in, bodySpec{optional: true}); err != nil {
		return err
	}
	if err := checkTypeLists(&in); err != nil {
		return err
	}
	t, err := s.client.PutType(r.Context(), r.PathValue("type"), in)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, t)
	return nil
}

// getType: GET /v1/types/{type}: the effective configuration, the
// defaults (source "default") for a type nobody declared.
func (s *Server) getType(w http.ResponseWriter, r *http.Request) error {
	t, err := s.client.GetType(r.Context(), r.PathValue("type"))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, t)
	return nil
}

// typeList is the body of GET /v1/types.
type typeList struct {
	Types []herald.NotificationType `json:"types"`
}

// listTypes: GET /v1/types lists the declared types.
func (s *Server) listTypes(w http.ResponseWriter, r *http.Request) error {
	ts, err := s.client.ListTypes(r.Context())
	if err != nil {
		return err
	}
	if ts == nil {
		ts = []herald.NotificationType{}
	}
	writeJSON(w, http.StatusOK, typeList{Types: ts})
	return nil
}
