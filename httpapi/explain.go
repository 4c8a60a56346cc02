package httpapi

import (
	"net/http"

	"github.com/heraldhq/herald"
	"github.com/heraldhq/herald/auth"
	"github.com/heraldhq/herald/heraldtype"
)

// explain: GET /v1/users/{id}/explain?type=&notification_id=&idempotency_key=&rule=&rule_run=&event=&event_source=&event_namespace=&since=
// answers "why didn't this user get it?" for one of the user's
// notifications, a trigger, a rule's run, an event, or the newest of a
// type since a time (issue 34 item 2):
// a verdict, a sentence and the findings, each drawn from the records
// (Client.Explain). It is an operator's question, so it takes a server
// key with notifications:read, as GET /v1/notifications/{id} does; the
// addresses it names are masked for a key without users:read.
func (s *Server) explain(w http.ResponseWriter, r *http.Request) error {
	req := herald.ExplainRequest{UserID: r.PathValue("id")}
	err := parseQuery(r.URL.RawQuery, map[string]func(string) error{
		"type":            setString(&req.Type),
		"notification_id": setString(&req.NotificationID),
		"idempotency_key": setString(&req.IdempotencyKey),
		"rule":            setString(&req.Rule),
		"rule_run":        setString(&req.RuleRun),
		"event":           setString(&req.Event),
		"event_source":    setString(&req.EventSource),
		"event_namespace": setString(&req.EventNamespace),
		"since": func(v string) (err error) {
			req.Since, err = parseTime("since", v)
			return err
		},
	})
	if err != nil {
		return err
	}
	v := visibilityFor(principalFrom(r.Context()))
	if req.IdempotencyKey != "" && !v.idempotencyKeys {
		// A trigger's key is shown only to admin (mask.go); looking one up
		// would tell a reader which keys exist, so it takes admin too.
		return heraldtype.Errorf(heraldtype.EPERMISSIONDENIED, "idempotency_key: looking a trigger up by its key needs an admin API key")
	}
	if err := eventNamespace(&req, principalFrom(r.Context())); err != nil {
		return err
	}
	x, err := s.client.Explain(r.Context(), req)
	if err != nil {
		return err
	}
	v.explanation(&x)
	writeJSON(w, http.StatusOK, x)
	return nil
}

// eventNamespace fills in whose id an event posted to the API is: the
// caller's own key's, as POST /v1/events records it, unless another is
// named — which only admin may do, as only admin looks a trigger up by
// its key: another key's event ids are its own.
func eventNamespace(req *herald.ExplainRequest, p *principal) error {
	if req.Event == "" || p == nil {
		return nil
	}
	if req.EventNamespace == "" && req.EventSource == "" {
		req.EventNamespace = p.keyID
	}
	if req.EventNamespace != "" && req.EventNamespace != p.keyID && !auth.Grants(p.scopes, auth.ScopeAdmin) {
		return &heraldtype.Error{Code: heraldtype.EPERMISSIONDENIED, Field: "event_namespace",
			Message: "event_namespace: looking up another API key's event needs an admin API key; leave it out for your own key's events"}
	}
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
