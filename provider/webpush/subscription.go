package webpush

import (
	"context"
	"crypto/ecdh"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
	"syscall"
	"time"

	"github.com/heraldhq/herald/heraldtype"
	"github.com/heraldhq/herald/internal/outbound"
)

// maxEndpointLen bounds a subscription endpoint. Real ones are a few
// hundred bytes; the bound keeps a crafted device from bloating requests.
const maxEndpointLen = 2048

// subscription is a parsed browser push subscription (a web device).
type subscription struct {
	endpoint *url.URL
	// origin is scheme://host[:port] of the endpoint: the VAPID audience
	// (RFC 8292 §2).
	origin string
	uaKey  *ecdh.PublicKey
	auth   []byte
}

// parseSubscription reads a web device's subscription: Token is the
// endpoint URL, WebPushP256DH and WebPushAuth its keys. A malformed one can
// never be delivered to, so its error is permanent and invalidates the
// device (code invalid_subscription).
func (c *Client) parseSubscription(d *heraldtype.Device) (*subscription, error) {
	u, err := checkEndpoint(d.Token, c.cfg.AllowInsecureEndpoints, c.cfg.AllowPrivateEndpoints)
	if err != nil {
		return nil, invalidSubscription(err.Error())
	}
	if d.WebPushP256DH == "" || d.WebPushAuth == "" {
		return nil, invalidSubscription("the subscription has no p256dh and auth keys (a web device delivered by Web Push needs both)")
	}
	key, err := parseP256DH(d.WebPushP256DH)
	if err != nil {
		return nil, invalidSubscription(err.Error())
	}
	auth, err := parseAuth(d.WebPushAuth)
	if err != nil {
		return nil, invalidSubscription(err.Error())
	}
	return &subscription{endpoint: u, origin: u.Scheme + "://" + u.Host, uaKey: key, auth: auth}, nil
}

// ValidateDevice reports whether d's subscription can be delivered to by
// this Client: an endpoint URL it accepts (https, public address, unless
// configured otherwise) and well-formed p256dh and auth keys. It is meant
// for device registration, so a broken subscription is refused with an
// EINVALID *heraldtype.Error naming the field instead of being stored and
// invalidated at its first send.
func (c *Client) ValidateDevice(d *heraldtype.Device) error {
	if d == nil {
		return heraldtype.Errorf(heraldtype.EINVALID, "device is missing")
	}
	if _, err := checkEndpoint(d.Token, c.cfg.AllowInsecureEndpoints, c.cfg.AllowPrivateEndpoints); err != nil {
		return heraldtype.FieldErrorf("token", "web push subscription endpoint: %v", err)
	}
	if _, err := parseP256DH(d.WebPushP256DH); err != nil {
		return heraldtype.FieldErrorf("p256dh", "%v", err)
	}
	if _, err := parseAuth(d.WebPushAuth); err != nil {
		return heraldtype.FieldErrorf("auth", "%v", err)
	}
	return nil
}

func invalidSubscription(msg string) *heraldtype.SendError {
	return &heraldtype.SendError{Class: heraldtype.ClassPermanent, Code: CodeInvalidSubscription, Message: msg, TokenInvalid: true}
}

// The hints of the endpoint refusals name the setting that lifts them,
// as the herald binary's configuration spells it and as the Go Config
// does (issue 21 item 6).
const (
	insecureHint = "for a plain-HTTP test push service set webpush.allow_insecure_endpoints: true (Go: Config.AllowInsecureEndpoints)"
	privateHint  = "for a push service on a private or loopback address set webpush.allow_private_endpoints: true (Go: Config.AllowPrivateEndpoints)"
)

// checkEndpoint validates a subscription endpoint URL. Error messages
// quote the URL: it is an address, not a secret.
func checkEndpoint(raw string, allowHTTP, allowPrivate bool) (*url.URL, error) {
	if raw == "" {
		return nil, errors.New("the device has no subscription endpoint")
	}
	if len(raw) > maxEndpointLen {
		return nil, fmt.Errorf("the endpoint is %d bytes, over %d", len(raw), maxEndpointLen)
	}
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" || u.Opaque != "" {
		return nil, fmt.Errorf("endpoint %q is not an absolute URL", raw)
	}
	switch {
	case u.Scheme == "https":
	case u.Scheme == "http" && allowHTTP:
	case u.Scheme == "http":
		return nil, fmt.Errorf("endpoint %q is not https (%s)", raw, insecureHint)
	default:
		return nil, fmt.Errorf("endpoint %q is not an https URL", raw)
	}
	if u.User != nil {
		return nil, fmt.Errorf("endpoint %q carries user info", raw)
	}
	if u.Fragment != "" {
		return nil, fmt.Errorf("endpoint %q carries a fragment", raw)
	}
	if !allowPrivate {
		host := strings.ToLower(strings.TrimSuffix(u.Hostname(), "."))
		if host == "localhost" || strings.HasSuffix(host, ".localhost") {
			return nil, fmt.Errorf("endpoint %q is on localhost (%s)", raw, privateHint)
		}
		ip, err := netip.ParseAddr(host)
		switch {
		case err == nil && !outbound.PublicAddr(ip):
			return nil, fmt.Errorf("endpoint %q is on a non-public address (%s)", raw, privateHint)
		case err != nil && outbound.NumericHost(host):
			return nil, fmt.Errorf("endpoint %q has a numeric host that is not a plain IP address", raw)
		}
	}
	return u, nil
}

// strictGuard is the dial guard of Web Push: public addresses only. The
// operator's callout.allow does not apply here — anyone who can register
// a web device names these endpoints, so an internal network allowed for
// an audience webhook must not open to them (issue 31 item 2).
var strictGuard = outbound.NewGuard(nil)

// errForbiddenAddress is returned by the dial guard. Send reports it as a
// permanent endpoint_forbidden error without invalidating the device: a
// DNS answer can be wrong for a moment, the subscription is not malformed.
var errForbiddenAddress = errors.New("the endpoint resolves to a non-public address")

// guardDial is outbound's dial guard (the net.Dialer Control hook, run on
// the address actually dialled after DNS), its refusal told as
// errForbiddenAddress.
func guardDial(network, address string, c syscall.RawConn) error {
	if err := strictGuard.Control(network, address, c); err != nil {
		return errForbiddenAddress
	}
	return nil
}

// defaultHTTPClient is the HTTPClient used when Config has none: outbound's
// guarded transport, or with allowPrivate Go's own.
func defaultHTTPClient(allowPrivate bool) *http.Client {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	if !allowPrivate {
		d := &net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second, Control: guardDial}
		tr.DialContext = func(ctx context.Context, network, addr string) (net.Conn, error) {
			return d.DialContext(ctx, network, addr)
		}
	}
	// Sends concentrate on a handful of push services (FCM, Mozilla,
	// Apple, Microsoft); the default of 2 idle connections per host would
	// reconnect constantly.
	tr.MaxIdleConns = 256
	tr.MaxIdleConnsPerHost = 128
	tr.ForceAttemptHTTP2 = true
	return &http.Client{
		Transport: tr,
		// Push services answer, they do not redirect; following a
		// redirect would re-post the message somewhere the endpoint
		// check never saw.
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
}
