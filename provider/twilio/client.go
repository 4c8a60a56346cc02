// Package twilio sends SMS through Twilio's Messages API. Its emulator, for
// `herald emulate twilio` and tests, is emulator/twilio.
//
// It speaks the REST API with net/http instead of twilio-go, whose base URL
// is fixed and so cannot be pointed at the emulator. The Client only
// classifies failures into *heraldtype.SendError; the dispatcher alone
// decides whether and when to retry (STYLE.md, errors in three layers).
package twilio

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"

	"github.com/heraldhq/herald/heraldtype"
)

// maxResponseBytes bounds how much of an answer is read. Twilio's answers
// are around 1 KiB; a proxy's HTML error page is only needed for its status.
const maxResponseBytes = 64 << 10

// Client sends SMS through the Twilio Messages API. It is safe for
// concurrent use; create one per account and sender and reuse it.
type Client struct {
	cfg  *resolved
	http *http.Client
}

// New validates cfg and returns a Client. It does not contact Twilio.
func New(cfg Config) (*Client, error) {
	r, err := cfg.validate()
	if err != nil {
		return nil, err
	}
	hc := r.HTTPClient
	if hc == nil {
		tr := http.DefaultTransport.(*http.Transport).Clone()
		// Sends are many small concurrent requests to one host; the
		// default of 2 idle connections per host would reconnect constantly.
		tr.MaxIdleConns = 128
		tr.MaxIdleConnsPerHost = 128
		hc = &http.Client{Transport: tr}
	}
	return &Client{cfg: r, http: hc}, nil
}

// ValidateNotification reports whether n can be sent as an SMS (see
// CheckPayload). The root package finds it by type assertion and calls it
// when a notification is accepted.
func (c *Client) ValidateNotification(n *heraldtype.Notification) error {
	return CheckPayload(n)
}

// Send sends m's notification as an SMS to m.Address (E.164) and returns
// the message SID. The text is ComposeBody(m.Notification). A failure is a
// *heraldtype.SendError classified per PROTOCOLS.md; Send never retries.
//
// Twilio's create is not idempotent and takes no idempotency key, so m.Key
// is not sent: a retry after a lost answer can deliver the SMS twice, which
// is why at_most_once types exist (S1.3).
func (c *Client) Send(ctx context.Context, m *heraldtype.Message) (string, error) {
	if err := checkMessage(m); err != nil {
		return "", err
	}
	ctx, cancel := context.WithTimeout(ctx, c.cfg.Timeout)
	defer cancel()

	form := url.Values{}
	form.Set("To", m.Address)
	if c.cfg.From != "" {
		form.Set("From", c.cfg.From)
	}
	if c.cfg.MessagingServiceSID != "" {
		form.Set("MessagingServiceSid", c.cfg.MessagingServiceSID)
	}
	form.Set("Body", ComposeBody(m.Notification))
	if c.cfg.StatusCallback != "" && m.Key != "" {
		form.Set("StatusCallback", c.statusCallbackURL(m.Key))
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.cfg.createURL, strings.NewReader(form.Encode()))
	if err != nil {
		return "", &heraldtype.SendError{Class: heraldtype.ClassPermanent, Code: codeInvalidMessage, Message: "building the request failed", Err: err}
	}
	if c.cfg.APIKeySID != "" {
		req.SetBasicAuth(c.cfg.APIKeySID, c.cfg.APIKeySecret)
	} else {
		req.SetBasicAuth(c.cfg.AccountSID, c.cfg.AuthToken)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Accept", "application/json")

	resp, err := c.http.Do(req)
	if err != nil {
		// http.Client errors name the method and URL, never the headers,
		// so the auth token cannot leak through them.
		return "", &heraldtype.SendError{Class: heraldtype.ClassTemporary, Code: codeNetwork, Message: err.Error(), Err: err}
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxResponseBytes))
	if resp.StatusCode/100 == 2 {
		// Twilio created the message; an unreadable answer must not turn
		// into a retry, which would send it twice.
		return messageSID(body), nil
	}
	if err != nil {
		return "", &heraldtype.SendError{Class: heraldtype.ClassTemporary, Code: codeNetwork, Message: "reading the error answer: " + err.Error(), Err: err}
	}
	return "", classifyResponse(resp.StatusCode, resp.Header, body, c.cfg.Now())
}

// checkMessage rejects a message that cannot be turned into a request.
func checkMessage(m *heraldtype.Message) error {
	invalid := func(msg string) error {
		return &heraldtype.SendError{Class: heraldtype.ClassPermanent, Code: codeInvalidMessage, Message: msg}
	}
	switch {
	case m == nil:
		return invalid("message is nil")
	case m.Notification == nil:
		return invalid("message has no notification")
	case m.Address == "":
		return invalid("message has no phone number")
	case !ValidE164(m.Address):
		// Twilio would answer 21211; refusing here saves the request and
		// gives the same permanent outcome.
		return &heraldtype.SendError{Class: heraldtype.ClassPermanent, Code: Code(ErrInvalidTo),
			Message: fmt.Sprintf("phone number %q is not in E.164 format (+14155552671)", m.Address)}
	}
	if err := CheckPayload(m.Notification); err != nil {
		return invalid(heraldtype.ErrorMessage(err))
	}
	return nil
}

// messageSID extracts "sid" from Twilio's message resource.
func messageSID(body []byte) string {
	var r struct {
		SID string `json:"sid"`
	}
	if json.Unmarshal(body, &r) != nil {
		return ""
	}
	return r.SID
}

// String describes the Client without its auth token.
func (c *Client) String() string {
	return fmt.Sprintf("twilio.Client{AccountSID:%q From:%q MessagingServiceSID:%q BaseURL:%q}",
		c.cfg.AccountSID, c.cfg.From, c.cfg.MessagingServiceSID, c.cfg.BaseURL)
}

// Format makes every fmt verb print String, so the auth token the Client
// holds never reaches a log.
func (c *Client) Format(f fmt.State, _ rune) { fmt.Fprint(f, c.String()) }
