// Package outbound is the one way Herald calls an address a user supplied
// (issue 31 item 2): a campaign's content fetch, a rule's audience webhook,
// a Web Push subscription endpoint, and any outbound webhook to come. A
// Guard decides which addresses may be dialled — globally reachable
// unicast ones, plus the networks the operator allowed — and checks the
// address actually dialled on every new connection, after DNS, so a name
// that resolves or rebinds to an internal address is refused as well. A
// Client wraps a guarded transport that follows no redirect, and turns
// every failure into an *Error that says "refused" or "failed" and nothing
// about the network behind it (the detail goes to Herald's log), so a
// caller who can name a URL and read the error learns neither which ports
// answer nor what kind of service listens there.
package outbound

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"strings"
	"syscall"
	"time"
)

// ErrRefused is what a refused dial or redirect wraps.
var ErrRefused = errors.New("refused")

// Guard decides which addresses may be dialled. The zero Guard (or nil)
// allows only public addresses.
type Guard struct {
	allow []netip.Prefix
}

// NewGuard returns a Guard that also admits the allow networks: an
// operator's internal endpoints (callout.allow). The prefixes are used as
// given; ParseAllow checks the configuration's text.
func NewGuard(allow []netip.Prefix) *Guard {
	return &Guard{allow: append([]netip.Prefix(nil), allow...)}
}

// ParseAllow parses the CIDRs of an allow-list. Each must be a network
// address with its prefix length ("10.0.0.0/8", "fd00::/8"); one with host
// bits set ("10.1.2.3/8") is refused, since what it was meant to allow is
// unclear. A single address is written with its full length
// ("10.0.0.5/32").
func ParseAllow(cidrs []string) ([]netip.Prefix, error) {
	out := make([]netip.Prefix, 0, len(cidrs))
	for i, s := range cidrs {
		p, err := netip.ParsePrefix(strings.TrimSpace(s))
		if err != nil {
			return nil, fmt.Errorf("[%d]: %q is not a CIDR network (e.g. 10.0.0.0/8 or fd00::/8)", i, s)
		}
		if p != p.Masked() {
			return nil, fmt.Errorf("[%d]: %q has host bits set; write %s", i, s, p.Masked())
		}
		if p.Addr().Zone() != "" {
			return nil, fmt.Errorf("[%d]: %q carries a zone", i, s)
		}
		out = append(out, p)
	}
	return out, nil
}

// Permits reports whether ip may be dialled: it is public, or it (or the
// IPv4 address an IPv4-mapped, NAT64 or 6to4 form stands for) lies in an
// allowed network.
func (g *Guard) Permits(ip netip.Addr) bool {
	if PublicAddr(ip) {
		return true
	}
	if g == nil || len(g.allow) == 0 {
		return false
	}
	ip = ip.WithZone("")
	inner := embeddedIPv4(ip)
	for _, p := range g.allow {
		if p.Contains(ip) || p.Contains(inner) {
			return true
		}
	}
	return false
}

// dialRefusal is Control's error: the address stays in it for the log,
// and errors.Is(err, ErrRefused) holds.
type dialRefusal struct{ addr string }

func (e *dialRefusal) Error() string {
	return "dial refused: " + e.addr + " is not a public address and not in the allow-list"
}

func (e *dialRefusal) Unwrap() error { return ErrRefused }

// Control is the net.Dialer Control hook: it runs once per new connection
// on the address actually dialled, after DNS resolution, and before the
// connection is attempted, so a refused address gets the same answer
// whether or not anything listens there.
func (g *Guard) Control(_, address string, _ syscall.RawConn) error {
	ap, err := netip.ParseAddrPort(address)
	if err != nil || !g.Permits(ap.Addr()) {
		return &dialRefusal{addr: address}
	}
	return nil
}

// CheckHost refuses, when an address is accepted, the hosts the dial
// guard would refuse anyway, so the person who wrote the URL hears it
// at once: "localhost" and its subdomains, an IP literal that is not
// permitted, and a numeric host only inet_aton reads as an address
// ("2130706433", "0x7f.1", "0177.0.0.1"). A name is otherwise accepted:
// what it resolves to is checked when it is dialled.
func (g *Guard) CheckHost(host string) error {
	h := strings.ToLower(strings.TrimSuffix(strings.Trim(host, "[]"), "."))
	if ip, err := netip.ParseAddr(h); err == nil {
		if !g.Permits(ip) {
			return fmt.Errorf("%s is not a public address (list internal networks in callout.allow)", ip)
		}
		return nil
	}
	switch {
	case h == "":
		return errors.New("has no host")
	case h == "localhost" || strings.HasSuffix(h, ".localhost"):
		if g.Permits(netip.AddrFrom4([4]byte{127, 0, 0, 1})) {
			return nil
		}
		return errors.New("is on localhost (list internal networks in callout.allow)")
	case NumericHost(h):
		return errors.New("has a numeric host that is not a plain IP address")
	}
	return nil
}

// dialer is the guarded dialer's settings: Go's default transport's.
func (g *Guard) dialer() *net.Dialer {
	return &net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second, Control: g.Control}
}

// Transport returns a clone of http.DefaultTransport that dials through
// the guard and uses no proxy from the environment (a proxy would dial the
// target itself, out of the guard's sight). A caller tunes its pool on it.
func (g *Guard) Transport() *http.Transport {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.Proxy = nil
	d := g.dialer()
	tr.DialContext = func(ctx context.Context, network, addr string) (net.Conn, error) {
		return d.DialContext(ctx, network, addr)
	}
	return tr
}

// errRedirect refuses every redirect: following one would send the
// request (a POST body included) to an address nobody checked when the
// URL was accepted.
var errRedirect = fmt.Errorf("%w: the endpoint redirected; redirects are not followed", ErrRefused)

// NoRedirect is an http.Client CheckRedirect that refuses every redirect.
func NoRedirect(*http.Request, []*http.Request) error { return errRedirect }
