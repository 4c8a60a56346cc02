// Package fcm sends push notifications through Firebase Cloud Messaging's
// HTTP v1 API. Its emulator, for `herald emulate fcm` and tests, is
// emulator/fcm.
//
// The Client only classifies failures into *heraldtype.SendError; the
// dispatcher alone decides whether and when to retry (STYLE.md, errors in
// three layers).
package fcm

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"

	"golang.org/x/oauth2/google"

	"github.com/heraldhq/herald/heraldtype"
)

// maxResponseBytes bounds how much of an answer is read. FCM's answers are
// well under 1 KiB; a proxy's HTML error page can be larger and is only
// needed for its status.
const maxResponseBytes = 64 << 10

// Client sends messages through FCM HTTP v1. It is safe for concurrent use;
// create one per Firebase project and reuse it.
type Client struct {
	cfg    *resolved
	http   *http.Client
	tokens *tokenCache
}

// New validates cfg and returns a Client. It does not contact FCM: the first
// access token is fetched by the first Send.
func New(cfg Config) (*Client, error) {
	r, err := cfg.validate()
	if err != nil {
		return nil, err
	}
	jwtConf, err := google.JWTConfigFromJSON(r.CredentialsJSON, messagingScope)
	if err != nil {
		// Already validated above; this only guards against the library
		// growing stricter. Its message is not quoted: it may echo input.
		return nil, fmt.Errorf("fcm: CredentialsJSON rejected by the OAuth2 library")
	}
	hc := r.HTTPClient
	if hc == nil {
		tr := http.DefaultTransport.(*http.Transport).Clone()
		// Sends are many small concurrent requests to one host; the
		// default of 2 idle connections per host would reconnect constantly.
		tr.MaxIdleConns = 256
		tr.MaxIdleConnsPerHost = 256
		tr.ForceAttemptHTTP2 = true
		hc = &http.Client{Transport: tr}
	}
	// The token exchange does not see Send's context (x/oauth2's JWT source
	// posts without one), so it gets its own bound.
	tokenHTTP := &http.Client{Transport: hc.Transport, Timeout: r.Timeout}
	return &Client{
		cfg:    r,
		http:   hc,
		tokens: newTokenCache(jwtConf, tokenHTTP, r.Now),
	}, nil
}

// ProjectID is the Firebase project the Client sends for.
func (c *Client) ProjectID() string { return c.cfg.ProjectID }

// ValidateNotification reports whether n can be sent through FCM (see
// CheckPayload). The root package finds it by type assertion and calls it
// when a notification is accepted.
func (c *Client) ValidateNotification(n *heraldtype.Notification) error {
	return CheckPayload(n)
}

// Send sends m to its device and returns FCM's message id. A failure is a
// *heraldtype.SendError classified per PROTOCOLS.md; Send never retries.
func (c *Client) Send(ctx context.Context, m *heraldtype.Message) (string, error) {
	if err := checkMessage(m); err != nil {
		return "", err
	}
	ctx, cancel := context.WithTimeout(ctx, c.cfg.Timeout)
	defer cancel()

	tok, err := c.tokens.token()
	if err != nil {
		return "", classifyTokenError(err, c.cfg.Now())
	}
	now := c.cfg.Now()
	body := appendRequest(make([]byte, 0, estimateSize(m)), m, c.cfg.DefaultTTL, now)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.cfg.sendURL, bytes.NewReader(body))
	if err != nil {
		return "", &heraldtype.SendError{Class: heraldtype.ClassPermanent, Code: codeInvalidMessage, Message: "building the request failed", Err: err}
	}
	req.Header["Authorization"] = []string{"Bearer " + tok}
	req.Header["Content-Type"] = []string{"application/json; charset=utf-8"}

	resp, err := c.http.Do(req)
	if err != nil {
		// http.Client errors name the method and URL, never the headers,
		// so the access token cannot leak through them.
		return "", &heraldtype.SendError{Class: heraldtype.ClassTemporary, Code: codeNetwork, Message: err.Error(), Err: err}
	}
	defer resp.Body.Close()
	respBody, err := io.ReadAll(io.LimitReader(resp.Body, maxResponseBytes))
	if resp.StatusCode/100 == 2 {
		// FCM accepted the message; an unreadable answer must not turn
		// into a retry, which would send it twice.
		return messageID(respBody), nil
	}
	if err != nil {
		return "", &heraldtype.SendError{Class: heraldtype.ClassTemporary, Code: codeNetwork, Message: "reading the error answer: " + err.Error(), Err: err}
	}
	se := classifyResponse(resp.StatusCode, resp.Header, respBody, c.cfg.Now(), c.cfg.QuotaMinRetryAfter)
	if se.Code == CodeUnauthenticated {
		// The token was refused (revoked, or expired early): the next
		// Send fetches a new one. Retrying is the dispatcher's call.
		c.tokens.invalidate(tok)
	}
	return "", se
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
	case m.Device == nil:
		return invalid("message has no device")
	case m.Key == "":
		return invalid("message has no idempotency key (data.messageId)")
	case !m.Device.Platform.Valid():
		return invalid(fmt.Sprintf("device platform %q is not android, ios or web", m.Device.Platform))
	case strings.TrimSpace(m.Device.Token) == "":
		// A device without a token can never be reached: it is as dead
		// as a malformed token (S0.3 note).
		return &heraldtype.SendError{Class: heraldtype.ClassPermanent, Code: codeInvalidMessage, Message: "device has no push token", TokenInvalid: true}
	}
	return nil
}

// estimateSize guesses the encoded request size so the buffer is allocated
// once.
func estimateSize(m *heraldtype.Message) int {
	n := m.Notification
	size := 320 + len(m.Device.Token) + len(m.Key) + 2*(len(n.Title)+len(n.Body))
	for k, v := range n.Data {
		size += len(k) + len(v) + 6
	}
	return size
}

// messageID extracts the id from {"name": "projects/p/messages/ID"}.
func messageID(body []byte) string {
	var r struct {
		Name string `json:"name"`
	}
	if json.Unmarshal(body, &r) != nil {
		return ""
	}
	if i := strings.LastIndexByte(r.Name, '/'); i >= 0 {
		return r.Name[i+1:]
	}
	return r.Name
}

// String describes the Client without its credentials.
func (c *Client) String() string {
	return fmt.Sprintf("fcm.Client{ProjectID:%q Endpoint:%q}", c.cfg.ProjectID, c.cfg.Endpoint)
}

// Format makes every fmt verb print String, so the private key and access
// tokens the Client holds never reach a log.
func (c *Client) Format(f fmt.State, _ rune) { fmt.Fprint(f, c.String()) }
