package twilio

import (
	"context"
	"io"
	"net/http"
	"net/url"
	"strings"
)

// runCallbacks reports msg's life to its StatusCallback as Twilio does: one
// signed form POST per status, in order (queued, or accepted through a
// Messaging Service, then sent, then delivered). A failed POST stops the
// sequence, like a message that stays in its last reported state. It runs
// in its own goroutine; Close cancels it.
func (e *Emulator) runCallbacks(msg Received) {
	defer e.callbacks.Done()
	statuses := []string{msg.Status, "sent", "delivered"}
	for _, status := range statuses {
		if !e.postCallback(msg, status) {
			return
		}
		e.setStatus(msg.SID, status)
	}
}

// postCallback POSTs one status callback and reports whether it got a 2xx.
func (e *Emulator) postCallback(msg Received, status string) bool {
	params := url.Values{
		"AccountSid":    {msg.AccountSID},
		"ApiVersion":    {"2010-04-01"},
		"MessageSid":    {msg.SID},
		"MessageStatus": {status},
		"SmsSid":        {msg.SID},
		"SmsStatus":     {status},
		"To":            {msg.To},
	}
	if msg.From != "" {
		params.Set("From", msg.From)
	}
	if msg.MessagingServiceSID != "" {
		params.Set("MessagingServiceSid", msg.MessagingServiceSID)
	}
	ok := e.post(e.ctx, msg.StatusCallback, params)
	if ok {
		e.callbacksSent.Inc()
	} else {
		e.callbacksFailed.Inc()
	}
	if !ok && e.cfg.Logger != nil && e.ctx.Err() == nil {
		e.cfg.Logger.Warn("twilio emulator: status callback failed", "sid", msg.SID, "status", status, "url", msg.StatusCallback)
	}
	return ok
}

// post sends one signed callback.
func (e *Emulator) post(ctx context.Context, callbackURL string, params url.Values) bool {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, callbackURL, strings.NewReader(params.Encode()))
	if err != nil {
		return false
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("User-Agent", "TwilioProxy/1.1")
	req.Header.Set("X-Twilio-Signature", signature(e.cfg.AuthToken, callbackURL, params))
	resp, err := e.cfg.CallbackClient.Do(req)
	if err != nil {
		return false
	}
	io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10)) //nolint:errcheck // drained only to reuse the connection.
	resp.Body.Close()
	return resp.StatusCode/100 == 2
}
