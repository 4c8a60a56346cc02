package campaign

import (
	"net/netip"
	"testing"

	"github.com/heraldhq/herald/internal/callout"
	"github.com/heraldhq/herald/internal/outbound"
)

// loopbackCaller is a callout caller whose guard admits loopback, where
// the tests' fetch endpoints (httptest servers) listen.
func loopbackCaller(t testing.TB) *callout.Caller {
	t.Helper()
	c, err := callout.New(callout.Config{Outbound: outbound.New(outbound.Config{
		Allow: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8"), netip.MustParsePrefix("::1/128")}})})
	if err != nil {
		t.Fatal(err)
	}
	return c
}
