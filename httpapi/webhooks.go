package httpapi

import (
	"net/http"

	"github.com/heraldhq/herald/heraldtype"
)

// Outbound webhook endpoints (issue 35 item 4): /v1/webhooks.

// createWebhook: POST /v1/webhooks {"url","description"?,"events"?} → 201
// with the endpoint and its secret, shown this once.
func (s *Server) createWebhook(w http.ResponseWriter, r *http.Request) error {
	var in heraldtype.WebhookEndpointInput
	if err := s.decodeJSON(w, r, &in, bodySpec{}); err != nil {
		return err
	}
	e, err := s.client.CreateWebhook(r.Context(), in)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusCreated, e)
	return nil
}

// listWebhooks: GET /v1/webhooks → {"webhooks":[…]}, oldest first.
func (s *Server) listWebhooks(w http.ResponseWriter, r *http.Request) error {
	es, err := s.client.ListWebhooks(r.Context())
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, struct {
		Webhooks []heraldtype.WebhookEndpoint `json:"webhooks"`
	}{es})
	return nil
}

// getWebhook: GET /v1/webhooks/{id}.
func (s *Server) getWebhook(w http.ResponseWriter, r *http.Request) error {
	e, err := s.client.GetWebhook(r.Context(), r.PathValue("id"))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, e)
	return nil
}

// updateWebhook: PATCH /v1/webhooks/{id} {"url"?,"description"?,
// "events"?,"enabled"?}.
func (s *Server) updateWebhook(w http.ResponseWriter, r *http.Request) error {
	var in heraldtype.WebhookEndpointUpdate
	if err := s.decodeJSON(w, r, &in, bodySpec{}); err != nil {
		return err
	}
	e, err := s.client.UpdateWebhook(r.Context(), r.PathValue("id"), in)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, e)
	return nil
}

// deleteWebhook: DELETE /v1/webhooks/{id} → 204; its messages go too.
func (s *Server) deleteWebhook(w http.ResponseWriter, r *http.Request) error {
	if err := s.client.DeleteWebhook(r.Context(), r.PathValue("id")); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// rotateWebhookSecret: POST /v1/webhooks/{id}/rotate → the endpoint with
// its new secret; the previous one signs too until previous_secret_until.
func (s *Server) rotateWebhookSecret(w http.ResponseWriter, r *http.Request) error {
	e, err := s.client.RotateWebhookSecret(r.Context(), r.PathValue("id"))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, e)
	return nil
}

// listWebhookMessages: GET /v1/webhooks/{id}/messages?state=&cursor=&limit=
// → {"messages":[…],"next_cursor":"…"}, newest first.
func (s *Server) listWebhookMessages(w http.ResponseWriter, r *http.Request) error {
	var (
		f     heraldtype.WebhookMessageFilter
		state string
	)
	if err := parseQuery(r.URL.RawQuery, map[string]func(string) error{
		"state": setString(&state), "cursor": setString(&f.Cursor), "limit": setLimit(&f.Limit),
	}); err != nil {
		return err
	}
	f.State = heraldtype.WebhookMessageState(state)
	page, err := s.client.ListWebhookMessages(r.Context(), r.PathValue("id"), f)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, page)
	return nil
}

// replayWebhookMessagesBody names the dead messages to send again; none:
// every dead message of the endpoint.
type replayWebhookMessagesBody struct {
	Seqs []int64 `json:"seqs"`
}

// replayWebhookMessages: POST /v1/webhooks/{id}/replay {"seqs"?} →
// {"replayed": n}.
func (s *Server) replayWebhookMessages(w http.ResponseWriter, r *http.Request) error {
	var in replayWebhookMessagesBody
	if err := s.decodeJSON(w, r, &in, bodySpec{optional: true}); err != nil {
		return err
	}
	out, err := s.client.ReplayWebhookMessages(r.Context(), r.PathValue("id"), in.Seqs)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

// testWebhook: POST /v1/webhooks/{id}/test → what the endpoint answered a
// webhook.test event sent now (200 whatever it answered; 404 for no such
// endpoint). The route is not bounded by the store timeout: the send is
// bounded by webhooks.timeout, and the Client bounds its store read.
func (s *Server) testWebhook(w http.ResponseWriter, r *http.Request) error {
	res, err := s.client.TestWebhook(r.Context(), r.PathValue("id"))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, res)
	return nil
}
