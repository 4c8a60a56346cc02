package httpapi

import (
	"net/http"

	"github.com/heraldhq/herald"
	"github.com/heraldhq/herald/auth"
	"github.com/heraldhq/herald/heraldtype"
)

// putRule: PUT /v1/rules/{name} creates (201) or replaces (200) an event
// rule (issue 20 item 2), validated on save; the answer is the stored
// rule.
func (s *Server) putRule(w http.ResponseWriter, r *http.Request) error {
	var in herald.Rule
	if err := s.decodeJSON(w, r, &in, bodySpec{}); err != nil {
		return err
	}
	if in.Name != "" && in.Name != r.PathValue("name") {
		return heraldtype.FieldErrorf("name", "is the path's name; leave it out or give the same")
	}
	in.Name = r.PathValue("name")
	rule, created, err := s.client.PutRule(r.Context(), in)
	if err != nil {
		return err
	}
	status := http.StatusOK
	if created {
		status = http.StatusCreated
	}
	writeJSON(w, status, rule)
	return nil
}

// getRule: GET /v1/rules/{name}.
func (s *Server) getRule(w http.ResponseWriter, r *http.Request) error {
	rule, err := s.client.GetRule(r.Context(), r.PathValue("name"))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, rule)
	return nil
}

// deleteRule: DELETE /v1/rules/{name}; 204.
func (s *Server) deleteRule(w http.ResponseWriter, r *http.Request) error {
	if err := s.client.DeleteRule(r.Context(), r.PathValue("name")); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// listRules: GET /v1/rules?source=&event=&cursor=&limit= lists rules by
// name: {"rules":[…],"next_cursor":"…"}.
func (s *Server) listRules(w http.ResponseWriter, r *http.Request) error {
	var f herald.RuleFilter
	if err := parseQuery(r.URL.RawQuery, map[string]func(string) error{
		"source": setString(&f.Source), "event": setString(&f.Event), "cursor": setString(&f.Cursor), "limit": setLimit(&f.Limit),
	}); err != nil {
		return err
	}
	page, err := s.client.ListRules(r.Context(), f)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, page)
	return nil
}

// dryRunRule: POST /v1/rules/{name}/dry-run with an event (POST
// /v1/events' body) answers what the rule would do with it — detected or
// not and why, the audience size and a sample, the rendered message —
// without sending anything. The sample's user ids are answered only to a
// key that also holds interests:read.
func (s *Server) dryRunRule(w http.ResponseWriter, r *http.Request) error {
	in, err := s.decodeEvent(w, r)
	if err != nil {
		return err
	}
	out, err := s.client.DryRunRule(r.Context(), r.PathValue("name"), in)
	if err != nil {
		return err
	}
	// The sample names users who showed an interest: only a key that may
	// read interests sees it; the size is the rule's own business (issue
	// 31 item 6).
	if p := principalFrom(r.Context()); p != nil && !auth.Grants(p.scopes, auth.ScopeInterestsRead) {
		out.Sample, out.SampleWithheld = []string{}, true
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

// listRuleRuns: GET /v1/rules/{name}/runs?cursor=&limit= lists the rule's
// runs, newest first — each event it fired on, the rendered notification,
// how far the fan-out went and why it stopped.
func (s *Server) listRuleRuns(w http.ResponseWriter, r *http.Request) error {
	f := heraldtype.RuleRunFilter{Rule: r.PathValue("name")}
	if err := parseQuery(r.URL.RawQuery, map[string]func(string) error{
		"cursor": setString(&f.Cursor), "limit": setLimit(&f.Limit),
	}); err != nil {
		return err
	}
	page, err := s.client.ListRuleRuns(r.Context(), f)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, page)
	return nil
}
