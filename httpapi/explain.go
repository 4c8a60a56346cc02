package httpapi

import (
	"net/http"

	"github.com/heraldhq/herald"
	"github.com/heraldhq/herald/heraldtype"
)

// explain: GET /v1/users/{id}/explain?type=&notification_id=&rule=&rule_run=&since=
// answers "why didn't this user get it?" for one of the user's
// notifications, a rule's run, or the newest of a type since a time
// (issue 34 item 2):
// a verdict, a sentence and the findings, each drawn from the records
// (Client.Explain). It is an operator's question, so it takes a server
// key with notifications:read, as GET /v1/notifications/{id} does; the
// addresses it names are masked for a key without users:read.
func (s *Server) explain(w http.ResponseWriter, r *http.Request) error {
	req := herald.ExplainRequest{UserID: r.PathValue("id")}
	err := parseQuery(r.URL.RawQuery, map[string]func(string) error{
		"type":            setString(&req.Type),
		"notification_id": setString(&req.NotificationID),
		"rule":            setString(&req.Rule),
		"rule_run":        setString(&req.RuleRun),
		"since": func(v string) (err error) {
			req.Since, err = parseTime("since", v)
			return err
		},
	})
	if err != nil {
		return err
	}
	x, err := s.client.Explain(r.Context(), req)
	if err != nil {
		return err
	}
	visibilityFor(principalFrom(r.Context())).explanation(&x)
	writeJSON(w, http.StatusOK, x)
	return nil
}

// explanation masks the addresses of x's reasons unless v allows them,
// in place.
func (v visibility) explanation(x *heraldtype.Explanation) {
	if v.addresses {
		return
	}
	for i := range x.Reasons {
		x.Reasons[i].Address = maskAddress(x.Reasons[i].Channel, x.Reasons[i].Address)
	}
}
