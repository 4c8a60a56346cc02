// Package apns sends push notifications to iOS devices through the Apple
// Push Notification service (HTTP/2, token-based authentication). Its
// emulator, for `herald emulate apns` and tests, is emulator/apns.
//
// The Client only classifies failures into *heraldtype.SendError; the
// dispatcher alone decides whether and when to retry (STYLE.md, errors in
// three layers).
package apns

import (
	"bytes"
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"

	"github.com/heraldhq/herald/heraldtype"
)

// maxResponseBytes bounds how much of an answer is read. APNs' answers are
// a few dozen bytes.
const maxResponseBytes = 16 << 10

// Client sends messages through APNs. It is safe for concurrent use; create
// one per app (topic and environment) and reuse it: its HTTP/2 connection
// and provider token are shared by all sends.
type Client struct {
	cfg    *resolved
	http   *http.Client
	tokens *tokenSigner
}

// New validates cfg and returns a Client. It does not contact APNs: the
// connection is opened and the first provider token minted by the first
// Send.
func New(cfg Config) (*Client, error) {
	r, err := cfg.validate()
	if err != nil {
		return nil, err
	}
	hc := r.HTTPClient
	if hc == nil {
		tr := http.DefaultTransport.(*http.Transport).Clone()
		// A custom TLS config turns off net/http's automatic HTTP/2
		// unless forced; APNs speaks only HTTP/2.
		tr.ForceAttemptHTTP2 = true
		tr.TLSClientConfig = &tls.Config{RootCAs: r.RootCAs, MinVersion: tls.VersionTLS12}
		// HTTP/2 multiplexes sends over few connections; keep them
		// around between bursts rather than redoing the TLS handshake.
		tr.MaxIdleConnsPerHost = 16
		hc = &http.Client{Transport: tr}
	}
	return &Client{
		cfg:    r,
		http:   hc,
		tokens: newTokenSigner(r.key, r.KeyID, r.TeamID, r.Now),
	}, nil
}

// Topic is the bundle id the Client sends for.
func (c *Client) Topic() string { return c.cfg.Topic }

// Environment is the APNs environment the Client sends to.
func (c *Client) Environment() Environment { return c.cfg.Environment }

// ValidateNotification reports whether n can be sent through APNs (see
// CheckPayload). The root package finds it by type assertion and calls it
// when a notification is accepted.
func (c *Client) ValidateNotification(n *heraldtype.Notification) error {
	return CheckPayload(n)
}

// Send sends m to its device and returns the apns-id APNs acknowledged. A
// failure is a *heraldtype.SendError classified per PROTOCOLS.md; Send
// never retries. Two answers also change the Client's state for the next
// attempt: ExpiredProviderToken drops the provider token (the next Send
// mints a new one), and IdleTimeout closes idle connections (the next Send
// dials a new one).
func (c *Client) Send(ctx context.Context, m *heraldtype.Message) (string, error) {
	if err := checkMessage(m); err != nil {
		return "", err
	}
	ctx, cancel := context.WithTimeout(ctx, c.cfg.Timeout)
	defer cancel()

	tok, err := c.tokens.token()
	if err != nil {
		return "", &heraldtype.SendError{Class: heraldtype.ClassTemporary, Code: codeProviderToken,
			Message: "signing the APNs provider token failed", Err: err}
	}
	n := m.Notification
	now := c.cfg.Now()
	body := appendPayload(make([]byte, 0, estimateSize(n, m.Key)), n, m.Key)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.cfg.baseURL+m.Device.Token, bytes.NewReader(body))
	if err != nil {
		return "", &heraldtype.SendError{Class: heraldtype.ClassPermanent, Code: codeInvalidMessage, Message: "building the request failed", Err: err}
	}
	apnsID := messageUUID(m.Key)
	pushType, priority := pushTypeAndPriority(n)
	// Headers are set as lower-case map keys: HTTP/2 sends them lower-case
	// anyway, and this skips canonicalisation on the hot path.
	req.Header = http.Header{
		"authorization":   {"bearer " + tok},
		"apns-topic":      {c.cfg.Topic},
		"apns-push-type":  {pushType},
		"apns-priority":   {priority},
		"apns-expiration": {strconv.FormatInt(now.Add(c.cfg.DefaultTTL).Unix(), 10)},
		"apns-id":         {apnsID},
		"content-type":    {"application/json"},
	}

	resp, err := c.http.Do(req)
	if err != nil {
		// http.Client errors name the method and URL, never the headers,
		// so the provider token cannot leak through them.
		return "", &heraldtype.SendError{Class: heraldtype.ClassTemporary, Code: codeNetwork, Message: err.Error(), Err: err}
	}
	defer resp.Body.Close()
	respBody, readErr := io.ReadAll(io.LimitReader(resp.Body, maxResponseBytes))
	if resp.StatusCode == http.StatusOK {
		// APNs accepted the message; an unreadable answer must not turn
		// into a retry, which would send it twice.
		if id := resp.Header.Get("apns-id"); id != "" {
			return id, nil
		}
		return apnsID, nil
	}
	if readErr != nil {
		return "", &heraldtype.SendError{Class: heraldtype.ClassTemporary, Code: codeNetwork,
			Message: "reading the error answer: " + readErr.Error(), Err: readErr}
	}
	se := classifyResponse(resp.StatusCode, resp.Header, respBody, c.cfg.Now())
	switch se.Code {
	case ReasonExpiredProviderToken:
		c.tokens.expired(tok)
	case ReasonTooManyProviderTokenUpdates:
		c.tokens.tooManyUpdates()
	case ReasonIdleTimeout:
		// The connection is going away; do not send the retry on it.
		c.http.CloseIdleConnections()
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
		return invalid("message has no idempotency key (messageId)")
	case strings.TrimSpace(m.Device.Token) == "":
		// A device without a token can never be reached: it is as dead
		// as an unregistered one (S0.3 note).
		return &heraldtype.SendError{Class: heraldtype.ClassPermanent, Code: codeInvalidMessage, Message: "device has no push token", TokenInvalid: true}
	case !validDeviceToken(m.Device.Token):
		// APNs would answer BadDeviceToken. Not TokenInvalid: the likely
		// cause is an FCM registration token on an app configured for
		// APNs, a configuration error rather than a dead device.
		return &heraldtype.SendError{Class: heraldtype.ClassPermanent, Code: ReasonBadDeviceToken,
			Message: "device token is not an APNs device token (64 to 200 hex digits); is this app's iOS delivery configured for FCM?"}
	}
	return nil
}

// String describes the Client without its key or provider token.
func (c *Client) String() string {
	return fmt.Sprintf("apns.Client{TeamID:%q KeyID:%q Topic:%q Environment:%q Endpoint:%q}",
		c.cfg.TeamID, c.cfg.KeyID, c.cfg.Topic, c.cfg.Environment, c.cfg.Endpoint)
}

// Format makes every fmt verb print String, so the key and provider token
// the Client holds never reach a log.
func (c *Client) Format(f fmt.State, _ rune) { fmt.Fprint(f, c.String()) }
