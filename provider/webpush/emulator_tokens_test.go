package webpush

import (
	"testing"

	webpushemu "github.com/heraldhq/herald/emulator/webpush"
	"github.com/heraldhq/herald/heraldtype"
)

// A push service answers an endpoint it never issued 404 and a revoked one
// 410 (issue 21 item 5); the Client reads both as a dead subscription, so
// the device is invalidated (S0.3).
func TestEmulatorRefusesEndpointsItNeverIssued(t *testing.T) {
	t.Parallel()
	e := startEmulator(t, webpushemu.Config{})
	c := newTestClient(t, nil)
	m := subscribe(e) // real keys, so only the endpoint is wrong below
	tests := []struct {
		name, endpoint, code string
	}{
		{"made-up id", e.URL() + "/push/never-issued", CodeNotFound},
		{"another path", e.URL() + "/wpush/v2/abc", CodeNotFound},
	}
	for _, tt := range tests {
		bad := *m
		dev := *m.Device
		dev.Token = tt.endpoint
		bad.Device = &dev
		se := sendErr(t, c, &bad)
		if se.Class != heraldtype.ClassPermanent || se.Code != tt.code || !se.TokenInvalid {
			t.Errorf("%s: %+v, want permanent %s, token invalid", tt.name, se, tt.code)
		}
	}
	if err := e.ExpireSubscription(m.Device.Token); err != nil {
		t.Fatal(err)
	}
	if se := sendErr(t, c, m); se.Code != CodeGone || !se.TokenInvalid {
		t.Errorf("revoked subscription: %+v, want %s, token invalid", se, CodeGone)
	}
}
