package herald

import "net/netip"

// loopbackNets is the callout allow-list the tests' endpoints, httptest
// servers on loopback, need (issue 31 item 2).
var loopbackNets = []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8"), netip.MustParsePrefix("::1/128")}
