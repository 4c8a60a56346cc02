// Package webpush sends push notifications to browsers with the Web Push
// protocol — RFC 8030 (delivery), RFC 8291 (aes128gcm payload encryption)
// and RFC 8292 (VAPID) — written on the standard library. Its emulator, for
// `herald emulate webpush` and tests, is emulator/webpush.
//
// A web device's Token is its subscription endpoint URL; WebPushP256DH and
// WebPushAuth hold the subscription's keys. The Client only classifies
// failures into *heraldtype.SendError; the dispatcher alone decides whether
// and when to retry (STYLE.md, errors in three layers).
package webpush

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/heraldhq/herald/heraldtype"
)

// maxResponseBytes bounds how much of an answer is read: push services
// answer in a few hundred bytes; only the start of an error page matters.
const maxResponseBytes = 16 << 10

// maxLocationLen bounds the provider message id taken from Location;
// real push services answer with well under 300 bytes.
const maxLocationLen = 512

// Client sends messages to browser push subscriptions. It is safe for
// concurrent use; create one per VAPID key pair and reuse it.
type Client struct {
	cfg    *resolved
	http   *http.Client
	signer *vapidSigner
}

// New validates cfg and returns a Client. It contacts nobody.
func New(cfg Config) (*Client, error) {
	r, err := cfg.validate()
	if err != nil {
		return nil, err
	}
	hc := r.HTTPClient
	if hc == nil {
		hc = defaultHTTPClient(r.AllowPrivateEndpoints)
	}
	return &Client{cfg: r, http: hc, signer: newVAPIDSigner(r.key, r.publicKey, r.Subject, r.Now)}, nil
}

// PublicKey is the VAPID public key (base64url): the applicationServerKey
// a web app passes to PushManager.subscribe.
func (c *Client) PublicKey() string { return c.cfg.VAPIDPublicKey }

// VAPIDPublicKey is PublicKey under the name of the root package's
// herald.VAPIDKeyer capability: GET /v1/webpush/vapid-public-key answers
// it.
func (c *Client) VAPIDPublicKey() string { return c.cfg.VAPIDPublicKey }

// ValidateNotification reports whether n fits a Web Push message (see
// CheckPayload). The root package finds it by type assertion and calls it
// when a notification is accepted.
func (c *Client) ValidateNotification(n *heraldtype.Notification) error {
	return CheckPayload(n)
}

// Send encrypts m for its device's subscription and posts it to the
// subscription's push service. It returns the push service's message
// resource (the Location header, RFC 8030 §5), or m.Key if the service
// gave none. A failure is a *heraldtype.SendError classified per
// PROTOCOLS.md; Send never retries.
func (c *Client) Send(ctx context.Context, m *heraldtype.Message) (string, error) {
	if err := checkMessage(m); err != nil {
		return "", err
	}
	sub, err := c.parseSubscription(m.Device)
	if err != nil {
		return "", err
	}
	ctx, cancel := context.WithTimeout(ctx, c.cfg.Timeout)
	defer cancel()
	req, err := c.newRequest(ctx, m, sub)
	if err != nil {
		return "", err
	}
	resp, err := c.http.Do(req)
	if err != nil {
		if errors.Is(err, errForbiddenAddress) {
			return "", &heraldtype.SendError{Class: heraldtype.ClassPermanent, Code: CodeEndpointForbidden,
				Message: err.Error() + " (" + privateHint + ")", Err: err}
		}
		// http.Client errors name the method and URL, never the headers,
		// so the VAPID token cannot leak through them.
		return "", &heraldtype.SendError{Class: heraldtype.ClassTemporary, Code: codeNetwork, Message: err.Error(), Err: err}
	}
	defer resp.Body.Close()
	body, readErr := io.ReadAll(io.LimitReader(resp.Body, maxResponseBytes))
	if resp.StatusCode/100 == 2 {
		// Accepted; an unreadable answer must not turn into a retry,
		// which would deliver the message twice.
		// The endpoint's host is chosen by whoever registered the
		// device, so its Location is bounded before it is stored.
		if loc := resp.Header.Get("Location"); loc != "" && len(loc) <= maxLocationLen {
			return loc, nil
		}
		return m.Key, nil
	}
	if readErr != nil {
		return "", &heraldtype.SendError{Class: heraldtype.ClassTemporary, Code: codeNetwork,
			Message: "reading the error answer: " + readErr.Error(), Err: readErr}
	}
	return "", classifyResponse(resp.StatusCode, resp.Header, body, c.cfg.Now())
}

// newRequest builds the encrypted, VAPID-signed RFC 8030 push request.
func (c *Client) newRequest(ctx context.Context, m *heraldtype.Message, sub *subscription) (*http.Request, error) {
	n := m.Notification
	plain, err := encodePayload(n, m.Key)
	if err != nil {
		return nil, &heraldtype.SendError{Class: heraldtype.ClassPermanent, Code: codeInvalidMessage, Message: "encoding the payload: " + err.Error(), Err: err}
	}
	if len(plain) > MaxPlaintextBytes {
		return nil, &heraldtype.SendError{Class: heraldtype.ClassPermanent, Code: CodePayloadTooLarge,
			Message: fmt.Sprintf("payload is %d bytes, over the %d bytes one Web Push message carries", len(plain), MaxPlaintextBytes)}
	}
	body, err := encrypt(plain, sub.uaKey, sub.auth)
	if err != nil {
		// Only the system random source can fail here; it may recover.
		return nil, &heraldtype.SendError{Class: heraldtype.ClassTemporary, Code: codeEncrypt, Message: "encrypting the payload: " + err.Error(), Err: err}
	}
	auth, err := c.signer.header(sub.origin)
	if err != nil {
		return nil, &heraldtype.SendError{Class: heraldtype.ClassTemporary, Code: codeVAPIDSign, Message: "signing the VAPID token failed", Err: err}
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, sub.endpoint.String(), bytes.NewReader(body))
	if err != nil {
		return nil, invalidSubscription("building the request: " + err.Error())
	}
	h := req.Header
	h["Ttl"] = []string{strconv.FormatInt(int64(c.cfg.DefaultTTL/time.Second), 10)}
	h["Urgency"] = []string{urgency(n.Priority)}
	h["Content-Encoding"] = []string{"aes128gcm"}
	h["Content-Type"] = []string{"application/octet-stream"}
	h["Authorization"] = []string{auth}
	if c.cfg.TopicDataKey != "" {
		if v := n.Data[c.cfg.TopicDataKey]; v != "" {
			h["Topic"] = []string{topicFor(v)}
		}
	}
	return req, nil
}

// checkMessage rejects a message that cannot be sent by Web Push at all.
// A device of another platform is a routing mistake, not a dead device, so
// it is not invalidated.
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
	case m.Device.Platform != heraldtype.PlatformWeb:
		return invalid(fmt.Sprintf("device platform %q is not web: route only web devices to the webpush provider", m.Device.Platform))
	}
	return nil
}

// String describes the Client without its private key.
func (c *Client) String() string {
	return fmt.Sprintf("webpush.Client{VAPIDPublicKey:%q Subject:%q}", c.cfg.VAPIDPublicKey, c.cfg.Subject)
}

// Format makes every fmt verb print String, so the private key the Client
// holds never reaches a log.
func (c *Client) Format(f fmt.State, _ rune) { fmt.Fprint(f, c.String()) }

// ThrottleScope names the push service of job's subscription — the host
// (and port) of its endpoint — so the dispatcher throttles each push
// service on its own 429s (dispatch.ThrottleScoper): an endpoint that
// always answers 429 slows the deliveries to its own host, never the
// other push services' (issue 23). It reads the host without a full URL
// parse (it runs per send); an endpoint without one gives "", the
// provider-wide throttle, and fails at Send anyway.
func (c *Client) ThrottleScope(job *heraldtype.Job) string {
	if job.Device == nil {
		return ""
	}
	return endpointHost(job.Device.Token)
}

// endpointHost is the lower-cased host[:port] of an endpoint URL, "" if it
// has none.
func endpointHost(endpoint string) string {
	_, rest, ok := strings.Cut(endpoint, "://")
	if !ok {
		return ""
	}
	if i := strings.IndexAny(rest, "/?#"); i >= 0 {
		rest = rest[:i]
	}
	if i := strings.LastIndexByte(rest, '@'); i >= 0 {
		rest = rest[i+1:]
	}
	return strings.ToLower(rest)
}
