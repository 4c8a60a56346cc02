package httpapi

import (
	"net/http"

	"github.com/heraldhq/herald"
)

// putCampaign: PUT /v1/campaigns/{name} creates (201) or replaces (200) a
// campaign (issue 19 item 6, S3.7; herald.CampaignRequest is the body).
// The answer is the stored campaign with its next_at.
func (s *Server) putCampaign(w http.ResponseWriter, r *http.Request) error {
	var in herald.CampaignRequest
	if err := s.decodeJSON(w, r, &in, bodySpec{}); err != nil {
		return err
	}
	in.Name = r.PathValue("name")
	c, created, err := s.client.PutCampaign(r.Context(), in)
	if err != nil {
		return err
	}
	status := http.StatusOK
	if created {
		status = http.StatusCreated
	}
	writeJSON(w, status, c)
	return nil
}

// getCampaign: GET /v1/campaigns/{name}.
func (s *Server) getCampaign(w http.ResponseWriter, r *http.Request) error {
	c, err := s.client.GetCampaign(r.Context(), r.PathValue("name"))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, c)
	return nil
}

// deleteCampaign: DELETE /v1/campaigns/{name}, with its runs; 204.
func (s *Server) deleteCampaign(w http.ResponseWriter, r *http.Request) error {
	if err := s.client.DeleteCampaign(r.Context(), r.PathValue("name")); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// listCampaigns: GET /v1/campaigns?cursor=&limit= lists campaigns by name:
// {"campaigns":[…],"next_cursor":"…"}.
func (s *Server) listCampaigns(w http.ResponseWriter, r *http.Request) error {
	cursor, limit, err := parsePageQuery(r.URL.RawQuery)
	if err != nil {
		return err
	}
	page, err := s.client.ListCampaigns(r.Context(), herald.CampaignFilter{Cursor: cursor, Limit: limit})
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, page)
	return nil
}

// listCampaignRuns: GET /v1/campaigns/{name}/runs?cursor=&limit= lists its
// runs, newest first: {"runs":[…],"next_cursor":"…"}.
func (s *Server) listCampaignRuns(w http.ResponseWriter, r *http.Request) error {
	cursor, limit, err := parsePageQuery(r.URL.RawQuery)
	if err != nil {
		return err
	}
	page, err := s.client.ListCampaignRuns(r.Context(), herald.CampaignRunFilter{Campaign: r.PathValue("name"), Cursor: cursor, Limit: limit})
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, page)
	return nil
}

// campaignRunRequest is the optional body of POST /v1/campaigns/{name}/run.
type campaignRunRequest struct {
	// Run, when set, is the id of a finished run to run again; otherwise
	// a new manual run starts.
	Run string `json:"run,omitempty"`
}

// runCampaign: POST /v1/campaigns/{name}/run [{"run":"…"}] asks for a run
// by hand (S3.7: recovery): 202 with the run, which the leader's runner
// runs. A re-run reaches only the users that run has not reached; a run
// still running is 409.
func (s *Server) runCampaign(w http.ResponseWriter, r *http.Request) error {
	var in campaignRunRequest
	if err := s.decodeJSON(w, r, &in, bodySpec{optional: true}); err != nil {
		return err
	}
	run, err := s.client.RunCampaign(r.Context(), r.PathValue("name"), in.Run)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusAccepted, run)
	return nil
}

// parsePageQuery reads cursor and limit; any other or repeated parameter
// is an error naming it.
func parsePageQuery(raw string) (cursor string, limit int, err error) {
	err = parseQuery(raw, map[string]func(string) error{"cursor": setString(&cursor), "limit": setLimit(&limit)})
	return cursor, limit, err
}
