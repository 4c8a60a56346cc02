package console

import (
	"net/http"

	"github.com/heraldhq/herald"
	"github.com/heraldhq/herald/auth"
	"github.com/heraldhq/herald/heraldtype"
)

// whyData is the "why didn't this user get it?" page's: the question as
// asked (the form's values) and the answer, once asked.
type whyData struct {
	User, Type, Notification string
	// Rule and Run name a rule's run to explain for the user.
	Rule, Run string
	// Event, EventSource and EventNamespace name an applied event: its
	// id, its Kafka topic ("" for the API) and the key that posted it
	// ("" for the session's own, as over the API).
	Event, EventSource, EventNamespace string
	// Addresses says whether the session may see the phone numbers and
	// e-mail addresses the reasons name (users:read, as over the API).
	Addresses bool
	Answer    *herald.Explanation
	Err       *formResult
}

// why answers "why didn't this user get it?" for a user and a type, a
// notification, a rule's run or an event, from the records
// (Client.Explain). Without a question it shows the form only.
func (c *Console) why(w http.ResponseWriter, r *http.Request, s Session) error {
	d := whyData{User: query(r, "user"), Type: query(r, "type"), Notification: query(r, "notification"),
		Rule: query(r, "rule"), Run: query(r, "run"), Event: query(r, "event"), EventSource: query(r, "event_source"),
		EventNamespace: query(r, "event_namespace"), Addresses: s.Can(auth.ScopeUsersRead)}
	status := http.StatusOK
	if d.User != "" || d.Type != "" || d.Notification != "" || d.Rule != "" || d.Run != "" || d.Event != "" || d.EventSource != "" || d.EventNamespace != "" {
		req := herald.ExplainRequest{UserID: d.User, Type: d.Type, NotificationID: d.Notification,
			Rule: d.Rule, RuleRun: d.Run, Event: d.Event, EventSource: d.EventSource, EventNamespace: d.EventNamespace}
		if denied := eventNamespace(&req, s); denied != nil {
			// Refused beside its field, as a bad value is.
			d.Err = &formResult{Fields: map[string]string{denied.Field: denied.Message}, Code: denied.Code, Message: denied.Message}
			c.render(w, r, statusOf(denied.Code), "why", page{Title: "Why didn't this user get it?", Session: s, Data: d})
			return nil
		}
		ex, err := c.client.Explain(r.Context(), req)
		switch fr, ok := refused(err); {
		case err == nil:
			d.Answer = &ex
		case ok:
			d.Err, status = &fr, refusedStatus(fr)
		default:
			return err
		}
	}
	c.render(w, r, status, "why", page{Title: "Why didn't this user get it?", Session: s, Data: d})
	return nil
}

// eventNamespace applies the API's rule for an event posted to it: it is
// looked up under the session's key unless another key is named, which
// only an admin session may do (GET /v1/users/{id}/explain).
func eventNamespace(req *herald.ExplainRequest, s Session) *heraldtype.Error {
	if req.Event == "" {
		return nil
	}
	if req.EventNamespace == "" && req.EventSource == "" {
		req.EventNamespace = s.KeyID
	}
	if req.EventNamespace != "" && req.EventNamespace != s.KeyID && !s.Can(auth.ScopeAdmin) {
		return &heraldtype.Error{Code: heraldtype.EPERMISSIONDENIED, Field: "event_namespace",
			Message: "event_namespace: looking up another API key's event needs an admin session; leave it empty for your own key's events"}
	}
	return nil
}
