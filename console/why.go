package console

import (
	"net/http"

	"github.com/heraldhq/herald"
	"github.com/heraldhq/herald/auth"
)

// whyData is the "why didn't this user get it?" page's: the question as
// asked (the form's values) and the answer, once asked.
type whyData struct {
	User, Type, Notification string
	// Rule and Run name a rule's run to explain for the user.
	Rule, Run string
	// Addresses says whether the session may see the phone numbers and
	// e-mail addresses the reasons name (users:read, as over the API).
	Addresses bool
	Answer    *herald.Explanation
	Err       *formResult
}

// why answers "why didn't this user get it?" for a user and a type or a
// notification, from the records (Client.Explain). Without a question it
// shows the form only.
func (c *Console) why(w http.ResponseWriter, r *http.Request, s Session) error {
	d := whyData{User: query(r, "user"), Type: query(r, "type"), Notification: query(r, "notification"),
		Rule: query(r, "rule"), Run: query(r, "run"), Addresses: s.Can(auth.ScopeUsersRead)}
	status := http.StatusOK
	if d.User != "" || d.Type != "" || d.Notification != "" || d.Rule != "" || d.Run != "" {
		ex, err := c.client.Explain(r.Context(), herald.ExplainRequest{UserID: d.User, Type: d.Type, NotificationID: d.Notification,
			Rule: d.Rule, RuleRun: d.Run})
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
