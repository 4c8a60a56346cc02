package webpush

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	webpushemu "github.com/heraldhq/herald/emulator/webpush"
	"github.com/heraldhq/herald/heraldtype"
)

// TestValidateDeviceInternalEndpoint: the endpoints of issue 23 are refused
// at registration with a 400 naming the token, and at dial time.
func TestValidateDeviceInternalEndpoint(t *testing.T) {
	t.Parallel()
	strict, err := New(Config{VAPIDPublicKey: testKeys()[0], VAPIDPrivateKey: testKeys()[1], Subject: testSubject})
	if err != nil {
		t.Fatal(err)
	}
	_, p, a := startEmulator(t, webpushemu.Config{}).NewSubscription()
	for _, host := range []string{
		"[64:ff9b::a9fe:a9fe]", "[64:ff9b::169.254.169.254]", "[64:ff9b:1::a9fe:a9fe]", "[2002:7f00:1::]",
		"[::127.0.0.1]", "[::ffff:127.0.0.1]", "198.18.0.1", "240.0.0.1", "192.0.0.1", "[fe80::1%25eth0]",
		"2130706433", "0x7f.1", "127.1", "0177.0.0.1", "169.254.169.254.", "[::]", "0.0.0.0",
	} {
		ep := "https://" + host + "/push/abc"
		err := strict.ValidateDevice(&heraldtype.Device{Platform: heraldtype.PlatformWeb, Token: ep, WebPushP256DH: p, WebPushAuth: a})
		var he *heraldtype.Error
		if !errors.As(err, &he) || he.Code != heraldtype.EINVALID || he.Field != "token" {
			t.Errorf("%s registered: %v", ep, err)
		}
	}
	for _, ep := range []string{"https://fcm.googleapis.com/fcm/send/x", "https://updates.push.services.mozilla.com/wpush/v2/x",
		"https://[2a00:1450:4001:80b::200a]/x", "https://142.250.74.10/x", "https://[64:ff9b::8efa:4a0a]/x", "https://push.example:8443/x"} {
		if err := strict.ValidateDevice(&heraldtype.Device{Platform: heraldtype.PlatformWeb, Token: ep, WebPushP256DH: p, WebPushAuth: a}); err != nil {
			t.Errorf("%s refused: %v", ep, err)
		}
	}
	for _, addr := range []string{"[64:ff9b::a9fe:a9fe]:443", "[2002:7f00:1::]:443", "[::127.0.0.1]:443", "198.18.0.1:443", "240.0.0.1:443", "192.0.0.1:443"} {
		if err := guardDial("tcp", addr, nil); err == nil || !strings.Contains(err.Error(), "non-public") {
			t.Errorf("guardDial(%s) = %v, want refused", addr, err)
		}
	}
}

// TestDialGuardRebinding: a public-looking name that resolves (or rebinds)
// to an internal address is refused when it is dialled, as a permanent
// endpoint_forbidden that keeps the device, and the answer is the same
// whether or not anything listens there, so it is no oracle.
func TestDialGuardRebinding(t *testing.T) {
	t.Parallel()
	e := startEmulator(t, webpushemu.Config{})
	m := subscribe(e)
	u, err := url.Parse(m.Device.Token)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := ln.Addr().String()
	ln.Close()
	m.Device.Token = strings.Replace(m.Device.Token, u.Host, "push.example", 1)
	for name, target := range map[string]string{"listening": u.Host, "closed": closed} {
		cfg := testConfig(nil)
		cfg.AllowPrivateEndpoints = false
		c, err := New(cfg)
		if err != nil {
			t.Fatal(err)
		}
		// push.example "resolves" to target: the default transport's
		// guarded dialer, handed the resolved address.
		d := &net.Dialer{Control: guardDial}
		c.http.Transport.(*http.Transport).DialContext = func(ctx context.Context, network, _ string) (net.Conn, error) {
			return d.DialContext(ctx, network, target)
		}
		se := sendErr(t, c, m)
		if se.Class != heraldtype.ClassPermanent || se.Code != CodeEndpointForbidden || se.TokenInvalid ||
			!strings.Contains(se.Message, "non-public address") || strings.Contains(se.Message, "refused") {
			t.Errorf("%s: %+v, want permanent %s", name, se, CodeEndpointForbidden)
		}
	}
	if n := len(e.Messages()); n != 0 {
		t.Errorf("%d messages reached the internal host", n)
	}
}

// TestRedirectNotFollowed: a push service's redirect is an answer, never a
// second request to an address the endpoint check did not see.
func TestRedirectNotFollowed(t *testing.T) {
	t.Parallel()
	e := startEmulator(t, webpushemu.Config{})
	target := subscribe(e).Device.Token
	redirector := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, target, http.StatusTemporaryRedirect)
	}))
	t.Cleanup(redirector.Close)
	m := subscribe(e)
	m.Device.Token = redirector.URL + "/push/x"
	se := sendErr(t, newTestClient(t, nil), m)
	if se.Class != heraldtype.ClassPermanent || se.Code != "http_307" {
		t.Errorf("redirect: %+v", se)
	}
	if n := len(e.Messages()); n != 0 {
		t.Errorf("the redirect was followed: %d messages", n)
	}
}
