package console

import (
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/heraldhq/herald/auth"
	"github.com/heraldhq/herald/heraldtype"
)

// The outbound webhook endpoints (issue 35 item 4): the list, and an
// endpoint's page with its state, recent messages and dead letter list;
// its actions — a test event, enabling or disabling, rotating the
// secret, replaying dead letters — need webhooks:write, as their API
// routes do. Endpoints are registered with the API or the CLI, which
// show the new secret; the console shows a secret only as the answer to
// its own rotation, once (that answer is the one action here that is not
// POST-redirect-GET: the secret must not travel in a URL).

// webhookRoutes registers the endpoints' pages and actions.
func (c *Console) webhookRoutes() {
	c.view("GET /console/webhooks", auth.ScopeWebhooksRead, c.webhooks)
	c.view("GET /console/webhooks/{id}", auth.ScopeWebhooksRead, c.webhook)
	c.action("POST /console/webhooks/{id}/test", auth.ScopeWebhooksWrite, c.testWebhook)
	c.action("POST /console/webhooks/{id}/enabled", auth.ScopeWebhooksWrite, c.enableWebhook)
	c.action("POST /console/webhooks/{id}/rotate", auth.ScopeWebhooksWrite, c.rotateWebhook)
	c.action("POST /console/webhooks/{id}/replay", auth.ScopeWebhooksWrite, c.replayWebhook)
}

// webhooksData is the endpoints list's.
type webhooksData struct {
	Endpoints []heraldtype.WebhookEndpoint
}

func (c *Console) webhooks(w http.ResponseWriter, r *http.Request, s Session) error {
	eps, err := c.client.ListWebhooks(r.Context())
	if err != nil {
		return err
	}
	c.render(w, r, http.StatusOK, "webhooks", page{Title: "Webhooks", Session: s, Data: webhooksData{Endpoints: eps}})
	return nil
}

// recentWebhookMessages is how many of its newest messages an endpoint's
// page shows.
const recentWebhookMessages = 20

// webhookData is an endpoint's page.
type webhookData struct {
	Endpoint heraldtype.WebhookEndpoint
	// Recent are its newest messages, in any state.
	Recent []heraldtype.WebhookMessage
	// Dead is a page of its dead letter list; NextDead the next one's
	// link.
	Dead     []heraldtype.WebhookMessage
	NextDead string
	// What the last action did, read back from the query string after
	// its redirect.
	Tested   *heraldtype.WebhookTestResult
	Replayed string
	Changed  string
	// Secret is the new secret on the answer to a rotation, never
	// otherwise.
	Secret string
}

func (c *Console) webhook(w http.ResponseWriter, r *http.Request, s Session) error {
	d, err := c.webhookData(r, r.PathValue("id"))
	if err != nil {
		return err
	}
	q := r.URL.Query()
	d.Replayed, d.Changed = q.Get("replayed"), q.Get("changed")
	if q.Has("tested") {
		d.Tested = testedFromQuery(q)
	}
	c.renderWebhook(w, r, s, d)
	return nil
}

func (c *Console) renderWebhook(w http.ResponseWriter, r *http.Request, s Session, d webhookData) {
	c.render(w, r, http.StatusOK, "webhook", page{Title: "Webhook " + d.Endpoint.ID, Path: "/console/webhooks", Session: s, Data: d})
}

// webhookData reads the endpoint, its newest messages and a page of its
// dead letters.
func (c *Console) webhookData(r *http.Request, id string) (webhookData, error) {
	var d webhookData
	ep, err := c.client.GetWebhook(r.Context(), id)
	if err != nil {
		return d, err
	}
	d.Endpoint = ep
	recent, err := c.client.ListWebhookMessages(r.Context(), id, heraldtype.WebhookMessageFilter{Limit: recentWebhookMessages})
	if err != nil {
		return d, err
	}
	d.Recent = recent.Messages
	dead, err := c.client.ListWebhookMessages(r.Context(), id, heraldtype.WebhookMessageFilter{State: heraldtype.WebhookDead,
		Cursor: query(r, "cursor"), Limit: listLimit})
	if err != nil {
		return d, err
	}
	d.Dead, d.NextDead = dead.Messages, nextLink(r, dead.NextCursor)
	return d, nil
}

// webhookLink is an endpoint's page with an action's result.
func webhookLink(id string, q url.Values) string {
	return pathLink("/console/webhooks/", id) + "?" + q.Encode()
}

// testWebhook sends the endpoint a test event and shows what it
// answered.
func (c *Console) testWebhook(w http.ResponseWriter, r *http.Request, s Session) error {
	id := r.PathValue("id")
	res, err := c.client.TestWebhook(r.Context(), id)
	if err != nil {
		return err
	}
	q := url.Values{"tested": {strconv.FormatBool(res.OK)}, "event": {res.EventID},
		"status": {strconv.Itoa(res.Status)}, "ms": {strconv.FormatInt(res.DurationMS, 10)}}
	if res.Error != "" {
		q.Set("error", res.Error)
	}
	seeOther(w, r, webhookLink(id, q))
	return nil
}

// testedFromQuery reads a test's result back from the redirect's query.
func testedFromQuery(q url.Values) *heraldtype.WebhookTestResult {
	status, _ := strconv.Atoi(q.Get("status"))
	ms, _ := strconv.ParseInt(q.Get("ms"), 10, 64)
	return &heraldtype.WebhookTestResult{EventID: q.Get("event"), Type: heraldtype.WebhookTest, OK: q.Get("tested") == "true",
		Status: status, DurationMS: ms, Error: q.Get("error")}
}

// enableWebhook enables (enabled=1) or disables (enabled=0) the
// endpoint.
func (c *Console) enableWebhook(w http.ResponseWriter, r *http.Request, s Session) error {
	id := r.PathValue("id")
	var on bool
	switch postValue(r, "enabled") {
	case "1":
		on = true
	case "0":
	default:
		return fieldError("enabled", "must be 1 or 0")
	}
	if _, err := c.client.UpdateWebhook(r.Context(), id, heraldtype.WebhookEndpointUpdate{Enabled: &on}); err != nil {
		return err
	}
	changed := "disabled"
	if on {
		changed = "enabled"
	}
	seeOther(w, r, webhookLink(id, url.Values{"changed": {changed}}))
	return nil
}

// rotateWebhook gives the endpoint a new secret and answers its page with
// the secret, this once (not a redirect: the secret stays out of URLs
// and history; the page is not stored, Cache-Control: no-store).
func (c *Console) rotateWebhook(w http.ResponseWriter, r *http.Request, s Session) error {
	id := r.PathValue("id")
	rotated, err := c.client.RotateWebhookSecret(r.Context(), id)
	if err != nil {
		return err
	}
	d, err := c.webhookData(r, id)
	if err != nil {
		return err
	}
	d.Secret = rotated.Secret
	c.renderWebhook(w, r, s, d)
	return nil
}

// replayWebhook sends the endpoint's dead messages again: the one seq
// names, or all of them.
func (c *Console) replayWebhook(w http.ResponseWriter, r *http.Request, s Session) error {
	id := r.PathValue("id")
	var seqs []int64
	if v := postValue(r, "seq"); v != "" {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n < 1 {
			return fieldError("seq", "%q is not a message's seq", v)
		}
		seqs = []int64{n}
	}
	res, err := c.client.ReplayWebhookMessages(r.Context(), id, seqs)
	if err != nil {
		return err
	}
	seeOther(w, r, webhookLink(id, url.Values{"replayed": {strconv.Itoa(res.Replayed)}}))
	return nil
}

// webhookEvents is an endpoint's event types as the pages show them.
func webhookEvents(events []string) string {
	if len(events) == 0 {
		return "every type"
	}
	return strings.Join(events, ", ")
}

// webhookState is an endpoint's state in words.
func webhookState(ep heraldtype.WebhookEndpoint) string {
	switch {
	case !ep.Enabled && ep.DisabledReason != "":
		return "disabled: " + ep.DisabledReason
	case !ep.Enabled:
		return "disabled"
	case ep.FailingSince != nil:
		return "enabled, failing for " + age(time.Since(*ep.FailingSince))
	}
	return "enabled"
}
