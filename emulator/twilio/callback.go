package twilio

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
)

// Outcome is how the messages to one number end, reported by their status
// callbacks after the create succeeded (the carrier's verdict, which
// Twilio learns later): "delivered" by default, or "undelivered" or
// "failed" with a Twilio error code (30003 unreachable handset, 30005
// unknown number, 30006 landline, 21610 the recipient replied STOP, …).
type Outcome struct {
	Status    string `json:"status"`
	ErrorCode int    `json:"error_code,omitempty"`
}

// SetOutcome makes the status callbacks of later messages to number end
// in o instead of "delivered". It refuses a status other than delivered,
// undelivered and failed.
func (e *Emulator) SetOutcome(number string, o Outcome) error {
	switch o.Status {
	case "delivered", "undelivered", "failed":
	default:
		return &outcomeError{"status must be delivered, undelivered or failed, not " + strconv.Quote(o.Status)}
	}
	e.mu.Lock()
	e.outcomes[number] = o
	e.mu.Unlock()
	return nil
}

// ClearOutcome makes messages to number delivered again.
func (e *Emulator) ClearOutcome(number string) {
	e.mu.Lock()
	delete(e.outcomes, number)
	e.mu.Unlock()
}

type outcomeError struct{ msg string }

func (e *outcomeError) Error() string { return "twilio emulator: " + e.msg }

// outcome returns how messages to number end.
func (e *Emulator) outcome(number string) Outcome {
	e.mu.Lock()
	defer e.mu.Unlock()
	if o, ok := e.outcomes[number]; ok {
		return o
	}
	return Outcome{Status: "delivered"}
}

func (e *Emulator) handlePutOutcome(w http.ResponseWriter, r *http.Request) {
	var o Outcome
	dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, 4096))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&o); err != nil {
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": "invalid JSON: " + err.Error()})
		return
	}
	if err := e.SetOutcome(r.PathValue("number"), o); err != nil {
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": err.Error()})
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

// runCallbacks reports msg's life to its StatusCallback as Twilio does: one
// signed form POST per status, in order (queued, or accepted through a
// Messaging Service, then sent, then the outcome: delivered unless
// SetOutcome said otherwise; a failed message is never sent). A failed
// POST stops the sequence, like a message that stays in its last reported
// state. It runs in its own goroutine; Close cancels it.
func (e *Emulator) runCallbacks(msg Received) {
	defer e.callbacks.Done()
	final := e.outcome(msg.To)
	steps := []Outcome{{Status: msg.Status}, {Status: "sent"}, final}
	if final.Status == "failed" {
		steps = []Outcome{{Status: msg.Status}, final}
	}
	for _, step := range steps {
		if !e.postCallback(msg, step) {
			return
		}
		e.setStatus(msg.SID, step.Status)
	}
}

// postCallback POSTs one status callback and reports whether it got a 2xx.
func (e *Emulator) postCallback(msg Received, step Outcome) bool {
	status := step.Status
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
	if step.ErrorCode != 0 {
		params.Set("ErrorCode", strconv.Itoa(step.ErrorCode))
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
