package outbound

import (
	"net/netip"
	"testing"
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
		if PublicAddr(netip.MustParseAddr(s)) {
			t.Errorf("PublicAddr(%s) = true, want refused", s)
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
		if !PublicAddr(netip.MustParseAddr(s)) {
			t.Errorf("PublicAddr(%s) = false, want allowed", s)
		}
	}
}
