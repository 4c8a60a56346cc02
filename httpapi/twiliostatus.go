package httpapi

import (
	"net/http"

	"github.com/heraldhq/herald/heraldtype"
)

// twilioStatus: POST /v1/providers/twilio/status takes Twilio's status
// callbacks (issue 21 item 4). It carries no API key — Twilio cannot send
// one — but X-Twilio-Signature, which the Twilio provider verifies against
// twilio.auth_token and twilio.status_callback_url (a forged or unsigned
// call is 401 unauthenticated). A final status (delivered, undelivered,
// failed) is recorded on the delivery's timeline. Any verified callback
// is answered 200, also one for a message Herald does not know, which is
// logged: Twilio retries every answer that is not 2xx.
func (s *Server) twilioStatus(w http.ResponseWriter, r *http.Request) error {
	if err := r.ParseForm(); err != nil {
		return heraldtype.Errorf(heraldtype.EINVALID, "the body is not a form: %v", err)
	}
	rep, found, err := s.client.RecordStatusCallback(r.Context(), "twilio", r.URL.RawQuery, r.PostForm, r.Header.Get("X-Twilio-Signature"))
	if err != nil {
		return err
	}
	if !found {
		s.log.Warn("twilio status callback for an unknown message", "message_sid", rep.ProviderMessageID,
			"delivery", rep.DeliveryKey, "status", rep.Status)
	}
	w.WriteHeader(http.StatusOK)
	return nil
}
