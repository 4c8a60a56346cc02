package webpush

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"strings"
	"testing"

	webpushemu "github.com/heraldhq/herald/emulator/webpush"
	"github.com/heraldhq/herald/heraldtype"
)

// TestPublicAddr walks the IANA IPv4 and IPv6 Special-Purpose Address
// Registries: every range that is not globally reachable is refused, at its
// first and last address, also when wrapped in IPv4-mapped, IPv4-compatible,
// NAT64 (64:ff9b::/96) or 6to4 (2002::/16) form (issue 23).
func TestPublicAddr(t *testing.T) {
	t.Parallel()
	refused := []string{
		// IPv4 Special-Purpose Address Registry, Globally Reachable = False.
		"0.0.0.0", "0.255.255.255", // this network (RFC 791)
		"10.0.0.0", "10.255.255.255", // private (RFC 1918)
		"100.64.0.0", "100.127.255.255", // shared / carrier-grade NAT (RFC 6598)
		"127.0.0.0", "127.0.0.1", "127.255.255.255", // loopback
		"169.254.0.0", "169.254.169.254", "169.254.255.255", // link local, cloud metadata
		"172.16.0.0", "172.31.255.255", // private
		"192.0.0.0", "192.0.0.1", "192.0.0.8", "192.0.0.9", "192.0.0.170", "192.0.0.255", // IETF protocol assignments, DS-Lite, NAT64 discovery
		"192.0.2.0", "192.0.2.255", // TEST-NET-1
		"192.88.99.0", "192.88.99.255", // deprecated 6to4 relay anycast (RFC 7526)
		"192.168.0.0", "192.168.255.255", // private
		"198.18.0.0", "198.18.0.1", "198.19.255.255", // benchmarking (RFC 2544)
		"198.51.100.0", "198.51.100.255", // TEST-NET-2
		"203.0.113.0", "203.0.113.255", // TEST-NET-3
		"240.0.0.0", "240.0.0.1", "255.255.255.254", // reserved (class E)
		"255.255.255.255",              // limited broadcast
		"224.0.0.1", "239.255.255.255", // multicast: not unicast at all
		// IPv6 Special-Purpose Address Registry, Globally Reachable = False.
		"::", "::1", // unspecified, loopback
		"::ffff:127.0.0.1", "::ffff:10.0.0.1", "::ffff:169.254.169.254", // IPv4-mapped
		"::127.0.0.1", "::a9fe:a9fe", "::c0a8:1", // IPv4-compatible (deprecated, RFC 4291)
		"64:ff9b::a9fe:a9fe", "64:ff9b::7f00:1", "64:ff9b::a00:1", "64:ff9b::c612:1", // NAT64 well-known prefix around an internal IPv4
		"64:ff9b:1::", "64:ff9b:1::8efa:4a0a", "64:ff9b:1:ffff:ffff:ffff:ffff:ffff", // NAT64 local-use prefix (RFC 8215)
		"100::", "100::ffff:ffff:ffff:ffff", // discard-only (RFC 6666)
		"100:0:0:1::", "100:0:0:1:ffff:ffff:ffff:ffff", // dummy prefix (RFC 9780)
		"2001::", "2001::1", "2001:0:4136:e378:8000:63bf:3fff:fdd2", // Teredo
		"2001:1::1", "2001:2::", "2001:3::", "2001:4:112::", "2001:10::", "2001:20::", "2001:1ff:ffff:ffff:ffff:ffff:ffff:ffff", // rest of IETF protocol assignments (2001::/23)
		"2001:db8::", "2001:db8:ffff:ffff:ffff:ffff:ffff:ffff", // documentation
		"2002:7f00:1::", "2002:a9fe:a9fe::1", "2002:c0a8:101::", "2002::", // 6to4 around an internal IPv4
		"3fff::", "3fff:fff:ffff:ffff:ffff:ffff:ffff:ffff", // documentation (RFC 9637)
		"5f00::", "5f00:ffff::1", // segment routing SIDs (RFC 9602)
		"fc00::", "fd00::1", "fdff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", // unique local
		"fe80::", "fe80::1%eth0", "febf:ffff:ffff:ffff:ffff:ffff:ffff:ffff", // link local
		"fec0::1",            // deprecated site local
		"ff02::1", "ff0e::1", // multicast
		"4000::1", "e000::1", // outside 2000::/3, not allocated for global unicast
	}
	for _, s := range refused {
		if publicAddr(netip.MustParseAddr(s)) {
			t.Errorf("publicAddr(%s) = true, want refused", s)
		}
	}
	allowed := []string{
		"1.1.1.1", "8.8.8.8", "142.250.74.10", "100.63.255.255", "100.128.0.0", "172.15.255.255", "172.32.0.0",
		"192.0.1.0", "192.167.255.255", "192.169.0.0", "198.17.255.255", "198.20.0.0", "223.255.255.255",
		"192.31.196.1", "192.52.193.1", "192.175.48.1", // AS112, AMT, AS112 direct delegation: globally reachable
		"::ffff:142.250.74.10", "64:ff9b::8efa:4a0a", "2002:8efa:4a0a::1", // wrapped public IPv4
		"2a00:1450:4001:80b::200a", "2606:4700:4700::1111", "2620:4f:8000::1", "2001:200::1", "3ffe::1",
	}
	for _, s := range allowed {
		if !publicAddr(netip.MustParseAddr(s)) {
			t.Errorf("publicAddr(%s) = false, want allowed", s)
		}
	}
}

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
