package console

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"

	"github.com/heraldhq/herald"
	"github.com/heraldhq/herald/auth"
	"github.com/heraldhq/herald/heraldtype"
)

// The rules: the list, one rule as a JSON document the operator edits
// (PUT /v1/rules/{name}), and a dry run against a pasted event
// (POST /v1/rules/{name}/dry-run), which sends nothing.

// rulesData is the rules list's.
type rulesData struct {
	Source, Event string
	Enabled       bool
	Rules         []herald.Rule
	Next          string
	Err           *formResult
}

// rules lists the rules by name, filtered by source, event and enabled;
// ?name= opens one (a new name opens an empty one to write).
func (c *Console) rules(w http.ResponseWriter, r *http.Request, s Session) error {
	if name := query(r, "name"); name != "" {
		seeOther(w, r, pathLink("/console/rules/", name)+"?new=1")
		return nil
	}
	d := rulesData{Source: query(r, "source"), Event: query(r, "event"), Enabled: query(r, "enabled") != ""}
	p, err := c.client.ListRules(r.Context(), herald.RuleFilter{Source: d.Source, Event: d.Event, Enabled: d.Enabled, Cursor: query(r, "cursor"), Limit: listLimit})
	var status int
	if d.Err, status, err = pageRefusal(err); err != nil {
		return err
	}
	d.Rules, d.Next = p.Rules, nextLink(r, p.NextCursor)
	c.render(w, r, status, "rules", page{Title: "Rules", Session: s, Data: d})
	return nil
}

// ruleData is one rule's page.
type ruleData struct {
	Name string
	// Exists is false for a rule being written for the first time.
	Exists bool
	Rule   herald.Rule
	// Doc is the textarea's JSON: the stored rule, or what was posted.
	Doc       string
	Err       *formResult
	Saved     bool
	Event     string
	DryRun    *herald.RuleDryRun
	DryErr    *formResult
	Interests bool
	// Runs are the rule's runs, newest first: each event it fired on.
	Runs     []herald.RuleRun
	NextRuns string
}

// newRuleDoc is the skeleton a new rule's textarea starts from.
const newRuleDoc = `{
  "when": {"event": "PRICE_CHANGE", "detect": {"price_drop_pct": 10}},
  "audience": {"interest": {"kinds": ["VIEW"], "within": "168h"}},
  "notify": {"type": "price_drop", "title": "{{.product_name}} is cheaper", "body": "Now {{.current_price}}"}
}`

// sampleEvent is the dry-run textarea's placeholder.
const sampleEvent = `{"name": "PRICE_CHANGE", "subject": "product:42", "data": {"price": "9.99", "previous_price": "12.99"}}`

func (c *Console) rule(w http.ResponseWriter, r *http.Request, s Session) error {
	d, err := c.ruleData(r, r.PathValue("name"))
	if err != nil {
		return err
	}
	d.Saved = r.URL.Query().Get("saved") == "1"
	c.renderRule(w, r, http.StatusOK, s, d)
	return nil
}

// ruleData reads the rule; a rule not found is a new one when the page
// was opened to write it (?new=1).
func (c *Console) ruleData(r *http.Request, name string) (ruleData, error) {
	d := ruleData{Name: name, Event: sampleEvent}
	rl, err := c.client.GetRule(r.Context(), name)
	switch {
	case err == nil:
		d.Exists, d.Rule, d.Doc = true, rl, ruleDoc(rl)
	case heraldtype.ErrorCode(err) == heraldtype.ENOTFOUND && (r.URL.Query().Get("new") == "1" || r.Method == http.MethodPost):
		d.Doc = newRuleDoc
		return d, nil
	default:
		return d, err
	}
	runs, err := c.client.ListRuleRuns(r.Context(), heraldtype.RuleRunFilter{Rule: name, Cursor: query(r, "cursor"), Limit: userSectionLimit})
	if err != nil {
		return d, err
	}
	d.Runs, d.NextRuns = runs.Runs, nextLink(r, runs.NextCursor)
	return d, nil
}

func (c *Console) renderRule(w http.ResponseWriter, r *http.Request, status int, s Session, d ruleData) {
	d.Interests = s.Can(auth.ScopeInterestsRead)
	c.render(w, r, status, "rule", page{Title: "Rule " + d.Name, Path: "/console/rules", Session: s, Data: d})
}

// ruleDoc is the rule as the textarea shows it: its document in the
// order the API documents it, without the fields the server keeps (name,
// times).
func ruleDoc(rl herald.Rule) string {
	out, _ := json.MarshalIndent(struct {
		Source   heraldtype.RuleSource   `json:"source,omitzero"`
		When     heraldtype.RuleWhen     `json:"when"`
		Audience heraldtype.RuleAudience `json:"audience"`
		Notify   heraldtype.RuleNotify   `json:"notify"`
		Disabled bool                    `json:"disabled,omitempty"`
	}{rl.Source, rl.When, rl.Audience, rl.Notify, rl.Disabled}, "", "  ")
	return string(out)
}

// saveRule writes the rule the textarea holds.
func (c *Console) saveRule(w http.ResponseWriter, r *http.Request, s Session) error {
	name := r.PathValue("name")
	doc := r.PostForm.Get("rule")
	var in herald.Rule
	err := decodeStrict("rule", doc, &in)
	if err == nil && in.Name != "" && in.Name != name {
		err = fieldError("name", "is the rule's name in the address; leave it out or give the same")
	}
	if err == nil {
		in.Name = name
		_, _, err = c.client.PutRule(r.Context(), in)
	}
	if err == nil {
		seeOther(w, r, pathLink("/console/rules/", name)+"?saved=1")
		return nil
	}
	fr, ok := refused(err)
	if !ok {
		return err
	}
	d, derr := c.ruleData(r, name)
	if derr != nil {
		return derr
	}
	d.Doc, d.Err = doc, &fr
	c.renderRule(w, r, refusedStatus(fr), s, d)
	return nil
}

// dryRunRule answers what the rule would do with the pasted event.
func (c *Console) dryRunRule(w http.ResponseWriter, r *http.Request, s Session) error {
	name := r.PathValue("name")
	d, err := c.ruleData(r, name)
	if err != nil {
		return err
	}
	if !d.Exists {
		return heraldtype.Errorf(heraldtype.ENOTFOUND, "rule %q not found: save it before a dry run", name)
	}
	d.Event = r.PostForm.Get("event")
	var e herald.Event
	err = decodeStrict("event", d.Event, &e)
	var out herald.RuleDryRun
	if err == nil {
		out, err = c.client.DryRunRule(r.Context(), name, e)
	}
	status := http.StatusOK
	if err != nil {
		fr, ok := refused(err)
		if !ok {
			return err
		}
		d.DryErr, status = &fr, refusedStatus(fr)
	} else {
		// The sample names users who showed an interest: only a session
		// that may read interests sees it, as over the API.
		if !s.Can(auth.ScopeInterestsRead) {
			out.Sample, out.SampleWithheld = nil, true
		}
		d.DryRun = &out
	}
	c.renderRule(w, r, status, s, d)
	return nil
}

// decodeStrict reads a pasted JSON document as the API reads a body: one
// value, no unknown field; a mistake names field.
func decodeStrict(field, doc string, v any) error {
	dec := json.NewDecoder(bytes.NewReader([]byte(doc)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return fieldError(field, "is not a valid document: %s", jsonProblem(err))
	}
	if dec.More() {
		return fieldError(field, "has more than one JSON value")
	}
	return nil
}

// jsonProblem says what is wrong with a document in words an operator
// can act on.
func jsonProblem(err error) string {
	var se *json.SyntaxError
	var te *json.UnmarshalTypeError
	switch {
	case asErr(err, &se):
		return fmt.Sprintf("%s (at byte %d)", se.Error(), se.Offset)
	case asErr(err, &te):
		return fmt.Sprintf("%s must be a %s, not a %s", te.Field, te.Type, te.Value)
	}
	return err.Error()
}
