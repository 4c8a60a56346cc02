package httpapi

import (
	"net/http"
	"net/url"
	"strings"

	"github.com/heraldhq/herald"
	"github.com/heraldhq/herald/heraldtype"
)

// triggerResponse is the body of POST /v1/notifications.
type triggerResponse struct {
	// ID is the notification's id when the trigger had one recipient, so
	// the common case needs no digging into Notifications.
	ID            string                        `json:"id,omitempty"`
	Notifications []herald.EnqueuedNotification `json:"notifications"`
	Replayed      bool                          `json:"replayed"`
}

// trigger: POST /v1/notifications records a trigger's notifications and
// deliveries and answers after the commit (S4.1): 202 Accepted, because
// delivery happens later. An idempotent replay of an earlier trigger
// answers 200 with the original body, "replayed": true and the header
// Idempotent-Replayed: true; the same key with another request is 409.
// Keys are the calling API key's own (issue 23): another key's trigger
// with the same Idempotency-Key is a trigger of its own, never a replay
// or a conflict, so one backend can neither read nor block another's.
func (s *Server) trigger(w http.ResponseWriter, r *http.Request) error {
	req, err := s.decodeTrigger(w, r)
	if err != nil {
		return err
	}
	// Only API keys reach here (the route needs a scope a user token
	// lacks); the key's id, not its secret, names the namespace.
	if p := principalFrom(r.Context()); p != nil {
		req.IdempotencyNamespace = p.keyID
	}
	res, err := s.client.Enqueue(r.Context(), req)
	if err != nil {
		return err
	}
	out := triggerResponse{Notifications: res.Notifications, Replayed: res.Replayed}
	if out.Notifications == nil {
		out.Notifications = []herald.EnqueuedNotification{}
	}
	if len(out.Notifications) == 1 {
		out.ID = out.Notifications[0].ID
		w.Header().Set("Location", "/v1/notifications/"+url.PathEscape(out.ID))
	}
	status := http.StatusAccepted
	if res.Replayed {
		status = http.StatusOK
		w.Header().Set("Idempotent-Replayed", "true")
	}
	writeJSON(w, status, out)
	return nil
}

// decodeTrigger reads a trigger from the body and the Idempotency-Key
// header. The key may come from either place; given in both, the two must
// agree, because silently preferring one would make a retry with a
// corrected header look like a different request. The Client validates
// everything else (recipients, type, text limits, payload size).
func (s *Server) decodeTrigger(w http.ResponseWriter, r *http.Request) (herald.Request, error) {
	var req herald.Request
	if err := s.decodeJSON(w, r, &req, bodySpec{timeField: "send_at"}); err != nil {
		return herald.Request{}, err
	}
	if err := checkTriggerLists(&req); err != nil {
		return herald.Request{}, err
	}
	keys := r.Header.Values("Idempotency-Key")
	switch len(keys) {
	case 0:
		return req, nil
	case 1:
	default:
		return herald.Request{}, heraldtype.FieldErrorf("idempotency_key", "the Idempotency-Key header is given %d times; give it once", len(keys))
	}
	key := unquoteKey(keys[0])
	if key == "" {
		return herald.Request{}, heraldtype.FieldErrorf("idempotency_key", "the Idempotency-Key header is empty")
	}
	if req.IdempotencyKey != "" && req.IdempotencyKey != key {
		return herald.Request{}, heraldtype.FieldErrorf("idempotency_key", "the body's idempotency_key differs from the Idempotency-Key header; send one, or the same value in both")
	}
	req.IdempotencyKey = key
	return req, nil
}

// unquoteKey accepts the IETF draft's form of the header, a structured
// field string (Idempotency-Key: "abc"), as well as the bare form most
// APIs use (Idempotency-Key: abc); both mean the key abc.
func unquoteKey(v string) string {
	v = strings.TrimSpace(v)
	if len(v) >= 2 && v[0] == '"' && v[len(v)-1] == '"' {
		return v[1 : len(v)-1]
	}
	return v
}

// getNotification: GET /v1/notifications/{id} returns the notification,
// its status, reason and channel_status (the history's, issue 22), and
// every delivery with every attempt: time, outcome and the provider's
// message id or error code.
func (s *Server) getNotification(w http.ResponseWriter, r *http.Request) error {
	n, err := s.client.GetNotification(r.Context(), r.PathValue("id"))
	if err != nil {
		return err
	}
	visibilityFor(principalFrom(r.Context())).notification(&n)
	writeJSON(w, http.StatusOK, n)
	return nil
}

// cancel: POST /v1/notifications/cancel cancels the notifications the
// body selects — {notification_id}, or {cancellation_key} with an
// optional user_id — synchronously (issue 36 item 4): it answers 200
// once every delivery of them is either cancelled (never sent) or was
// sent before the answer, waiting for deliveries being sent, and lists
// each with its outcome. The scope is triggering's, notifications:write:
// a caller that may send a notification may take it back. The timeline
// names the calling key.
func (s *Server) cancel(w http.ResponseWriter, r *http.Request) error {
	var req herald.CancelRequest
	if err := s.decodeJSON(w, r, &req, bodySpec{}); err != nil {
		return err
	}
	if p := principalFrom(r.Context()); p != nil && p.keyID != "" {
		req.By = "API key " + p.keyID
	}
	res, err := s.client.Cancel(r.Context(), req)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, res)
	return nil
}
