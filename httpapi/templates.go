package httpapi

import (
	"net/http"
	"strconv"

	herald "github.com/heraldhq/herald"
	"github.com/heraldhq/herald/heraldtype"
)

// putTemplates: PUT /v1/types/{type}/templates saves a type's message
// templates as its next version (issue 37).
func (s *Server) putTemplates(w http.ResponseWriter, r *http.Request) error {
	var in heraldtype.MessageTemplates
	if err := s.decodeJSON(w, r, &in, bodySpec{}); err != nil {
		return err
	}
	v, err := s.client.PutTemplates(r.Context(), r.PathValue("type"), in)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, v)
	return nil
}

// getTemplates: GET /v1/types/{type}/templates[?version=N]: a version of
// the type's templates, the latest by default.
func (s *Server) getTemplates(w http.ResponseWriter, r *http.Request) error {
	version := 0
	if err := parseQuery(r.URL.RawQuery, map[string]func(string) error{
		"version": func(v string) error {
			n, err := strconv.Atoi(v)
			if err != nil || n < 1 {
				return heraldtype.FieldErrorf("version", "must be a positive integer")
			}
			version = n
			return nil
		},
	}); err != nil {
		return err
	}
	v, err := s.client.GetTemplates(r.Context(), r.PathValue("type"), version)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, v)
	return nil
}

// previewTemplates: POST /v1/types/{type}/preview renders the type's
// templates in every locale, and for a named user, without sending.
func (s *Server) previewTemplates(w http.ResponseWriter, r *http.Request) error {
	var in herald.PreviewRequest
	if err := s.decodeJSON(w, r, &in, bodySpec{optional: true}); err != nil {
		return err
	}
	p, err := s.client.PreviewTemplates(r.Context(), r.PathValue("type"), in)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, p)
	return nil
}

// testSend: POST /v1/types/{type}/test-send triggers the type for one
// named user, rendered from its latest templates.
func (s *Server) testSend(w http.ResponseWriter, r *http.Request) error {
	var in herald.TestSendRequest
	if err := s.decodeJSON(w, r, &in, bodySpec{}); err != nil {
		return err
	}
	res, err := s.client.TestSend(r.Context(), r.PathValue("type"), in)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusAccepted, res)
	return nil
}

// templateVersions is the body of GET /v1/types/{type}/templates/versions.
type templateVersions struct {
	Versions []heraldtype.TemplateVersion `json:"versions"`
}

// listTemplateVersions: GET /v1/types/{type}/templates/versions lists the
// type's saved versions, newest first (?before=N&limit=).
func (s *Server) listTemplateVersions(w http.ResponseWriter, r *http.Request) error {
	before, limit := 0, 0
	if err := parseQuery(r.URL.RawQuery, map[string]func(string) error{
		"before": func(v string) error {
			n, err := strconv.Atoi(v)
			if err != nil || n < 1 {
				return heraldtype.FieldErrorf("before", "must be a positive integer")
			}
			before = n
			return nil
		},
		"limit": setLimit(&limit),
	}); err != nil {
		return err
	}
	vs, err := s.client.ListTemplateVersions(r.Context(), r.PathValue("type"), before, limit)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, templateVersions{Versions: vs})
	return nil
}
