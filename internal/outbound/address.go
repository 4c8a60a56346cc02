package outbound

import (
	"net/netip"
	"strings"
)

// An address a user supplied may only reach a globally reachable unicast
// address unless the operator allowed its network. The rule is written
// once, here (moved from provider/webpush, issue 23, and generalised for
// issue 31 item 2), and applied twice: to an IP literal or a name when the
// address is accepted (Guard.CheckHost) and to the address actually dialled
// on every new connection (Guard.Control).

// globalUnicast6 is where IANA allocates IPv6 global unicast; anything
// outside it (after the IPv4 forms are unwrapped) is not a public service.
var globalUnicast6 = netip.MustParsePrefix("2000::/3")

// Embedded-IPv4 forms: the address they stand for is the IPv4 address
// inside, so they are judged as that address.
var (
	ipv4Compatible = netip.MustParsePrefix("::/96")        // deprecated, RFC 4291 §2.5.5.1
	nat64WellKnown = netip.MustParsePrefix("64:ff9b::/96") // RFC 6052
	sixToFour      = netip.MustParsePrefix("2002::/16")    // RFC 3056: 2002:AABB:CCDD::/48
)

// refusedPrefixes are the ranges of the IANA IPv4 and IPv6 Special-Purpose
// Address Registries whose "Globally Reachable" is False (or N/A), plus
// IPv4 multicast. IPv6 ranges outside 2000::/3 (loopback, discard, dummy,
// SRv6 SIDs, unique and link local, multicast) are refused by
// globalUnicast6 already. A few globally reachable anycast blocks inside
// 192.0.0.0/24 and 2001::/23 (PCP, TURN, AMT, AS112, ORCHIDv2) are refused
// with their parent block: no service Herald calls lives there.
var refusedPrefixes = func() []netip.Prefix {
	var ps []netip.Prefix
	for _, s := range []string{
		"0.0.0.0/8",       // "this network" (RFC 791)
		"10.0.0.0/8",      // private (RFC 1918)
		"100.64.0.0/10",   // shared address space, carrier-grade NAT (RFC 6598); clouds put internal services here
		"127.0.0.0/8",     // loopback
		"169.254.0.0/16",  // link local, cloud metadata
		"172.16.0.0/12",   // private
		"192.0.0.0/24",    // IETF protocol assignments, DS-Lite, NAT64 discovery (RFC 6890)
		"192.0.2.0/24",    // TEST-NET-1
		"192.88.99.0/24",  // deprecated 6to4 relay anycast (RFC 7526)
		"192.168.0.0/16",  // private
		"198.18.0.0/15",   // benchmarking (RFC 2544)
		"198.51.100.0/24", // TEST-NET-2
		"203.0.113.0/24",  // TEST-NET-3
		"224.0.0.0/4",     // multicast
		"240.0.0.0/4",     // reserved, and 255.255.255.255 limited broadcast
		"64:ff9b:1::/48",  // NAT64 local use (RFC 8215): the IPv4 inside is local by definition
		"2001::/23",       // IETF protocol assignments, Teredo, benchmarking, ORCHID
		"2001:db8::/32",   // documentation
		"3fff::/20",       // documentation (RFC 9637)
		"fec0::/10",       // deprecated site local (outside 2000::/3; listed for the reader)
	} {
		ps = append(ps, netip.MustParsePrefix(s))
	}
	return ps
}()

// PublicAddr reports whether ip is a globally reachable unicast address. IPv4-mapped, IPv4-compatible, NAT64 (64:ff9b::/96)
// and 6to4 addresses are judged as the IPv4 address inside them: a
// translator or relay would deliver to it, so [64:ff9b::a9fe:a9fe] is
// 169.254.169.254. It allocates nothing, so it is cheap on every dial.
func PublicAddr(ip netip.Addr) bool {
	ip = embeddedIPv4(ip.WithZone(""))
	if !ip.IsValid() {
		return false
	}
	if ip.Is6() && !globalUnicast6.Contains(ip) {
		return false
	}
	for _, p := range refusedPrefixes {
		if p.Contains(ip) {
			return false
		}
	}
	return true
}

// embeddedIPv4 returns the IPv4 address an IPv6 address stands for, or ip
// itself.
func embeddedIPv4(ip netip.Addr) netip.Addr {
	if !ip.Is6() {
		return ip
	}
	b := ip.As16()
	switch {
	case ip.Is4In6():
		return ip.Unmap()
	case ipv4Compatible.Contains(ip), nat64WellKnown.Contains(ip):
		return netip.AddrFrom4([4]byte(b[12:16]))
	case sixToFour.Contains(ip):
		return netip.AddrFrom4([4]byte(b[2:6]))
	}
	return ip
}

// NumericHost reports whether host, which is not an IP address netip
// parses, would still be read as one by some resolver: "2130706433",
// "127.1", "0x7f.1" and "0177.0.0.1" are 127.0.0.1 to inet_aton. No public
// DNS name ends in an all-digit or hexadecimal label, so refusing them costs
// nothing; the dial guard would catch them anyway, but the check when an
// address is accepted should say so first.
func NumericHost(host string) bool {
	last := host[strings.LastIndexByte(host, '.')+1:]
	if last == "" {
		return false
	}
	if strings.HasPrefix(last, "0x") {
		return true
	}
	for _, r := range last {
		if r < '0' || r > '9' {
			return false
		}
	}
	return true
}
