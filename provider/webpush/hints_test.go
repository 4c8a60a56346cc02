package webpush

import (
	"strings"
	"testing"

	"github.com/heraldhq/herald/heraldtype"
)

// Issue 21 item 6: refusing a plain-HTTP or private endpoint names the
// setting that lifts it as an operator writes it (webpush.allow_…) — not
// only a Go struct field — and the settings do lift it.
func TestEndpointRefusalsNameTheSetting(t *testing.T) {
	pub, priv, err := GenerateVAPIDKeys()
	if err != nil {
		t.Fatal(err)
	}
	strict, err := New(Config{VAPIDPublicKey: pub, VAPIDPrivateKey: priv, Subject: "mailto:ops@example.com"})
	if err != nil {
		t.Fatal(err)
	}
	lax, err := New(Config{VAPIDPublicKey: pub, VAPIDPrivateKey: priv, Subject: "mailto:ops@example.com",
		AllowInsecureEndpoints: true, AllowPrivateEndpoints: true})
	if err != nil {
		t.Fatal(err)
	}
	// A well-formed subscription's keys (p256dh: an uncompressed P-256
	// point; auth: 16 bytes), from a browser-side key of the emulator's
	// kind: the VAPID public key is such a point.
	dev := func(endpoint string) *heraldtype.Device {
		return &heraldtype.Device{Token: endpoint, WebPushP256DH: pub, WebPushAuth: "AAAAAAAAAAAAAAAAAAAAAA"}
	}
	for endpoint, want := range map[string]string{
		"http://push.example.com/sub/1": "webpush.allow_insecure_endpoints",
		"https://127.0.0.1:8082/sub/1":  "webpush.allow_private_endpoints",
		"https://localhost/sub/1":       "webpush.allow_private_endpoints",
	} {
		err := strict.ValidateDevice(dev(endpoint))
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want it to name %s", endpoint, err, want)
		}
		if err := lax.ValidateDevice(dev(endpoint)); err != nil {
			t.Errorf("%s with both settings: %v", endpoint, err)
		}
	}
}
